/**
 * Two certifications with the same keys at once against one conformant target (two pipelines on
 * one staging runner, faults/two-runs.ts), every phase, as a user runs them: both exit 0 with
 * verdict pass, neither sends on a key while a 429 on it is pending, neither earns a ban, the
 * store ends exactly as it started, and each report names the other run (runs of one target on
 * one machine take turns: certify/steps/turns.ts). Short load settings (faults/matrix.ts MATRIX_ENV).
 */
import { test, expect } from '@playwright/test';
import { namesAnotherClient, PAIR_TIMEOUT_MS, runPair } from '../../faults/two-runs.ts';
import { cleanup } from '../../faults/harness.ts';
import { matrixCases, MATRIX_ENV } from '../../faults/matrix.ts';
import { total } from '../../faults/retry-watch.ts';

test('two certify runs with the same keys against one target both pass, send nothing early, earn no ban, leave the store as it was and name each other', async () => {
  test.setTimeout(PAIR_TIMEOUT_MS + 60_000);
  const baseline = matrixCases(false).find((c) => c.kind === 'baseline')!;
  const pair = await runPair(baseline, MATRIX_ENV);
  try {
    pair.runs.forEach((o, i) => {
      const what = `run ${i + 1}: verdict ${o.verdict} (exit ${o.exitCode}) in ${(o.durationMs / 1000).toFixed(1)} s; failing ${JSON.stringify(o.reasons)}; problems ${JSON.stringify(o.problems)}${o.verdict === 'missing' ? `\n${o.tail}` : ''}`;
      expect.soft(o.verdict, what).toBe('pass');
      expect.soft(o.exitCode, what).toBe(0);
      expect.soft(namesAnotherClient(o), `run ${i + 1} names the other run it saw`).not.toEqual([]);
    });
    // One run waited for the other, and the other names the run that waited for it.
    const [a, b] = pair.runs.map((o) => o.otherRuns);
    expect
      .soft(
        [a.waitedFor.length > 0 && b.waitedForThis.length > 0, b.waitedFor.length > 0 && a.waitedForThis.length > 0],
        `turns: run 1 ${JSON.stringify(a)}, run 2 ${JSON.stringify(b)}`,
      )
      .toContain(true);
    const retry = pair.runs[0].retry;
    expect
      .soft(total(retry.early), `requests sent on a key while its 429's Retry-After was pending (both runs): ${JSON.stringify(retry)}`)
      .toBe(0);
    expect.soft(total(retry.bans), `bans earned (both runs): ${JSON.stringify(retry)}`).toBe(0);
    expect.soft(pair.storeAfter, 'the store after both runs equals the store before').toBe(pair.storeBefore);
  } finally {
    pair.runs.forEach(cleanup);
  }
});
