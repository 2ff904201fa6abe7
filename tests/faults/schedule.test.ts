import type os from 'node:os';
import { test, expect } from '../test.ts';
import { cpuTimes, idleCoresBetween, idleCoresReader, mayStart, sparePolicy, type SchedulerState } from '../../faults/schedule.ts';

const policy = sparePolicy(3);

/** Each row: the scheduler's state and whether another case may start under the matrix's policy. */
const CASES: Array<[string, SchedulerState, boolean]> = [
  ['below the base number, on a busy machine', { inFlight: 2, idleCores: 0, sinceLastStartMs: 0 }, true],
  ['at the base number, a core idle, a case started long ago', { inFlight: 3, idleCores: 1, sinceLastStartMs: 60_000 }, true],
  ['at the base number, the machine busy', { inFlight: 3, idleCores: 0.3, sinceLastStartMs: 60_000 }, false],
  ['at the base number, a core idle, a case started 2 s ago', { inFlight: 3, idleCores: 1.5, sinceLastStartMs: 2_000 }, false],
  ['one extra running, a core still idle', { inFlight: 4, idleCores: 0.8, sinceLastStartMs: 10_000 }, true],
  ['at the most, both cores idle', { inFlight: 5, idleCores: 2, sinceLastStartMs: 60_000 }, false],
];

for (const [what, state, expected] of CASES) {
  test(`matrix schedule: ${what}: ${expected ? 'another case starts' : 'no case starts'}`, () => {
    expect(mayStart(policy, state), JSON.stringify(state)).toBe(expected);
  });
}

test('matrix schedule: a concurrency set by hand (max = base) never adds a case, however idle the machine', () => {
  expect(mayStart({ ...policy, max: 3 }, { inFlight: 3, idleCores: 2, sinceLastStartMs: 60_000 })).toBe(false);
});

const cpu = (user: number, idle: number): os.CpuInfo => ({ model: '', speed: 0, times: { user, nice: 0, sys: 0, idle, irq: 0 } });

test('idle cores between two readings: the idle share of the time passed, times the cores', () => {
  const before = cpuTimes([cpu(100, 100), cpu(100, 100)]);
  // 1,000 ms per core passed: core 1 idle 250 ms, core 2 idle 750 ms: one core's worth idle.
  const after = cpuTimes([cpu(850, 350), cpu(350, 850)]);
  expect(idleCoresBetween(before, after, 2)).toBeCloseTo(1, 5);
  expect(idleCoresBetween(after, after, 2), 'no time passed').toBe(0);
  expect(idleCoresBetween(after, before, 2), 'counters that went back').toBe(0);
});

test('the idle-core reader keeps its figure for calls closer together than its interval', () => {
  let at = 0;
  let idle = 0;
  let total = 0;
  const read = () => ({ idle, total });
  const idleCores = idleCoresReader(3_000, read, () => at, 2);
  at = 1_000;
  total = 2_000;
  idle = 2_000;
  expect(idleCores(), 'too soon: no reading yet').toBe(0);
  at = 3_000;
  total = 6_000;
  idle = 6_000;
  expect(idleCores(), 'both cores idle for 3 s').toBe(2);
  at = 4_000;
  total = 8_000;
  expect(idleCores(), '1 s later: the last figure').toBe(2);
  at = 6_000;
  total = 12_000;
  expect(idleCores(), 'both cores busy for the next 3 s').toBe(0);
});
