/**
 * Scenarios `engine` and `engine-tls`: the harness's load engine (`suites/load/saturate.ts`, its
 * closed model) against autocannon (in this thread) and `wrk -t1` when installed, at saturation
 * on the same bare target, in alternated rounds. Over https the engine verifies the target's
 * certificate (the test CA of `tests/fixtures/tls/`); autocannon cannot (it forces
 * `rejectUnauthorized: false`), nor can wrk. Prints per round req/s and the generator's CPU per
 * request (autocannon: this process; the engine: its own), then the medians of engine/autocannon
 * and engine/wrk by req/s and autocannon/engine by CPU per request, with their intervals
 * (bench/stats.ts), and what they show about the goal (≥ 0.9 by req/s, ≥ 1 by CPU).
 * `BENCH_BASELINE_ENGINE` (another checkout's `suites/load/saturate.ts`) adds that engine to the
 * rounds, and the ratios engine/baseline by req/s and baseline/engine by CPU per request: two
 * candidates of the engine measured side by side. With `BENCH_PROFILE` each engine runs under
 * `node --cpu-prof` (its profile in `<dir>/<scenario>-engine/`, and `-baseline/`; the bench prints
 * how many requests it answered, for `bench/profile.ts`); profiling slows it, so its ratios then
 * say little.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  autocannonRun,
  type Generated,
  type GeneratorSettings,
  type RequestSpec,
  startEngine,
  WRK_INSTALLED,
  wrkRun,
} from './generators.ts';
import { PROFILE_DIR, startTarget, stopTarget } from './processes.ts';
import { median, medianInterval, readGoal } from './stats.ts';

const CA_FILE = fileURLToPath(new URL('../tests/fixtures/tls/ca.pem', import.meta.url));
const BODY = JSON.stringify({ items: [{ id: 1, name: 'widget', quantity: 5 }], total: 1 });
const SAMPLE = {
  status: 200,
  headers: ['Content-Type', 'application/json', 'X-RateLimit-Limit', '1000'],
  body: Buffer.from(BODY).toString('base64'),
  readBody: false,
};
const LIST: RequestSpec = { method: 'GET', path: '/v1/inventory', status: 200 };
const AUTHORIZATION = 'Bearer bench-saturation-not-a-key';

export interface SaturationSettings extends GeneratorSettings {
  duration: number;
  rounds: number;
  warmup: number;
}

const withInterval = (values: number[]): string => {
  const i = medianInterval(values);
  return `${median(values).toFixed(3)}${i ? ` [${i.low.toFixed(2)}–${i.high.toFixed(2)}]` : ''}`;
};

function valid(label: string, g: Generated): void {
  const bad = Object.keys(g.statuses).filter((c) => c !== '200' && c !== '2xx/3xx' && g.statuses[c] > 0);
  if (g.errors > 0 || bad.length > 0)
    throw new Error(`${label}: expected only 200, observed ${JSON.stringify(g.statuses)} and ${g.errors} errors`);
}

/** One scenario; returns its summary line. */
export async function saturation(settings: SaturationSettings, tls: boolean): Promise<string> {
  const scenario = tls ? 'engine-tls' : 'engine';
  const target = await startTarget('bare', {
    BENCH_TARGET: 'bare',
    BENCH_SAMPLE: JSON.stringify(SAMPLE),
    ...(tls ? { BENCH_TLS: '1' } : {}),
  });
  const profileOf = (label: string) => (PROFILE_DIR === undefined ? undefined : join(PROFILE_DIR, `${scenario}-${label}`));
  const engine = startEngine(undefined, profileOf('engine'));
  const baselineScript = process.env.BENCH_BASELINE_ENGINE;
  const baseline = baselineScript ? startEngine(baselineScript, profileOf('baseline')) : undefined;
  const served: Record<string, number> = { engine: 0, baseline: 0 };
  try {
    const url = `${target.origin}${LIST.path}`;
    const ca = tls ? CA_FILE : undefined;
    const ours = () => engine.run(url, AUTHORIZATION, settings.duration, settings.connections, ca);
    const cannon = async () => {
      const before = process.cpuUsage();
      const g = await autocannonRun(url, LIST, AUTHORIZATION, settings.duration, 0, settings);
      const cpu = process.cpuUsage(before);
      return { ...g, cpuUs: cpu.user + cpu.system };
    };
    const wrk = async () => ({ ...(await wrkRun(url, LIST, AUTHORIZATION, settings.duration, 1, settings)), cpuUs: Number.NaN });
    const sides: [string, () => Promise<Generated & { cpuUs: number }>][] = [
      ['engine', ours],
      ['autocannon', cannon],
      ...(WRK_INSTALLED ? [['wrk -t1', wrk] as [string, typeof wrk]] : []),
      ...(baseline
        ? [['baseline', () => baseline.run(url, AUTHORIZATION, settings.duration, settings.connections, ca)] as [string, typeof wrk]]
        : []),
    ];
    served.engine += (await engine.run(url, AUTHORIZATION, settings.warmup, settings.connections, ca)).total;
    await autocannonRun(url, LIST, AUTHORIZATION, settings.warmup, 0, settings);
    const byCannon: number[] = [];
    const byWrk: number[] = [];
    const byBaseline: number[] = [];
    const cpuBaseline: number[] = [];
    const cpuRatios: number[] = [];
    for (let round = 1; round <= settings.rounds; round++) {
      const order = round % 2 ? sides : [...sides].reverse();
      const got: Record<string, Generated & { cpuUs: number }> = {};
      for (const [name, run] of order) {
        got[name] = await run();
        valid(`${scenario} ${name}`, got[name]);
        if (name in served) served[name] += got[name].total;
      }
      const cpu = (g: Generated & { cpuUs: number }) => g.cpuUs / Math.max(1, g.total);
      byCannon.push(got.engine.rps / got.autocannon.rps);
      cpuRatios.push(cpu(got.autocannon) / cpu(got.engine));
      if (got['wrk -t1']) byWrk.push(got.engine.rps / got['wrk -t1'].rps);
      if (got.baseline) byBaseline.push(got.engine.rps / got.baseline.rps);
      if (got.baseline) cpuBaseline.push(cpu(got.baseline) / cpu(got.engine));
      console.log(
        `  round ${String(round).padStart(2)}  ${Object.entries(got)
          .map(([n, g]) => `${n} ${g.rps.toFixed(0)} req/s${Number.isNaN(g.cpuUs) ? '' : ` ${cpu(g).toFixed(1)} µs/req`}`)
          .join(', ')}`,
      );
    }
    const goal = (values: number[], level: number) => readGoal(medianInterval(values), level);
    return (
      `${scenario.padEnd(10)} ${settings.connections} connections${tls ? ', https (engine verified, autocannon and wrk not)' : ''}: ` +
      `engine/autocannon ${withInterval(byCannon)} by req/s (goal >= 0.9: ${goal(byCannon, 0.9)}), ` +
      `autocannon/engine ${withInterval(cpuRatios)} by CPU per request (goal >= 1: ${goal(cpuRatios, 1)})` +
      (WRK_INSTALLED ? `, engine/wrk -t1 ${withInterval(byWrk)} by req/s` : '; wrk not installed (apt-get install wrk)') +
      (baseline
        ? `, engine/baseline ${withInterval(byBaseline)} by req/s, baseline/engine ${withInterval(cpuBaseline)} by CPU per request`
        : '')
    );
  } finally {
    await Promise.all([engine.stop(), baseline?.stop()]);
    await stopTarget(target);
    for (const label of baseline ? ['engine', 'baseline'] : ['engine'])
      if (PROFILE_DIR !== undefined) console.log(`  profile ${profileOf(label)}: ${served[label]} requests answered`);
  }
}
