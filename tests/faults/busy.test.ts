/**
 * A busy runner (faults/busy.ts: busy loops until every core is busy) while the limiter zoo's two variants
 * that close every connection and run on a skewed clock are certified (faults/zoo-variants.ts):
 * the verdicts are the matrix's (nothing their phases judge fails, every requirement they test has
 * a result), nothing is sent on a key while its 429's Retry-After is pending and no key is banned.
 * A verdict must not depend on how late the runner reads an answer.
 *
 * Only the phases where a limiter and the runner's timing decide a verdict run (rate-limit: the 429
 * sequence and the bursts; load), both cases at once, on the matrix's short settings: the matrix
 * certifies every phase of these variants on a quiet worker.
 */
import os from 'node:os';
import { test, expect } from '../test.ts';
import { busyThreads, startBusyLoad } from '../../faults/busy.ts';
import { cleanup, runCase } from '../../faults/harness.ts';
import { caseHolds, matrixCases, MATRIX_ENV, type NamedCase } from '../../faults/matrix.ts';
import { runInBackground } from '../background.ts';

// A certify run of a whole server: at a lower priority than the tests that judge timing (tests/background.ts).
test.beforeAll(runInBackground);

/** The zoo variants that failed under load before: `Connection: close` and a server clock far from the runner's. */
const BUSY_CASES = ['limiter-fixed-clock-close-ahead-45s', 'limiter-sliding-log-close-behind-35s'];
const BUSY_PHASES = ['rate-limit', 'load'];

test('busy loops until every core is busy: one per core on a quiet machine, fewer on one busy already, never none', () => {
  expect(busyThreads(2, 0.1)).toBe(2);
  expect(busyThreads(2, 1.5)).toBe(1);
  expect(busyThreads(2, 9.7)).toBe(1);
  expect(busyThreads(8, 3)).toBe(5);
});

test('every core busy: the Connection: close limiter variants keep the matrix verdict, send nothing early and earn no ban', async () => {
  test.setTimeout(300_000);
  const cases = BUSY_CASES.map((name): NamedCase => {
    const c = matrixCases(false).find((x) => x.name === name);
    if (!c) throw new Error(`${name} is no longer a variant of the matrix (faults/zoo-variants.ts)`);
    return { ...c, phases: BUSY_PHASES };
  });
  const threads = busyThreads();
  test.info().annotations.push({ type: 'busy loops', description: `${threads} (load average ${os.loadavg()[0]?.toFixed(1)})` });
  const stopBusy = startBusyLoad(threads);
  let outcomes;
  try {
    outcomes = await Promise.all(cases.map((c) => runCase(c, { env: MATRIX_ENV })));
  } finally {
    await stopBusy();
  }
  try {
    outcomes.forEach((o, i) => {
      const what = `${o.id} under a busy loop: verdict ${o.verdict} in ${(o.durationMs / 1000).toFixed(1)} s; failing ${JSON.stringify(o.reasons)}; without a result ${JSON.stringify(o.unevidenced)}; problems ${JSON.stringify(o.problems)}; not certified ${JSON.stringify(o.notCertified)}${o.verdict === 'missing' ? `\n${o.tail}` : ''}`;
      expect.soft(caseHolds(cases[i]!, o), what).toBe(true);
      expect
        .soft({ early: o.retry.early, bans: o.retry.bans }, `${o.id}: requests sent while a 429's Retry-After was pending, and bans`)
        .toEqual({ early: {}, bans: {} });
      // A limit of the run under load (not certified) is no false verdict; it is shown, not failed.
      for (const [id, why] of Object.entries(o.notCertified))
        test
          .info()
          .annotations.push({ type: 'warning', description: `${o.id} under a busy loop: ${id} not certified: ${why.slice(0, 300)}` });
    });
  } finally {
    outcomes.forEach(cleanup);
  }
});
