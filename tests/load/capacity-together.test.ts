/**
 * The two capacity runs at once (`suites/load/capacity-together.ts`): they go together only in the
 * open model and when LOAD_KEY's Remaining covers both; the attempt is kept only when both runs
 * show evidence only; otherwise each runs again alone and only that run is judged, so a server that
 * falters at twice the rate passes as it does in turn, and one that fails alone still fails.
 */
import { test, expect } from '../test.ts';
import { finding, type Finding } from '../../core/finding.ts';
import { startReferenceServer } from '../../reference-server/app.ts';
import { CAPACITY, type CapacityConfig, type CapacityOutcome, type Headroom } from '../../suites/load/capacity-check.ts';
import { atOnceAllowed, capacityOutcome, plannedRequests, type Mode, type TogetherDeps } from '../../suites/load/capacity-together.ts';
import { capacityConfig, pacerPerTest } from './helpers.ts';

const pacer = pacerPerTest();

function config(mode: Mode, extra: Partial<CapacityConfig> = {}): CapacityConfig {
  return capacityConfig(pacer(), { mode, ratePerS: 100, ...extra });
}

/** A once-per-run held in memory, as the coordinator holds it (values pass through JSON). */
function memoryOnce() {
  const values = new Map<string, Promise<unknown>>();
  return <T>(name: string, compute: () => Promise<T>): Promise<T> => {
    if (!values.has(name))
      values.set(
        name,
        compute().then((v) => JSON.parse(JSON.stringify(v))),
      );
    return values.get(name) as Promise<T>;
  };
}

const outcome = (mode: Mode, findings: Finding[] = []): CapacityOutcome => ({
  findings,
  evidence: [],
  figures: {
    mode,
    load: { requests: 100 } as never,
    sampled: 0,
    invalidSamples: 0,
    thresholds: { LOAD_P99_MS: null, LOAD_MAX_ERROR_RATE: null },
    requests: { total: 101, load: 100, setup: 1 },
    durationS: 1,
  },
});

const fail = (part: string) =>
  finding({ id: CAPACITY.id, part, level: 'fail', message: `broken ${part}`, expected: 'nothing broken', observed: part });

/**
 * A fake server: `faltersAtOnce` fails a run while another runs beside it, `failsAlone` fails every
 * run; records how many ran at once and how often.
 */
function fakeDeps(o: { remaining?: number; faltersAtOnce?: boolean; failsAlone?: boolean; leavesStock?: boolean } = {}) {
  const seen = { probes: 0, runs: [] as Mode[], mostAtOnce: 0 };
  const active = new Set<{ together: boolean }>();
  const deps: TogetherDeps = {
    probe: async (): Promise<Headroom> => {
      seen.probes++;
      return { status: 200, requests: 1, ...(o.remaining !== undefined ? { remaining: o.remaining } : {}) };
    },
    run: async (c) => {
      seen.runs.push(c.mode);
      const me = { together: false };
      active.add(me);
      seen.mostAtOnce = Math.max(seen.mostAtOnce, active.size);
      if (active.size > 1) for (const a of active) a.together = true;
      await new Promise((r) => setTimeout(r, 20));
      active.delete(me);
      const together = me.together;
      const findings = [
        ...((o.faltersAtOnce && together) || o.failsAlone ? [fail(CAPACITY.answered)] : []),
        ...(o.leavesStock && together && c.mode === 'mix' ? [fail(CAPACITY.restored)] : []),
      ];
      return outcome(c.mode, findings);
    },
  };
  return { deps, seen };
}

/** Both tests of the load phase, the mix first, as the spec runs them. */
async function bothRuns(
  deps: TogetherDeps | undefined,
  configs = { mix: config('mix'), list: config('list') },
  order: Mode[] = ['mix', 'list'],
) {
  const once = memoryOnce();
  const out: Partial<Record<Mode, CapacityOutcome>> = {};
  for (const m of order) out[m] = await capacityOutcome(m, (x) => configs[x], once, 'together', deps);
  return out as Record<Mode, CapacityOutcome>;
}

const failing = (o: CapacityOutcome) => o.findings.filter((f) => f.level === 'fail').map((f) => f.part);

test('at once only in the open model, after a 2xx whose Remaining covers every request both runs may send', () => {
  const configs = { mix: config('mix'), list: config('list') };
  const need = plannedRequests(configs.mix) + plannedRequests(configs.list);
  expect(need).toBe(100 + 5 + 100 + 1);
  const cases: Array<{ name: string; headroom: Headroom; saturate?: boolean; ok: boolean; why: RegExp }> = [
    { name: 'room for both', headroom: { status: 200, remaining: need, requests: 1 }, ok: true, why: /room for the 206/ },
    { name: 'one short', headroom: { status: 200, remaining: need - 1, requests: 1 }, ok: false, why: /less than the 206/ },
    { name: 'no Remaining', headroom: { status: 200, requests: 1 }, ok: false, why: /no valid X-RateLimit-Remaining/ },
    { name: 'a 429', headroom: { status: 429, remaining: 0, requests: 1 }, ok: false, why: /answered 429/ },
    { name: 'no answer', headroom: { error: 'timeout', requests: 1 }, ok: false, why: /no answer \(timeout\)/ },
    { name: 'saturating', headroom: { status: 200, remaining: 1e6, requests: 1 }, saturate: true, ok: false, why: /LOAD_SATURATE/ },
  ];
  for (const c of cases) {
    const cs = c.saturate ? { mix: config('mix', { saturate: true }), list: config('list', { saturate: true }) } : configs;
    const got = atOnceAllowed(cs, c.headroom);
    expect(got.ok, c.name).toBe(c.ok);
    expect(got.why, c.name).toMatch(c.why);
  }
});

test('both runs showing evidence only are kept: run once each, at the same time, the probe counted in the mix', async () => {
  const { deps, seen } = fakeDeps({ remaining: 10_000 });
  const out = await bothRuns(deps);
  expect(seen).toEqual({ probes: 1, runs: ['mix', 'list'], mostAtOnce: 2 });
  expect(out.mix.figures.requests.total).toBe(102);
  expect(out.list.figures.requests.total).toBe(101);
  for (const o of Object.values(out)) expect(o.evidence.join('\n')).toMatch(/ran at once .* judged as it ran/);
});

test('a server that falters only at twice the rate passes: each run goes again alone and only that is judged', async () => {
  const { deps, seen } = fakeDeps({ remaining: 10_000, faltersAtOnce: true });
  const out = await bothRuns(deps);
  expect(seen.runs).toEqual(['mix', 'list', 'mix', 'list']);
  expect(failing(out.mix)).toEqual([]);
  expect(failing(out.list)).toEqual([]);
  expect(out.mix.evidence[0]).toMatch(/ran at once first .* showed mix: fail answered, list: fail answered; each runs again alone/);
  // What the attempt sent is counted: the probe and both runs of it, each in its own run's record.
  expect(out.mix.figures.requests.total).toBe(101 + 1 + 101);
  expect(out.list.figures.requests.total).toBe(101 + 101);
});

test('a server that fails alone as well still fails both runs', async () => {
  const { deps } = fakeDeps({ remaining: 10_000, failsAlone: true });
  const out = await bothRuns(deps);
  expect(failing(out.mix)).toEqual([CAPACITY.answered]);
  expect(failing(out.list)).toEqual([CAPACITY.answered]);
});

test('a stock the attempt at once left changed stays a failure of the mix', async () => {
  const { deps } = fakeDeps({ remaining: 10_000, leavesStock: true });
  const out = await bothRuns(deps);
  expect(failing(out.mix)).toEqual([CAPACITY.restored]);
  expect(failing(out.list)).toEqual([]);
});

test('without room on the key, or with the listing first, the runs go in turn and never at once', async () => {
  const short = fakeDeps({ remaining: 50 });
  await bothRuns(short.deps);
  expect(short.seen).toEqual({ probes: 1, runs: ['mix', 'list'], mostAtOnce: 1 });
  const listFirst = fakeDeps({ remaining: 10_000 });
  const out = await bothRuns(listFirst.deps, undefined, ['list', 'mix']);
  expect(listFirst.seen).toEqual({ probes: 0, runs: ['list', 'mix'], mostAtOnce: 1 });
  expect(out.list.evidence[0]).toMatch(/the listing runs alone: it came before the mix/);
});

test('the reference server: both runs at once are kept, every request answered and the pet restored', async () => {
  const server = await startReferenceServer({ port: 0 });
  try {
    const shared = { baseUrl: server.baseUrl, loadKey: server.keys.load, pacer: pacer() };
    const out = await bothRuns(undefined, { mix: config('mix', shared), list: config('list', shared) });
    for (const o of Object.values(out)) {
      expect(o.findings.filter((f) => f.level !== 'note')).toEqual([]);
      expect(o.evidence.join('\n')).toMatch(/ran at once .* judged as it ran/);
      expect(o.evidence.join('\n')).not.toContain(server.keys.load);
    }
    expect(out.mix.figures.pet?.restored).toBe(true);
  } finally {
    await server.close();
  }
});
