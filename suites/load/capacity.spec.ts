/**
 * Capacity under sustained load (issue "Load and rate-limiter accuracy", ledger LOAD-01):
 * autocannon for `LOAD_DURATION_S` on `LOAD_CONNECTIONS` connections with `LOAD_KEY`, a key whose
 * limit the load does not reach. One run lists the inventory; in the `full` profile a second run
 * mixes listing and updates of one pet, whose quantity is restored and verified afterwards.
 * Must: no 5xx, no socket error, no timeout, every sampled response valid against the schemas;
 * thresholds `LOAD_P99_MS` and `LOAD_MAX_ERROR_RATE` (k6-style) fail with a line naming them.
 */
import type { TestInfo } from '@playwright/test';
import { test } from '../fixtures.ts';
import { runCapacityCheck, type CapacityFigures } from './capacity-check.ts';
import { loadTarget, runOnce } from './shared.ts';
import { usesReferenceKeys } from './target.ts';

type Mode = 'list' | 'mix';

async function capacity(mode: Mode, testInfo: TestInfo, warn: (m: string) => void): Promise<void> {
  const id = 'LOAD-01';
  const { s, baseUrl, key: loadKey } = loadTarget(
    testInfo, id, 'LOAD_KEY', 'the capacity load runs only on a key the user gives for it (never on API_KEY or RATE_LIMIT_KEY)',
  );
  const lockWaitS = 2 * s.maxRetryAfterS + 180;
  testInfo.setTimeout((lockWaitS + s.durationS + s.timeoutS + s.maxRetryAfterS + 60) * 1000);
  const { record, ranHere } = await runOnce<CapacityFigures>({
    settings: s,
    baseUrl,
    check: mode === 'list' ? 'capacity' : 'capacity-mix',
    lockWaitS,
    run: () =>
      runCapacityCheck({
        baseUrl,
        loadKey,
        mode,
        durationS: s.durationS,
        connections: s.connections,
        maxRequests: s.maxRequests,
        timeoutS: s.timeoutS,
        maxRetryAfterS: s.maxRetryAfterS,
        p99Ms: s.p99Ms,
        maxErrorRate: s.maxErrorRate,
        loopbackOnly: usesReferenceKeys([s.loadKey, s.rateLimitKey, s.apiKey]),
      }),
  });
  for (const line of record.evidence) testInfo.annotations.push({ type: 'evidence', description: line });
  for (const line of record.warnings) warn(line);
  if (ranHere) testInfo.annotations.push({ type: 'requests', description: String(record.requests) });
  console.log(`[load] capacity (${mode}): ${record.requests} requests in the load phase, status ${record.status}`);
  if (record.failures.length) throw new Error(record.failures.join('\n'));
  if (!record.figures.load || record.figures.load.requests === 0) throw new Error(`${id}: the load did not run`);
}

test.describe('capacity under sustained load', () => {
  test(
    'LOAD-01 GET /inventory under sustained load on LOAD_KEY answers without 5xx, socket errors or timeouts, with valid bodies, within the p99 and error-rate thresholds',
    { tag: ['@load'] },
    async ({ warn }, testInfo) => {
      await capacity('list', testInfo, warn);
    },
  );

  test(
    'LOAD-01 a mix of listing and updates under load on LOAD_KEY answers likewise, and the stock it changed is restored',
    { tag: ['@load', '@mutates'] },
    async ({ warn }, testInfo) => {
      await capacity('mix', testInfo, warn);
    },
  );
});
