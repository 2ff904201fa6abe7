/**
 * Overload of one key, the `overload` step (ledger LOAD-02 and LOAD-03): on `RATE_LIMIT_KEY`, a
 * key the user accepts to exhaust, a burst of exactly `Remaining + 1` concurrent requests at the
 * start of each of `LOAD_BURST_WINDOWS` fresh windows, never sending while a 429 is pending (see
 * `overload-check.ts`). It follows the 429 sequence on the same key (`suites/rate-limit/`, held
 * once per run by the run's coordinator): the sequence's request after its Retry-After opens the
 * first burst window. One run for the whole run, judged by four tests: admission per window, the
 * refusals, the recovery after Retry-After, and (should) another key's latency meanwhile.
 * Spec: Limits rules 1, 3 and 5 and the plans table; Errors, 429 row; Authentication rule 5.
 */
import type { TestInfo } from '@playwright/test';
import { test as base } from '../fixtures.ts';
import type { OncePerRun } from '../fixtures/run.ts';
import type { PacingClient } from '../pacing/client.ts';
import { sequenceOfRun, type Sequence } from '../rate-limit/sequence.ts';
import type { RecordedResponse } from './engine.ts';
import { minuteLimitOf } from '../../core/plans.ts';
import { metFindingAnnotation } from '../fixtures/unplanned-429.ts';
import { OVERLOAD, runOverloadCheck, type EarlierRequests, type OverloadFigures } from './overload-check.ts';
import { annotateRecord, commonLoadConfig, judgeFindings, loadTarget, runOnce, type CheckRecord, type VerdictFixtures } from './step.ts';

const TAGS = ['@load', '@exhausts'];

const test = base.extend<{ sequence: Sequence | undefined }>({
  // The 429 sequence of this run (`sequenceOfRun`): whichever check asks first runs it, the others
  // wait for its record. Nothing is sent on the key meanwhile.
  // Without RATE_LIMIT_KEY no burst is sent, and the sequence (then on API_KEY) is not this check's.
  sequence: async ({ conformance, apiFactory, oncePerRun }, use) => {
    if (!conformance.rateLimitKey) return use(undefined);
    await use(await sequenceOfRun(conformance, apiFactory, oncePerRun));
  },
});

/** The 2xx the 429 sequence got on RATE_LIMIT_KEY after its Retry-After, as the first window's opening. */
function openingOf(sequence: Sequence | undefined): RecordedResponse | undefined {
  const after = sequence?.record.after;
  if (sequence?.record.key !== '<RATE_LIMIT_KEY>' || !after) return undefined;
  const headers = Object.fromEntries(Object.entries(after.headers).map(([k, v]) => [k.toLowerCase(), v]));
  return { step: '429 sequence', status: after.status, headers, receivedAt: after.receivedAtMs };
}

/** The 429 sequence's requests on RATE_LIMIT_KEY, by time: the run's own when the bursts read Remaining. */
function earlierOf(sequence: Sequence | undefined): EarlierRequests | undefined {
  const r = sequence?.record;
  if (r?.key !== '<RATE_LIMIT_KEY>' || !r.answeredAtMs) return undefined;
  return { answeredAtMs: r.answeredAtMs, ...(r.longestResetS !== undefined ? { longestResetS: r.longestResetS } : {}) };
}

async function overload(
  testInfo: TestInfo,
  v: VerdictFixtures,
  once: OncePerRun,
  pacing: PacingClient,
  sequence: Sequence | undefined,
): Promise<CheckRecord<OverloadFigures>> {
  const {
    values: x,
    baseUrl,
    key: rateLimitKey,
  } = loadTarget(v, OVERLOAD.id, 'RATE_LIMIT_KEY', 'the overload burst runs only on a key the user accepts to exhaust (never on API_KEY)');
  // Each window may wait a Retry-After and a Reset, each at most MAX_RETRY_AFTER_S, and its burst's
  // waves a request timeout each (a burst larger than LOAD_BURST_CONNECTIONS goes in waves).
  const waves = Math.ceil(x.LOAD_BURST_MAX / x.LOAD_BURST_CONNECTIONS);
  testInfo.setTimeout(((x.LOAD_BURST_WINDOWS + 1) * (2 * x.MAX_RETRY_AFTER_S + (1 + waves) * x.LOAD_TIMEOUT_S) + 60) * 1000);
  const otherKey = x.API_KEY && x.API_KEY !== x.RATE_LIMIT_KEY ? x.API_KEY : undefined;
  const planMinuteLimit = minuteLimitOf(x.RATE_LIMIT_PLAN);
  const { record, ranHere } = await runOnce<OverloadFigures>({
    baseUrl,
    check: 'overload',
    phase: testInfo.project.name,
    values: x,
    once,
    spent: (f) => ({
      keys: [
        { key: '<RATE_LIMIT_KEY>', requests: f.requests.probes + f.requests.burst },
        ...(otherKey ? [{ key: '<API_KEY>', requests: f.requests.otherKey }] : []),
      ],
      durationS: f.durationS,
      // The key's windows waited out in this phase: the 429 sequence's Retry-After and the bursts' waits.
      waitedS: Math.round((f.waitedS + (sequence?.record.waitedMs ?? 0) / 1000) * 10) / 10,
    }),
    run: () =>
      runOverloadCheck({
        baseUrl,
        rateLimitKey,
        otherKey,
        windows: x.LOAD_BURST_WINDOWS,
        burstMax: x.LOAD_BURST_MAX,
        burstConnections: x.LOAD_BURST_CONNECTIONS,
        otherKeyThresholdMs: x.LOAD_P99_MS,
        ...commonLoadConfig(x, pacing),
        opening: openingOf(sequence),
        earlier: earlierOf(sequence),
        ...(planMinuteLimit !== undefined ? { planMinuteLimit } : {}),
      }),
  });
  annotateRecord(record, ranHere, testInfo);
  return record;
}

const PARTS = [
  {
    part: OVERLOAD.admission,
    title:
      'LOAD-02 a burst of Remaining + 1 concurrent requests at the start of a fresh window on RATE_LIMIT_KEY is admitted at most X-RateLimit-Limit times per window, probes included',
  },
  {
    part: OVERLOAD.refusals,
    title:
      'LOAD-02 every request refused in the bursts is a 429 with Retry-After and the three X-RateLimit-* headers, none is a 5xx and none goes unanswered',
  },
  {
    part: OVERLOAD.recovery,
    title: "LOAD-02 after waiting a burst's Retry-After, never sending before, RATE_LIMIT_KEY works again",
  },
  { part: OVERLOAD.fairness, title: 'LOAD-03 another key keeps its latency within LOAD_P99_MS while RATE_LIMIT_KEY is exhausted' },
] as const;

test.describe('overload of one key', () => {
  for (const { part, title } of PARTS) {
    test(title, { tag: TAGS }, async ({ warn, notCertified, oncePerRun, pacing, sequence }, testInfo) => {
      const v = { warn, notCertified };
      const record = await overload(testInfo, v, oncePerRun, pacing, sequence);
      const id = part === OVERLOAD.fairness ? OVERLOAD.fairnessId : OVERLOAD.id;
      // What a 429 outside the plan broke by itself (RL-06, RL-01, ...: outside-plan.ts), once for the run's verdict.
      if (part === OVERLOAD.refusals)
        for (const f of record.findings.filter((x) => x.id !== OVERLOAD.id && x.id !== OVERLOAD.fairnessId))
          testInfo.annotations.push(metFindingAnnotation(f));
      const judged = part === OVERLOAD.recovery ? record.figures.recovered !== null : record.figures.bursts.length > 0;
      judgeFindings(record, testInfo, v, id, part, judged);
    });
  }
});
