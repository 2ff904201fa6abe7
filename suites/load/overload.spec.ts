/**
 * Overload (issue "Load and rate-limiter accuracy", ledger LOAD-02 and LOAD-03): one concurrent
 * burst well past the limit of `RATE_LIMIT_KEY`, a key the user accepts to exhaust, judged by four
 * tests that share it (the first to run sends it; see `shared.ts`):
 * admission per window, the refusals, the recovery after the largest Retry-After, and (should)
 * another key's latency meanwhile. Spec: Limits rules 1 and 3 and the plans table; Errors, 429
 * row; Authentication rule 5 (the ban). See `overload-check.ts` for the steps.
 */
import type { TestInfo } from '@playwright/test';
import { test } from '../fixtures.ts';
import { OVERLOAD_IDS, runOverloadCheck, type OverloadFigures } from './overload-check.ts';
import { linesOf, loadTarget, runOnce, type CheckRecord } from './shared.ts';
import { usesReferenceKeys } from './target.ts';

const TAGS = ['@load', '@exhausts'];

/** Which evidence lines of the shared run each test shows (the run's own lines, see overload-check.ts). */
const EVIDENCE = {
  admission: /^(before the burst|after Retry-After|burst:|successes per window)/,
  refusals: /^burst:/,
  recovery: /^(burst:|after waiting)/,
  fairness: /^(burst:|<API_KEY> during the burst)/,
} as const;

async function overload(testInfo: TestInfo, id: string, evidence: RegExp): Promise<CheckRecord<OverloadFigures>> {
  const { s, baseUrl, key: rateLimitKey } = loadTarget(
    testInfo, id, 'RATE_LIMIT_KEY', 'the overload burst runs only on a key the user accepts to exhaust (never on API_KEY)',
  );
  const burstS = 60;
  const lockWaitS = 2 * (s.durationS + s.timeoutS + 30);
  const runS = 2 * s.maxRetryAfterS + burstS + 4 * s.timeoutS + 30;
  testInfo.setTimeout((lockWaitS + runS) * 1000);
  const otherKey = s.apiKey && s.apiKey !== s.rateLimitKey ? s.apiKey : undefined;
  const { record, ranHere } = await runOnce<OverloadFigures>({
    settings: s,
    baseUrl,
    check: 'overload',
    lockWaitS,
    run: () =>
      runOverloadCheck({
        baseUrl,
        rateLimitKey,
        otherKey,
        burstMax: s.burstMax,
        burstConnections: s.burstConnections,
        maxRetryAfterS: s.maxRetryAfterS,
        otherKeyThresholdMs: s.p99Ms,
        timeoutS: s.timeoutS,
        loopbackOnly: usesReferenceKeys([s.loadKey, s.rateLimitKey, s.apiKey]),
        maxBurstDurationS: burstS,
      }),
  });
  for (const line of record.evidence) {
    if (evidence.test(line) || (ranHere && line.startsWith('load phase requests'))) testInfo.annotations.push({ type: 'evidence', description: line });
  }
  if (ranHere) {
    testInfo.annotations.push({ type: 'requests', description: String(record.requests) });
    console.log(`[load] overload: ${record.requests} requests in the load phase, status ${record.status}`);
  }
  return record;
}

/** Fails with this part's findings; if the part was never judged, with every finding of the run. */
function judge(record: CheckRecord<OverloadFigures>, prefix: string, judged: boolean, what: string): void {
  const mine = linesOf(record.failures, prefix);
  if (mine.length) throw new Error(mine.join('\n'));
  if (!judged) {
    throw new Error(`${prefix} ${what} was not judged: the check stopped before it.\n${record.failures.join('\n') || '(no finding recorded)'}`);
  }
}

test.describe('overload of one key', () => {
  test(
    'LOAD-02 a concurrent burst past the limit on RATE_LIMIT_KEY is admitted at most X-RateLimit-Limit times per window',
    { tag: TAGS },
    async ({ warn }, testInfo) => {
      const record = await overload(testInfo, 'LOAD-02', EVIDENCE.admission);
      for (const line of linesOf(record.warnings, OVERLOAD_IDS.admission)) warn(line);
      const f = record.figures;
      judge(record, OVERLOAD_IDS.admission, f.burst !== null && f.windows.length > 0, 'admission per window');
    },
  );

  test(
    'LOAD-02 every request refused in the burst is a 429 with Retry-After and the three X-RateLimit-* headers, and none is a 5xx',
    { tag: TAGS },
    async ({}, testInfo) => {
      const record = await overload(testInfo, 'LOAD-02', EVIDENCE.refusals);
      judge(record, OVERLOAD_IDS.refusals, record.figures.burst !== null, 'the refusals');
    },
  );

  test(
    'LOAD-02 after waiting the largest Retry-After of the burst, never sending before, RATE_LIMIT_KEY works again',
    { tag: TAGS },
    async ({ warn }, testInfo) => {
      const record = await overload(testInfo, 'LOAD-02', EVIDENCE.recovery);
      for (const line of linesOf(record.warnings, OVERLOAD_IDS.recovery)) warn(line);
      judge(record, OVERLOAD_IDS.recovery, record.figures.recovered === true, 'the recovery');
    },
  );

  test(
    'LOAD-03 another key keeps its latency within LOAD_P99_MS while RATE_LIMIT_KEY is hammered',
    { tag: TAGS },
    async ({ warn }, testInfo) => {
      const record = await overload(testInfo, 'LOAD-03', EVIDENCE.fairness);
      for (const line of linesOf(record.warnings, OVERLOAD_IDS.fairness)) warn(line);
      if (!record.figures.burst) warn(`${OVERLOAD_IDS.fairness} not measured: the burst did not run`);
    },
  );
});
