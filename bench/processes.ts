/**
 * The bench's targets, each in its own process (`bench/target.ts`), and the CPU time of processes
 * (`/proc/<pid>/stat`).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { RequestSpec } from './generators.ts';

const TARGET_SCRIPT = fileURLToPath(new URL('./target.ts', import.meta.url));
/** `BENCH_PROFILE`: where the targets write their CPU profiles (none when unset). */
export const PROFILE_DIR = process.env.BENCH_PROFILE || undefined;
export const TSX_LOADER = import.meta.resolve('tsx');
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;

// ---------------------------------------------------------------------------------------------
// Targets

export interface Target {
  label: string;
  origin: string;
  keys: Record<string, string>;
  /** Processes whose CPU counts for this target. */
  pids: number[];
  child: ChildProcess;
  /** Requests the generator completed on this target, warm-up included (for `BENCH_PROFILE`). */
  served: number;
}

/** Starts `bench/target.ts` with `env` and reads its `{origin, keys, pids}` line. */
export function startTarget(label: string, env: Record<string, string>, profileAs?: string): Promise<Target> {
  const profile =
    PROFILE_DIR !== undefined && profileAs !== undefined ? ['--cpu-prof', '--cpu-prof-dir', join(PROFILE_DIR, profileAs)] : [];
  const child = spawn(process.execPath, [...profile, '--import', TSX_LOADER, TARGET_SCRIPT], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', REDIS_URL: '', INSTANCES: '1', RATELIMIT_FIELDS: 'off', ...env },
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label}: no address within 60 s`)), 60_000);
    child.once('exit', (code) => reject(new Error(`${label} exited with ${code}`)));
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    void lines.next().then(({ value }) => {
      clearTimeout(timer);
      const info = JSON.parse(value as string) as Omit<Target, 'label' | 'child' | 'served'>;
      if (!/^https?:\/\/127\.0\.0\.1:/.test(info.origin)) reject(new Error(`${label}: not a loopback address`));
      resolve({ label, child, served: 0, ...info });
    });
  });
}

export function stopTarget(target: Target): Promise<void> {
  return new Promise((resolve) => {
    if (target.child.exitCode !== null) return resolve();
    const timer = setTimeout(() => target.child.kill('SIGKILL'), 10_000);
    target.child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    target.child.stdin!.end();
    target.child.kill('SIGTERM');
  });
}

/** User + system CPU time of `pids` so far, in µs (from `/proc/<pid>/stat`). */
export function cpuMicros(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      /* gone */
    }
  }
  return (ticks * 1e6) / CLOCK_TICKS;
}

const SAMPLE_HEADERS = ['Content-Type', 'Content-Length', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After'];

/** The reference's response to `request` as a bare target's environment (over https with the test CA for an https target). */
export async function sampleOf(
  target: Target,
  request: RequestSpec,
  readBody: boolean,
  extraEnv: Record<string, string> = {},
): Promise<Record<string, string>> {
  const url = new URL(`${target.origin}${request.path}`);
  const headers: Record<string, string> = {
    ...(request.key ? { authorization: `Bearer ${target.keys[request.key]}` } : {}),
    ...(request.body ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(request.body)) } : {}),
  };
  const ca = url.protocol === 'https:' ? readFileSync(new URL('../tests/fixtures/tls/ca.pem', import.meta.url)) : undefined;
  const response = await new Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method: request.method, headers, ca }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error('no answer to the sample request within 10 s')));
    req.end(request.body);
  });
  if (response.status !== request.status)
    throw new Error(`${target.label} answered ${response.status} to the sample request, expected ${request.status}`);
  const sampleHeaders: string[] = [];
  for (const name of SAMPLE_HEADERS) {
    const value = response.headers[name.toLowerCase()];
    if (typeof value === 'string') sampleHeaders.push(name, value);
  }
  const sample = { status: response.status, headers: sampleHeaders, body: response.body.toString('base64'), readBody };
  return { BENCH_TARGET: 'bare', BENCH_SAMPLE: JSON.stringify(sample), ...extraEnv };
}
