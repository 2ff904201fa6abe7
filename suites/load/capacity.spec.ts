/**
 * Capacity under load, the `capacity` step (ledger LOAD-01, and LOAD-04 for the user's own
 * thresholds), on `LOAD_KEY`, a key whose limit the load does not reach. By default an open model:
 * `LOAD_RATE` requests per second for `LOAD_DURATION_S` (a few thousand requests in all);
 * `LOAD_SATURATE` opts in to saturation. One run lists the inventory; in the `full` profile a
 * second run mixes listing and updates of one pet, whose quantity is restored and verified afterwards.
 * LOAD-01: every request answered within `LOAD_TIMEOUT_S`, no 5xx, sampled responses valid against
 * the schema of their own request. LOAD-04: the thresholds the user set (`LOAD_P99_MS`,
 * `LOAD_MAX_ERROR_RATE`), each reported as that threshold; none set, nothing to judge.
 */
import type { TestInfo } from '@playwright/test';
import { test } from '../fixtures.ts';
import type { OncePerRun } from '../fixtures/run.ts';
import type { PacingClient } from '../pacing/client.ts';
import type { RunJournal } from '../journal/writer.ts';
import { CAPACITY, type CapacityConfig, type CapacityFigures } from './capacity-check.ts';
import { capacityOutcome, type Mode } from './capacity-together.ts';
import { annotateRecord, commonLoadConfig, judgeFindings, loadTarget, runOnce, type CheckRecord, type VerdictFixtures } from './step.ts';
import { describeTarget } from './target.ts';
import { ANNOTATION } from '../../core/results.ts';

async function capacity(
  mode: Mode,
  testInfo: TestInfo,
  v: VerdictFixtures,
  once: OncePerRun,
  pacing: PacingClient,
  journal: RunJournal | undefined,
): Promise<CheckRecord<CapacityFigures>> {
  const {
    values: x,
    baseUrl,
    key: loadKey,
  } = loadTarget(
    v,
    CAPACITY.id,
    'LOAD_KEY',
    'the capacity load runs only on a key the user gives for it (never on API_KEY or RATE_LIMIT_KEY)',
  );
  // Both runs at once, then each again alone when that attempt is not kept (the other may hold the
  // step's record meanwhile), and a Retry-After before each restore or run that follows a 429.
  testInfo.setTimeout((3 * (x.LOAD_DURATION_S + 2 * x.LOAD_TIMEOUT_S + 10) + 2 * x.MAX_RETRY_AFTER_S + 60) * 1000);
  const configOf = (m: Mode): CapacityConfig => ({
    baseUrl,
    loadKey,
    mode: m,
    durationS: x.LOAD_DURATION_S,
    ratePerS: x.LOAD_RATE,
    connections: x.LOAD_CONNECTIONS,
    saturate: x.LOAD_SATURATE,
    maxRequests: x.LOAD_MAX_REQUESTS,
    p99Ms: x.LOAD_P99_MS,
    maxErrorRate: x.LOAD_MAX_ERROR_RATE,
    ...commonLoadConfig(x, pacing),
    ...(journal ? { journal } : {}),
  });
  const { record, ranHere } = await runOnce<CapacityFigures>({
    baseUrl,
    check: mode === 'list' ? 'capacity' : 'capacity-mix',
    phase: testInfo.project.name,
    values: x,
    once,
    spent: (f) => ({ keys: [{ key: '<LOAD_KEY>', requests: f.requests.total }], durationS: f.durationS, waitedS: 0 }),
    // The mix decides once whether both runs go at once (capacity-together.ts).
    run: () => capacityOutcome(mode, configOf, once, `load:capacity-together:${describeTarget(baseUrl)}`),
  });
  annotateRecord(record, ranHere, testInfo);
  return record;
}

test.describe('capacity under load', () => {
  // The mix first: it holds its pet before the generated checks (another phase) hold every pet,
  // and it decides whether the listing runs beside it (capacity-together.ts).
  for (const mode of ['mix', 'list'] as const) {
    const what = mode === 'list' ? 'GET /inventory under load on LOAD_KEY' : 'a mix of listing and updates under load on LOAD_KEY';
    const tag = mode === 'list' ? ['@load'] : ['@load', '@mutates'];
    test(
      `LOAD-01 ${what} answers every request within LOAD_TIMEOUT_S without a 5xx, with bodies valid for their own request${mode === 'mix' ? ', and the stock it changed is restored' : ''}`,
      { tag },
      async ({ warn, notCertified, oncePerRun, pacing, journal }, testInfo) => {
        const v = { warn, notCertified };
        const record = await capacity(mode, testInfo, v, oncePerRun, pacing, journal);
        judgeFindings(record, testInfo, v, CAPACITY.id, undefined, record.figures.load !== null);
      },
    );
    test(
      `LOAD-04 ${what} stays within the thresholds the user set (LOAD_P99_MS, LOAD_MAX_ERROR_RATE)`,
      { tag },
      async ({ warn, notCertified, oncePerRun, pacing, journal }, testInfo) => {
        const v = { warn, notCertified };
        const record = await capacity(mode, testInfo, v, oncePerRun, pacing, journal);
        const t = record.figures.thresholds;
        if (t.LOAD_P99_MS === null && t.LOAD_MAX_ERROR_RATE === null) {
          testInfo.annotations.push({
            type: ANNOTATION.evidence,
            description: 'no threshold set: the spec sets no latency or error rate, so there is no gate to judge',
          });
        }
        judgeFindings(record, testInfo, v, CAPACITY.gateId, undefined, record.figures.load !== null);
      },
    );
  }
});
