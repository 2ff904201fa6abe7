/**
 * `npm run bench`: the reference server's hot paths measured side by side, in one run.
 *
 * Each scenario pairs two targets (`bench/target.ts`, each in its own process on loopback) and
 * loads them in turn, in alternating rounds, with the same autocannon settings; it prints req/s,
 * p50/p99, the CPU time the target's processes spent per request, the ratio per round and the
 * median ratios with their 95 % intervals (bench/stats.ts); a goal reads `met` only when the whole
 * interval is at or above it, `not met` when it is below, else `cannot tell`. Scenarios
 * (`BENCH_SCENARIOS`, comma-separated; default all):
 *
 * - `engine`, `engine-tls`: the harness's load engine against autocannon and `wrk` at saturation
 *   (bench/saturation.ts), the ratio and its interval, by req/s and by the generator's CPU per request;
 * - `list`: `GET /v1/inventory` (in memory, `load` key) against a bare `node:http` server that
 *   returns the same bytes (goal ≥ 0.98);
 * - `patch`: `PATCH /v1/inventory/1` against a bare server that reads the body and answers the
 *   reference's response bytes (goal ≥ 0.85);
 * - `patch-close`: the same PATCH with `Connection: close` (a new connection per request) against
 *   the same bare server: the body path when every body arrives on a fresh connection;
 * - `patch-tls`: the same PATCH over https (both targets serve the test certificate of
 *   `tests/fixtures/tls/`; keep-alive): the body path when bodies arrive through TLS;
 * - `refused`: the 429 path (an enterprise key whose limit is 0, no ban) against a bare server
 *   answering the same 429 bytes;
 * - `redis`: `GET /v1/inventory` with state on Redis against the in-memory server (the CPU figure
 *   includes redis-server's own CPU time);
 * - `instances`: 3 instances against 1, both on Redis (CPU of the primary, workers and Redis);
 *   followed by a model of what more cores give, from the measured CPU per request;
 * - `store`: the limiter alone, no HTTP: the Lua `RedisRateLimitStore` against rate-limiter-flexible's
 *   `RateLimiterRedis` (one window, its best case) and `RateLimiterUnion` of a minute and a day
 *   limiter (what our two windows need), at `BENCH_CONNECTIONS` concurrent callers;
 * - `ceiling`: the load generator's own ceiling on the bare server: autocannon in this thread,
 *   autocannon with 2 worker threads, and `wrk` (Debian package `wrk`) with 1 and 2 threads when
 *   installed (the bench says so when it is not).
 *
 * Throughput on a shared 2-core machine is noisy (other processes steal CPU from either side), so
 * each run also reads the targets' CPU time (`/proc/<pid>/stat`); the ratio of CPU per request is
 * the same comparison without most of that noise. `redis` and `instances` need `redis-server`
 * (they are skipped, saying how to install it, when it is missing).
 *
 * Load generator: `wrk -t1` when installed (one thread in C; measured here it sends several
 * times what autocannon's one JS thread can, so autocannon, not the server, would be measured),
 * else autocannon, saying so; `BENCH_GENERATOR=autocannon|wrk` chooses.
 *
 * Environment: BENCH_SCENARIOS, BENCH_GENERATOR, BENCH_CONNECTIONS (10), BENCH_DURATION (seconds
 * per run, 2), BENCH_ROUNDS (6), BENCH_WARMUP (seconds per target, 2), BENCH_PIPELINING (1,
 * autocannon only), BENCH_WORKERS (autocannon worker threads or wrk threads; 0 = one thread),
 * BENCH_PROFILE (a directory: each target process, and in `engine` and `engine-tls` the engine,
 * runs with `node --cpu-prof` and writes its profile under `<dir>/<scenario>-<target>/` when it
 * stops; the bench prints how many requests each answered, so `npx tsx bench/profile.ts <profile>
 * <requests>` gives µs per request).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { autocannonRun, type RequestSpec, WRK_INSTALLED, wrkRun } from './generators.ts';
import { cpuMicros, PROFILE_DIR, sampleOf, startTarget, stopTarget, type Target } from './processes.ts';
import { saturation } from './saturation.ts';
import { median, medianInterval, readGoal } from './stats.ts';

const num = (name: string, fallback: number, min = 1): number => {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(value) || value < min) throw new Error(`${name} must be a number >= ${min}`);
  return value;
};

const settings = {
  connections: num('BENCH_CONNECTIONS', 10),
  duration: num('BENCH_DURATION', 2),
  rounds: num('BENCH_ROUNDS', 6),
  warmup: num('BENCH_WARMUP', 2),
  pipelining: num('BENCH_PIPELINING', 1),
  workers: num('BENCH_WORKERS', 0, 0),
};

const ALL_SCENARIOS = [
  'engine',
  'engine-tls',
  'ceiling',
  'list',
  'patch',
  'patch-close',
  'patch-tls',
  'refused',
  'redis',
  'instances',
  'store',
] as const;
type ScenarioName = (typeof ALL_SCENARIOS)[number];

// ---------------------------------------------------------------------------------------------
// Load

interface RunResult {
  rps: number;
  p50: number;
  p99: number;
  cpuPerRequest: number;
  /** The part of `cpuPerRequest` spent in the extra processes (redis-server). */
  extraCpuPerRequest: number;
  requests: number;
  statuses: Record<string, number>;
  errors: number;
}

type Generator = 'wrk' | 'autocannon';

/** The generator of the side-by-side runs: `BENCH_GENERATOR`, else wrk when installed (it is not the bottleneck), else autocannon. */
const GENERATOR: Generator = (() => {
  const wanted = process.env.BENCH_GENERATOR;
  if (wanted === 'wrk' || wanted === 'autocannon') {
    if (wanted === 'wrk' && !WRK_INSTALLED) throw new Error('BENCH_GENERATOR=wrk but wrk is not installed (apt-get install wrk)');
    return wanted;
  }
  if (wanted !== undefined && wanted !== '') throw new Error('BENCH_GENERATOR must be wrk or autocannon');
  return WRK_INSTALLED ? 'wrk' : 'autocannon';
})();

async function load(
  target: Target,
  request: RequestSpec,
  duration: number,
  extraPids: number[] = [],
  generator: Generator = GENERATOR,
  workers = settings.workers,
): Promise<RunResult> {
  const pids = [...target.pids, ...extraPids];
  const authorization = request.key ? `Bearer ${target.keys[request.key] ?? 'unused'}` : undefined;
  const url = `${target.origin}${request.path}`;
  const cpuBefore = cpuMicros(pids);
  const extraBefore = cpuMicros(extraPids);
  const result =
    generator === 'wrk'
      ? await wrkRun(url, request, authorization, duration, Math.max(1, workers), settings)
      : await autocannonRun(url, request, authorization, duration, workers, settings);
  const cpu = cpuMicros(pids) - cpuBefore;
  const extraCpu = cpuMicros(extraPids) - extraBefore;
  target.served += result.total;
  return {
    rps: result.rps,
    p50: result.p50,
    p99: result.p99,
    cpuPerRequest: cpu / Math.max(1, result.total),
    extraCpuPerRequest: extraCpu / Math.max(1, result.total),
    requests: result.total,
    statuses: result.statuses,
    errors: result.errors,
  };
}

/** Every response had the expected status (wrk only tells 2xx/3xx from the rest). */
function check(label: string, r: RunResult, status: number): void {
  const other = Object.entries(r.statuses).filter(([code, count]) => {
    if (count === 0) return false;
    if (code === '2xx/3xx') return status >= 400;
    if (code === 'other') return status < 400;
    return Number(code) !== status;
  });
  if (r.errors > 0 || other.length > 0) {
    throw new Error(`${label}: expected only ${status}, observed ${JSON.stringify(r.statuses)} and ${r.errors} errors: not a valid run`);
  }
}

/** A ratio's median with its interval (bench/stats.ts), e.g. `0.934 [0.80–1.02]`. */
function withInterval(values: number[]): string {
  const interval = medianInterval(values);
  return `${median(values).toFixed(3)}${interval ? ` [${interval.low.toFixed(2)}–${interval.high.toFixed(2)}]` : ''}`;
}

/** What the rounds show about the goal, by req/s and by CPU per request. */
function goalText(goal: number, ratios: number[], cpuRatios: number[]): string {
  const interval = medianInterval(ratios);
  const level = interval ? ` (intervals: ${(interval.confidence * 100).toFixed(0)} % for the median, from ${ratios.length} rounds)` : '';
  return `  goal >= ${goal}: ${readGoal(interval, goal)} by req/s, ${readGoal(medianInterval(cpuRatios), goal)} by CPU${level}`;
}

const fmt = (r: RunResult): string =>
  `${r.rps.toFixed(0).padStart(7)} req/s  p50 ${String(r.p50).padStart(3)} ms  p99 ${String(r.p99).padStart(3)} ms  cpu ${r.cpuPerRequest.toFixed(1).padStart(6)} µs/req`;

/** One summary line per scenario, printed again at the end. */
const summary: string[] = [];

interface Pair {
  scenario: string;
  /** What the ratio says, e.g. `reference/bare`. */
  ratioName: string;
  goal?: number;
  a: { target: Target; request: RequestSpec; extraPids?: number[] };
  b: { target: Target; request: RequestSpec; extraPids?: number[] };
}

/** Alternating rounds of A and B; prints the median ratios with their intervals and returns each side's runs. */
async function compare(pair: Pair): Promise<{ a: RunResult[]; b: RunResult[] }> {
  const sides = [pair.a, pair.b];
  for (const side of sides) await load(side.target, side.request, settings.warmup, side.extraPids);
  const runs: { a: RunResult[]; b: RunResult[] } = { a: [], b: [] };
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  for (let round = 1; round <= settings.rounds; round++) {
    const order: ('a' | 'b')[] = round % 2 ? ['a', 'b'] : ['b', 'a'];
    const results = {} as Record<'a' | 'b', RunResult>;
    for (const side of order) {
      const s = pair[side];
      results[side] = await load(s.target, s.request, settings.duration, s.extraPids);
      check(`${pair.scenario} ${s.target.label}`, results[side], s.request.status);
    }
    runs.a.push(results.a);
    runs.b.push(results.b);
    ratios.push(results.a.rps / results.b.rps);
    cpuRatios.push(results.b.cpuPerRequest / results.a.cpuPerRequest);
    console.log(`  round ${String(round).padStart(2)}  ${pair.a.target.label.padEnd(12)} ${fmt(results.a)}`);
    console.log(`            ${pair.b.target.label.padEnd(12)} ${fmt(results.b)}`);
    console.log(
      `            ratio ${pair.ratioName} ${ratios.at(-1)!.toFixed(3)} by req/s, ${cpuRatios.at(-1)!.toFixed(3)} by CPU per request`,
    );
  }
  const goal = pair.goal === undefined ? '' : goalText(pair.goal, ratios, cpuRatios);
  const line =
    `${pair.scenario.padEnd(9)} median ratio ${pair.ratioName}: ${withInterval(ratios)} by req/s, ${withInterval(cpuRatios)} by CPU per request${goal}; ` +
    `median ${median(runs.a.map((r) => r.rps)).toFixed(0)} vs ${median(runs.b.map((r) => r.rps)).toFixed(0)} req/s, ` +
    `p99 ${median(runs.a.map((r) => r.p99)).toFixed(1)} vs ${median(runs.b.map((r) => r.p99)).toFixed(1)} ms`;
  console.log(line);
  summary.push(line);
  return runs;
}

// ---------------------------------------------------------------------------------------------
// Samples for the bare targets

// ---------------------------------------------------------------------------------------------
// Scenarios

const LIST: RequestSpec = { method: 'GET', path: '/v1/inventory', key: 'load', status: 200 };
const PATCH: RequestSpec = { method: 'PATCH', path: '/v1/inventory/1', key: 'load', body: '{"quantity":5}', status: 200 };
const PATCH_CLOSE: RequestSpec = { ...PATCH, close: true };
const REFUSED: RequestSpec = { method: 'GET', path: '/v1/inventory', key: 'enterprise', status: 429 };

async function withTargets<T>(starts: (() => Promise<Target>)[], body: (targets: Target[]) => Promise<T>): Promise<T> {
  const targets: Target[] = [];
  try {
    for (const start of starts) targets.push(await start());
    return await body(targets);
  } finally {
    for (const t of targets) await stopTarget(t);
  }
}

/** The reference against a bare server that answers its bytes (`bothEnv` goes to both targets). */
async function againstBare(
  scenario: string,
  request: RequestSpec,
  goal: number | undefined,
  referenceEnv: Record<string, string> = {},
  bothEnv: Record<string, string> = {},
): Promise<void> {
  await withTargets(
    [() => startTarget('reference', { BENCH_TARGET: 'reference', ...referenceEnv, ...bothEnv }, `${scenario}-reference`)],
    async ([reference]) => {
      const sample = await sampleOf(reference, request, request.body !== undefined, bothEnv);
      await withTargets([() => startTarget('bare', sample, `${scenario}-bare`)], async ([bare]) => {
        await compare({ scenario, ratioName: 'reference/bare', goal, a: { target: reference, request }, b: { target: bare, request } });
        if (PROFILE_DIR === undefined) return;
        for (const t of [reference, bare])
          console.log(
            `  profile ${join(PROFILE_DIR, `${scenario}-${t.label}`)}: ${t.served} requests (the reference also answered one sample request)`,
          );
      });
    },
  );
}

async function ceiling(): Promise<void> {
  await withTargets([() => startTarget('reference', { BENCH_TARGET: 'reference' })], async ([reference]) => {
    const sample = await sampleOf(reference, LIST, false);
    await withTargets([() => startTarget('bare', sample)], async ([bare]) => {
      const rows: Record<string, number[]> = { 'autocannon 1 thread': [], 'autocannon 2 workers': [] };
      if (WRK_INSTALLED) Object.assign(rows, { 'wrk -t1': [], 'wrk -t2': [] });
      await load(bare, LIST, settings.warmup, [], 'autocannon', 0);
      const rounds = Math.max(2, Math.ceil(settings.rounds / 2));
      for (let round = 0; round < rounds; round++) {
        rows['autocannon 1 thread'].push((await load(bare, LIST, settings.duration, [], 'autocannon', 0)).rps);
        rows['autocannon 2 workers'].push((await load(bare, LIST, settings.duration, [], 'autocannon', 2)).rps);
        for (const threads of WRK_INSTALLED ? [1, 2] : [])
          rows[`wrk -t${threads}`].push((await load(bare, LIST, settings.duration, [], 'wrk', threads)).rps);
      }
      const medians = Object.fromEntries(Object.entries(rows).map(([name, values]) => [name, median(values)]));
      for (const [name, value] of Object.entries(medians))
        console.log(`  ${name.padEnd(22)} ${value.toFixed(0).padStart(7)} req/s (median of ${rounds})`);
      const best = Math.max(...Object.values(medians));
      const line =
        `ceiling   bare server, ${settings.connections} connections: autocannon (1 thread) reaches ${(medians['autocannon 1 thread'] / best).toFixed(2)} ` +
        `of the best generator (${Object.entries(medians)
          .map(([n, v]) => `${n} ${v.toFixed(0)}`)
          .join(', ')})` +
        (WRK_INSTALLED ? '' : '; wrk not installed (apt-get install wrk), so measured against autocannon workers only');
      console.log(line);
      summary.push(line);
    });
  });
}

/** Starts a throwaway redis-server, or returns undefined saying how to install it. */
async function redisOrSkip(scenario: string): Promise<{ url: string; pid: number; stop(): Promise<void> } | undefined> {
  const { startRedisServer } = await import('../reference-server/shared-state/redis-server.ts');
  try {
    const redis = await startRedisServer();
    const pid = Number(
      execFileSync('redis-cli', ['-p', String(redis.port), 'info', 'server'])
        .toString()
        .match(/process_id:(\d+)/)?.[1],
    );
    return { url: redis.url, pid, stop: () => redis.stop() };
  } catch (error) {
    const line = `${scenario.padEnd(9)} skipped: ${(error as Error).message}`;
    console.log(line);
    summary.push(line);
    return undefined;
  }
}

async function redisScenario(): Promise<void> {
  const redis = await redisOrSkip('redis');
  if (!redis) return;
  try {
    await withTargets(
      [
        () => startTarget('on Redis', { BENCH_TARGET: 'reference', REDIS_URL: redis.url }),
        () => startTarget('in memory', { BENCH_TARGET: 'reference' }),
      ],
      async ([onRedis, inMemory]) => {
        await compare({
          scenario: 'redis',
          ratioName: 'Redis/in-memory',
          a: { target: onRedis, request: LIST, extraPids: [redis.pid] },
          b: { target: inMemory, request: LIST },
        });
      },
    );
  } finally {
    await redis.stop();
  }
}

async function instancesScenario(): Promise<void> {
  const redis = await redisOrSkip('instances');
  if (!redis) return;
  try {
    await withTargets(
      [
        () => startTarget('3 instances', { BENCH_TARGET: 'deployment', BENCH_INSTANCES: '3', REDIS_URL: redis.url }),
        () => startTarget('1 instance', { BENCH_TARGET: 'deployment', BENCH_INSTANCES: '1', REDIS_URL: redis.url }),
      ],
      async ([three, one]) => {
        const result = await compare({
          scenario: 'instances',
          ratioName: '3/1 instances',
          a: { target: three, request: LIST, extraPids: [redis.pid] },
          b: { target: one, request: LIST, extraPids: [redis.pid] },
        });
        model(result.a, result.b);
      },
    );
  } finally {
    await redis.stop();
  }
}

/**
 * What more cores give: each request costs the measured CPU (node processes + Redis). With k
 * cores for the server (the load generator elsewhere), node's share scales with the instances
 * while Redis is one thread: throughput ≈ min(k × 1e6 / node µs, 1e6 / Redis µs).
 */
function model(three: RunResult[], one: RunResult[]): void {
  const cpu = median(three.map((r) => r.cpuPerRequest));
  const cpuOne = median(one.map((r) => r.cpuPerRequest));
  const rps = median(three.map((r) => r.rps));
  const line1 =
    `instances CPU per request: ${cpu.toFixed(1)} µs with 3 instances, ${cpuOne.toFixed(1)} µs with 1 (primary, workers and redis-server together). ` +
    `On 2 cores shared with the load generator (about one core) the server side has one core whatever the number of instances, ` +
    `so 3 instances can only fill the time one instance waits for Redis; beyond that the ratio shows the cost of the extra processes.`;
  console.log(line1);
  summary.push(line1);
  {
    const redisUs = median(three.map((r) => r.extraCpuPerRequest));
    const nodeUs = cpu - redisUs;
    const rows = [2, 4, 8, 16].map((k) => `${k} cores ≈ ${Math.round(Math.min((k * 1e6) / nodeUs, 1e6 / redisUs)).toLocaleString('en')}`);
    const line2 =
      `instances model (server cores k, generator elsewhere; Redis one thread at ${redisUs.toFixed(1)} µs/req, node ${nodeUs.toFixed(1)} µs/req): ` +
      `${rows.join(', ')} req/s; Redis saturates at ≈ ${Math.round(1e6 / redisUs).toLocaleString('en')} req/s (then shard keys or pipeline). Measured here: ${rps.toFixed(0)} req/s.`;
    console.log(line2);
    summary.push(line2);
  }
}

async function storeScenario(): Promise<void> {
  const redis = await redisOrSkip('store');
  if (!redis) return;
  const { Redis } = await import('ioredis');
  const { RedisRateLimitStore } = await import('../reference-server/rate-limit/redis-store.ts');
  const { RateLimiterRedis, RateLimiterUnion } = (await import('rate-limiter-flexible')) as unknown as {
    RateLimiterRedis: new (o: object) => { consume(key: string): Promise<unknown> };
    RateLimiterUnion: new (...l: object[]) => { consume(key: string): Promise<unknown> };
  };
  const client = new Redis(redis.url);
  try {
    const ours = new RedisRateLimitStore(client, { prefix: 'bench:' });
    const policy = {
      windows: [
        { name: 'minute' as const, limit: 1e9, ms: 60_000 },
        { name: 'day' as const, limit: 1e9, ms: 86_400_000 },
      ],
      banThreshold: 10,
      banMs: 600_000,
    };
    const minute = new RateLimiterRedis({ storeClient: client, keyPrefix: 'rlf-minute', points: 1e9, duration: 60 });
    const day = new RateLimiterRedis({ storeClient: client, keyPrefix: 'rlf-day', points: 1e9, duration: 86_400 });
    const union = new RateLimiterUnion(minute, day);
    const variants: [string, () => Promise<unknown>][] = [
      ['Lua store (minute + day + ban)', () => ours.hit('key:bench', policy, Date.now())],
      ['RLF RateLimiterRedis (minute only)', () => minute.consume('key:bench')],
      ['RLF Union (minute + day)', () => union.consume('key:bench')],
    ];
    const measure = async (fn: () => Promise<unknown>, ms: number): Promise<number> => {
      let done = 0;
      const end = Date.now() + ms;
      await Promise.all(
        Array.from({ length: settings.connections }, async () => {
          while (Date.now() < end) {
            await fn();
            done++;
          }
        }),
      );
      return (done * 1000) / ms;
    };
    for (const [, fn] of variants) await measure(fn, 500);
    const results: Record<string, number[]> = Object.fromEntries(variants.map(([name]) => [name, []]));
    for (let round = 0; round < settings.rounds; round++) {
      const order = round % 2 ? [...variants].reverse() : variants;
      for (const [name, fn] of order) results[name].push(await measure(fn, 1000));
    }
    const medians = variants.map(([name]) => [name, median(results[name])] as const);
    for (const [name, value] of medians) console.log(`  ${name.padEnd(36)} ${value.toFixed(0).padStart(7)} hits/s`);
    const [oursRate, rlfRate, unionRate] = medians.map(([, v]) => v);
    const line =
      `store     ${settings.connections} concurrent callers, one process: Lua ${oursRate.toFixed(0)} hits/s; ratio Lua/RLF single ${(oursRate / rlfRate).toFixed(2)}, ` +
      `Lua/RLF union ${(oursRate / unionRate).toFixed(2)} (RLF cannot express epoch-aligned windows, refusals that count nowhere, or the retry ban)`;
    console.log(line);
    summary.push(line);
  } finally {
    client.disconnect();
    await redis.stop();
  }
}

async function main(): Promise<void> {
  const wanted = (process.env.BENCH_SCENARIOS ?? ALL_SCENARIOS.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean) as ScenarioName[];
  for (const name of wanted)
    if (!ALL_SCENARIOS.includes(name)) throw new Error(`unknown scenario ${name}; known: ${ALL_SCENARIOS.join(', ')}`);
  console.log(
    `bench: ${wanted.join(', ')}; ${settings.connections} connections, pipelining ${settings.pipelining}, ${settings.duration} s per run, ` +
      `${settings.rounds} alternating rounds, warm-up ${settings.warmup} s, generator ${GENERATOR === 'wrk' ? `wrk -t${Math.max(1, settings.workers)}` : `autocannon ${settings.workers ? `${settings.workers} workers` : 'in this thread'}`}` +
      `${WRK_INSTALLED ? '' : ' (wrk not installed: apt-get install wrk)'}; ` +
      `load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
  );
  const saturating = (tls: boolean) => async () => {
    const line = await saturation(settings, tls);
    console.log(line);
    summary.push(line);
  };
  const run: Record<ScenarioName, () => Promise<void>> = {
    engine: saturating(false),
    'engine-tls': saturating(true),
    ceiling,
    list: () => againstBare('list', LIST, 0.98),
    patch: () => againstBare('patch', PATCH, 0.85),
    'patch-close': () => againstBare('patch-close', PATCH_CLOSE, undefined),
    'patch-tls': () => againstBare('patch-tls', PATCH, undefined, {}, { BENCH_TLS: '1' }),
    refused: () => againstBare('refused', REFUSED, undefined, { ENTERPRISE_LIMIT_MINUTE: '0', BAN_THRESHOLD: '1000000000' }),
    redis: redisScenario,
    instances: instancesScenario,
    store: storeScenario,
  };
  for (const name of wanted) {
    console.log(`\n[${name}]`);
    await run[name]();
  }
  console.log(`\nsummary (load average now ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}):`);
  for (const line of summary) console.log(line);
}

main().catch((error) => {
  console.error(`bench: ${(error as Error).message}`);
  process.exitCode = 1;
});
