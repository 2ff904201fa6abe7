/**
 * Overload of one key (ledger LOAD-02 and LOAD-03): on `RATE_LIMIT_KEY`, a key the user accepts to
 * exhaust, a burst of exactly `Remaining + 1` concurrent requests at the start of a fresh window,
 * repeated over `LOAD_BURST_WINDOWS` windows, never sending while a 429 is pending (see
 * `overload-check.ts`). One run for the whole run, judged by four tests: admission per window, the
 * refusals, the recovery after Retry-After, and (should) another key's latency meanwhile.
 * Spec: Limits rules 1, 3 and 5 and the plans table; Errors, 429 row; Authentication rule 5.
 */
import type { TestInfo } from '@playwright/test';
import { test } from '../fixtures.ts';
import type { PacingClient } from '../pacing/client.ts';
import { OVERLOAD, runOverloadCheck, type OverloadFigures } from './overload-check.ts';
import { runPacer } from './pacing.ts';
import { loadTarget, runOnce, tlsOf, verdict, type CheckRecord, type Once, type Verdict } from './shared.ts';
import { usesReferenceKeys } from './target.ts';

const TAGS = ['@load', '@exhausts'];

async function overload(testInfo: TestInfo, v: Verdict, once: Once, pacing: PacingClient): Promise<CheckRecord<OverloadFigures>> {
  const { s, baseUrl, key: rateLimitKey } = loadTarget(
    v, OVERLOAD.id, 'RATE_LIMIT_KEY', 'the overload burst runs only on a key the user accepts to exhaust (never on API_KEY)',
  );
  const x = s.values;
  // Both capacity runs, and the Retry-After on LOAD_KEY a capacity run may wait before restoring its pet.
  const lockWaitS = 2 * (2 * x.LOAD_DURATION_S + x.LOAD_TIMEOUT_S + 30) + x.MAX_RETRY_AFTER_S;
  // Each window may wait a Retry-After and a Reset, each at most MAX_RETRY_AFTER_S.
  const runS = (x.LOAD_BURST_WINDOWS + 1) * (2 * x.MAX_RETRY_AFTER_S + 2 * x.LOAD_TIMEOUT_S) + 30;
  // The lock is set aside during the waits: taking it back may wait for the capacity runs once more.
  testInfo.setTimeout((2 * lockWaitS + runS) * 1000);
  const otherKey = x.API_KEY && x.API_KEY !== x.RATE_LIMIT_KEY ? x.API_KEY : undefined;
  const { record, ranHere } = await runOnce<OverloadFigures>({
    settings: s,
    baseUrl,
    check: 'overload',
    lockWaitS,
    // Its bursts keep to their windows; a capacity run fills the waits between them.
    first: true,
    once,
    spent: (f) => ({
      keys: [
        { key: '<RATE_LIMIT_KEY>', requests: f.requests.probes + f.requests.burst },
        ...(otherKey ? [{ key: '<API_KEY>', requests: f.requests.otherKey }] : []),
      ],
      durationS: f.durationS,
    }),
    run: (lock) =>
      runOverloadCheck({
        baseUrl,
        rateLimitKey,
        otherKey,
        windows: x.LOAD_BURST_WINDOWS,
        burstMax: x.LOAD_BURST_MAX,
        burstConnections: x.LOAD_BURST_CONNECTIONS,
        maxRetryAfterS: x.MAX_RETRY_AFTER_S,
        otherKeyThresholdMs: x.LOAD_P99_MS,
        timeoutS: x.LOAD_TIMEOUT_S,
        loopbackOnly: usesReferenceKeys([x.LOAD_KEY, x.RATE_LIMIT_KEY, x.API_KEY]),
        tls: tlsOf(x),
        pacer: runPacer(pacing),
        lock,
      }),
  });
  for (const line of record.evidence) testInfo.annotations.push({ type: 'evidence', description: line });
  if (ranHere) testInfo.annotations.push({ type: 'requests', description: String(record.requests) });
  return record;
}

test.describe('overload of one key', () => {
  test(
    'LOAD-02 a burst of Remaining + 1 concurrent requests at the start of a fresh window on RATE_LIMIT_KEY is admitted at most X-RateLimit-Limit times per window, probes included',
    { tag: TAGS },
    async ({ warn, notCertified, oncePerRun, pacing }, testInfo) => {
      const v = { warn, notCertified };
      const record = await overload(testInfo, v, oncePerRun, pacing);
      verdict(record, testInfo, v, OVERLOAD.id, OVERLOAD.admission, record.figures.bursts.length > 0);
    },
  );

  test(
    'LOAD-02 every request refused in the bursts is a 429 with Retry-After and the three X-RateLimit-* headers, none is a 5xx and none goes unanswered',
    { tag: TAGS },
    async ({ warn, notCertified, oncePerRun, pacing }, testInfo) => {
      const v = { warn, notCertified };
      const record = await overload(testInfo, v, oncePerRun, pacing);
      verdict(record, testInfo, v, OVERLOAD.id, OVERLOAD.refusals, record.figures.bursts.length > 0);
    },
  );

  test(
    'LOAD-02 after waiting the Retry-After of each burst, never sending before, RATE_LIMIT_KEY works again',
    { tag: TAGS },
    async ({ warn, notCertified, oncePerRun, pacing }, testInfo) => {
      const v = { warn, notCertified };
      const record = await overload(testInfo, v, oncePerRun, pacing);
      verdict(record, testInfo, v, OVERLOAD.id, OVERLOAD.recovery, record.figures.recovered !== null);
    },
  );

  test(
    'LOAD-03 another key keeps its latency within LOAD_P99_MS while RATE_LIMIT_KEY is exhausted',
    { tag: TAGS },
    async ({ warn, notCertified, oncePerRun, pacing }, testInfo) => {
      const v = { warn, notCertified };
      const record = await overload(testInfo, v, oncePerRun, pacing);
      verdict(record, testInfo, v, OVERLOAD.fairnessId, OVERLOAD.fairness, record.figures.bursts.length > 0);
    },
  );
});
