/**
 * The load generators the bench drives: autocannon (in this process or worker threads), `wrk`
 * (when installed), and the harness's own load engine (`suites/load/saturate.ts`, in a process of
 * its own: bench/ may not import the suites). Each answers what one run measured.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

/** Connections and pipelining of every generator's runs. */
export interface GeneratorSettings {
  connections: number;
  pipelining: number;
}

export interface RequestSpec {
  method: 'GET' | 'PATCH';
  path: string;
  /** Key name (`load`, `enterprise`) sent as a bearer token, if any. */
  key?: string;
  body?: string;
  /** Send `Connection: close` (a new connection per request). */
  close?: boolean;
  /** The status every response must have for the run to count. */
  status: number;
}

/** What one generator run measured. */
export interface Generated {
  rps: number;
  p50: number;
  p99: number;
  total: number;
  statuses: Record<string, number>;
  errors: number;
}

/** autocannon in this process (or `workers` threads). */
export async function autocannonRun(
  url: string,
  request: RequestSpec,
  authorization: string | undefined,
  duration: number,
  workers: number,
  settings: GeneratorSettings,
): Promise<Generated> {
  const headers: Record<string, string> = {};
  if (authorization) headers.authorization = authorization;
  if (request.body) headers['content-type'] = 'application/json';
  if (request.close) headers.connection = 'close';
  const result = await autocannon({
    url,
    method: request.method,
    body: request.body,
    headers,
    connections: settings.connections,
    pipelining: settings.pipelining,
    duration,
    ...(workers > 0 ? { workers } : {}),
  });
  const statuses: Record<string, number> = {};
  for (const [code, stat] of Object.entries(
    (result as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {},
  )) {
    statuses[code] = stat.count;
  }
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    statuses,
    errors: result.errors + result.timeouts,
  };
}

/** A wrk script that takes method, body and Authorization from the environment (so no key is ever written to a file). */
const WRK_SCRIPT = (() => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-wrk-'));
  const file = join(dir, 'request.lua');
  writeFileSync(
    file,
    [
      'wrk.method = os.getenv("BENCH_METHOD") or "GET"',
      'local body = os.getenv("BENCH_BODY")',
      'if body and body ~= "" then wrk.body = body; wrk.headers["Content-Type"] = "application/json" end',
      'local auth = os.getenv("BENCH_AUTH")',
      'if auth and auth ~= "" then wrk.headers["Authorization"] = auth end',
      'if os.getenv("BENCH_CLOSE") == "1" then wrk.headers["Connection"] = "close" end',
    ].join('\n'),
  );
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return file;
})();

export const WRK_INSTALLED = spawnSync('wrk', ['--version']).error === undefined;

/** `wrk -t<threads>` (C, event loop per thread); statuses are `2xx/3xx` and `other` (wrk counts no more). */
export function wrkRun(
  url: string,
  request: RequestSpec,
  authorization: string | undefined,
  duration: number,
  threads: number,
  settings: GeneratorSettings,
): Promise<Generated> {
  const args = [`-t${threads}`, `-c${settings.connections}`, `-d${duration}s`, '--latency', '-s', WRK_SCRIPT, url];
  const env = {
    ...process.env,
    BENCH_METHOD: request.method,
    BENCH_BODY: request.body ?? '',
    BENCH_AUTH: authorization ?? '',
    BENCH_CLOSE: request.close ? '1' : '',
  };
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => {
      if (code !== 0) return reject(new Error(`wrk exited with ${code}: ${out.trim()}`));
      const ms = (label: string): number => {
        const m = new RegExp(`^\\s*${label}%\\s+([\\d.]+)(us|ms|s)`, 'm').exec(out);
        if (!m) return NaN;
        return Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1);
      };
      const total = Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN);
      const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
      const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
      resolve({
        rps: Number(/Requests\/sec:\s*([\d.]+)/.exec(out)?.[1] ?? NaN),
        p50: Math.round(ms('50') * 10) / 10,
        p99: Math.round(ms('99') * 10) / 10,
        total,
        statuses: { '2xx/3xx': total - non2xx, other: non2xx },
        // A read error is wrk seeing a connection closed by the server, as after a 413; none is expected here.
        errors: socket ? Number(socket[1]) + Number(socket[2]) + Number(socket[3]) + Number(socket[4]) : 0,
      });
    });
  });
}

/** The harness's load engine in a process of its own (`suites/load/saturate.ts`): one closed-model run per call. */
export interface EngineGenerator {
  run(
    url: string,
    authorization: string | undefined,
    duration: number,
    connections: number,
    caFile?: string,
  ): Promise<Generated & { cpuUs: number }>;
  /** Ends the engine's process; resolves once it has exited (its profile written). */
  stop(): Promise<void>;
}

const SATURATE_SCRIPT = fileURLToPath(new URL('../suites/load/saturate.ts', import.meta.url));

/**
 * Starts the engine of this checkout, or of `script` (another checkout's `suites/load/saturate.ts`,
 * to compare); with `profileDir`, under `node --cpu-prof`, its profile written there when it stops.
 */
export function startEngine(script = SATURATE_SCRIPT, profileDir?: string): EngineGenerator {
  const profile = profileDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', profileDir];
  const child = spawn(process.execPath, [...profile, '--import', import.meta.resolve('tsx'), script], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  return {
    async run(url, authorization, duration, connections, caFile) {
      child.stdin!.write(`${JSON.stringify({ url, durationS: duration, connections, authorization, caFile })}\n`);
      const { value, done } = await lines.next();
      if (done) throw new Error('the load engine exited');
      const r = JSON.parse(value as string) as {
        requests: number;
        durationS: number;
        cpuUs: number;
        statusCodes: Record<string, number>;
        errors: number;
        p50: number;
        p99: number;
      };
      return {
        rps: r.requests / r.durationS,
        p50: r.p50,
        p99: r.p99,
        total: r.requests,
        statuses: r.statusCodes,
        errors: r.errors,
        cpuUs: r.cpuUs,
      };
    },
    stop: () => {
      child.stdin!.end();
      return exited;
    },
  };
}
