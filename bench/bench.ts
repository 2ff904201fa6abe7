/**
 * `npm run bench`: throughput of the reference server's hot path against a bare `node:http` server.
 *
 * Both targets (`bench/target.ts`) run in their own child process on loopback; the bare one returns
 * the same bytes as the reference `GET /v1/inventory` (same body and header names). They are loaded
 * in turn, in alternating rounds, by the same autocannon settings, with the reference server
 * authenticating a bearer key (`load`: enterprise plan, limits never reached) and counting every
 * request against its limits. Prints req/s, p50 and p99 latency per server and round, the ratio
 * per round and the median ratio. Bounded: rounds × 2 × duration plus warm-up.
 *
 * Throughput on a shared 2-core machine is noisy (other processes steal the CPU from either side),
 * so each run also reads the target's own CPU time and prints CPU µs per request; the ratio of
 * those (bare / reference) is the same figure measured without the noise of other processes.
 *
 * Environment: BENCH_CONNECTIONS (10), BENCH_DURATION (seconds per run, 2), BENCH_ROUNDS (15),
 * BENCH_WARMUP (seconds per server, 2), BENCH_PIPELINING (1). Many short alternating runs keep the
 * two measurements of a round close in time, so a change in the machine's load hits both alike.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

interface Target {
  name: 'reference' | 'bare';
  url: string;
  authorization: string;
  child: ChildProcess;
  lines: AsyncIterator<string>;
}

interface RunResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  cpuPerRequest: number;
}

const num = (name: string, fallback: number): number => {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
};

const settings = {
  connections: num('BENCH_CONNECTIONS', 10),
  duration: num('BENCH_DURATION', 2),
  rounds: num('BENCH_ROUNDS', 15),
  warmup: num('BENCH_WARMUP', 2),
  pipelining: num('BENCH_PIPELINING', 1),
};

const targetScript = fileURLToPath(new URL('./target.ts', import.meta.url));

function startTarget(name: Target['name'], extraEnv: Record<string, string> = {}): Promise<Target> {
  const child = spawn(process.execPath, ['--import', 'tsx', targetScript, name], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...extraEnv },
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name}: no address within 20 s`)), 20_000);
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    void lines.next().then(({ value }) => {
      clearTimeout(timer);
      const { url, authorization } = JSON.parse(value as string) as { url: string; authorization: string };
      if (!url.startsWith('http://127.0.0.1:')) reject(new Error(`${name}: not a loopback address`));
      resolve({ name, url, authorization, child, lines });
    });
  });
}

async function cpuMicros(target: Target): Promise<number> {
  target.child.stdin!.write('cpu\n');
  const { value } = await target.lines.next();
  return (JSON.parse(value as string) as { cpuMicros: number }).cpuMicros;
}

async function load(target: Target, duration: number): Promise<RunResult> {
  const cpuBefore = await cpuMicros(target);
  const result = await autocannon({
    url: target.url,
    connections: settings.connections,
    pipelining: settings.pipelining,
    duration,
    headers: { authorization: target.authorization },
  });
  const cpu = (await cpuMicros(target)) - cpuBefore;
  return {
    cpuPerRequest: cpu / Math.max(1, result.requests.total),
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const fmt = (r: RunResult): string =>
  `${r.rps.toFixed(0).padStart(8)} req/s  p50 ${String(r.p50).padStart(3)} ms  p99 ${String(r.p99).padStart(3)} ms  ` +
  `cpu ${r.cpuPerRequest.toFixed(1).padStart(5)} µs/req` +
  (r.errors || r.non2xx ? `  (errors ${r.errors}, non-2xx ${r.non2xx})` : '');

async function main(): Promise<void> {
  console.log(
    `bench: GET /v1/inventory, ${settings.connections} connections, pipelining ${settings.pipelining}, ` +
      `${settings.duration} s per run, ${settings.rounds} rounds (alternating), warm-up ${settings.warmup} s`,
  );
  const reference = await startTarget('reference');
  const sample = await fetch(reference.url, { headers: { authorization: reference.authorization } });
  if (sample.status !== 200) throw new Error(`reference answered ${sample.status}`);
  const headers: string[] = [];
  for (const name of ['Content-Type', 'Content-Length', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']) {
    headers.push(name, sample.headers.get(name) ?? '');
  }
  const body = Buffer.from(await sample.arrayBuffer()).toString('base64');
  const targets = [reference, await startTarget('bare', { BENCH_SAMPLE: JSON.stringify({ body, headers }) })];
  try {
    for (const t of targets) await load(t, settings.warmup);
    const ratios: number[] = [];
    const cpuRatios: number[] = [];
    const totals: Record<string, RunResult[]> = { reference: [], bare: [] };
    for (let round = 1; round <= settings.rounds; round++) {
      const order = round % 2 ? targets : [...targets].reverse();
      const results: Record<string, RunResult> = {};
      for (const t of order) results[t.name] = await load(t, settings.duration);
      for (const name of ['reference', 'bare']) {
        totals[name].push(results[name]);
        console.log(`round ${round}  ${name.padEnd(9)} ${fmt(results[name])}`);
      }
      if (results.reference.non2xx || results.reference.errors) throw new Error('the reference server answered non-2xx or failed: not a valid run');
      const ratio = results.reference.rps / results.bare.rps;
      ratios.push(ratio);
      const cpuRatio = results.bare.cpuPerRequest / results.reference.cpuPerRequest;
      cpuRatios.push(cpuRatio);
      console.log(`round ${round}  ratio reference/bare ${ratio.toFixed(3)} req/s, ${cpuRatio.toFixed(3)} by CPU per request`);
    }
    for (const name of ['reference', 'bare']) {
      const runs = totals[name];
      console.log(
        `${name.padEnd(9)} median ${median(runs.map((r) => r.rps)).toFixed(0)} req/s, ` +
          `p50 ${median(runs.map((r) => r.p50))} ms, p99 ${median(runs.map((r) => r.p99))} ms`,
      );
    }
    console.log(`median ratio reference/bare: ${median(ratios).toFixed(3)} by req/s (target >= 0.85)`);
    console.log(`median ratio reference/bare: ${median(cpuRatios).toFixed(3)} by CPU per request (bare µs/req ÷ reference µs/req)`);
  } finally {
    for (const t of targets) {
      t.child.stdin!.end();
      t.child.kill('SIGTERM');
    }
  }
}

main().catch((error) => {
  console.error(`bench: ${(error as Error).message}`);
  process.exitCode = 1;
});
