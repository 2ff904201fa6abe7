/**
 * The 429 sequence as the suites run it (spec, Limits rules 3 and 5): `exhaust()` on
 * RATE_LIMIT_KEY (else API_KEY) through the suites' client, in bursts the run-wide pacer grants
 * (never past what Remaining allows; the request past the limit alone; nothing while a 429 is
 * pending). Returns a serialisable record with its evidence (computed once per run by the spec).
 */
import { NotCertified, missingPrerequisiteReason, type ApiClient, type ConformanceEnv, type KeyName } from '../fixtures.ts';
import { exhaust, type ExhaustRecord, type Snapshot } from './exhaust.ts';
import { countdownOfRun, snapshotOf } from './countdown.ts';
import type { OncePerRun } from '../fixtures/run.ts';
import { ANNOTATION } from '../../core/results.ts';

export interface Sequence {
  record: ExhaustRecord;
  annotations: { type: string; description: string }[];
  warnings: string[];
}

/** Sends up to `count` requests at once on `key`, as many as the pacer grants within Remaining. */
export function burstSender(api: ApiClient, key: KeyName) {
  return async (count: number, evidence: boolean): Promise<Snapshot[]> => {
    const lease = await api.lease(key, { mode: 'exhaust', count, withinRemaining: true });
    try {
      return await Promise.all(
        Array.from({ length: lease.granted }, async (_, i) => {
          return snapshotOf(await api.listInventory(key, { mode: 'exhaust', expect429: true, evidence: evidence && i === 0, lease }));
        }),
      );
    } finally {
      await lease.release();
    }
  };
}

/**
 * Runs the sequence with `api` (its annotations go to `annotations`). Readonly and a missing key
 * give a not-certified record without sending anything.
 */
export async function runSequence(
  conformance: ConformanceEnv,
  api: ApiClient & { finish(): void },
  annotations: Sequence['annotations'],
  options: { maxConcurrency?: number; log?: (line: string) => void; earlier?: readonly Snapshot[] } = {},
): Promise<Sequence> {
  const warnings: string[] = [];
  const key: KeyName = conformance.rateLimitKey ? 'rate-limit' : 'api';
  const placeholder = key === 'rate-limit' ? '<RATE_LIMIT_KEY>' : '<API_KEY>';
  let record: ExhaustRecord;
  if (conformance.profile === 'readonly') {
    record = { key: placeholder, sent: 0, restarts: 0, notCertified: 'CONFORMANCE_PROFILE=readonly: no key is driven to 429' };
  } else if (!conformance.apiKey && !conformance.rateLimitKey) {
    record = {
      key: placeholder,
      sent: 0,
      restarts: 0,
      notCertified: `${missingPrerequisiteReason('RATE_LIMIT_KEY')} (and API_KEY is not set either)`,
    };
  } else {
    if (key === 'api') warnings.push('RATE_LIMIT_KEY is not set: the 429 checks spend the current window of API_KEY (they run last)');
    record = await exhaust({
      key: placeholder,
      maxRequests: conformance.maxExhaustRequests,
      maxRetryAfterS: conformance.maxRetryAfterS,
      maxConcurrency: options.maxConcurrency,
      ...(options.earlier ? { earlier: options.earlier } : {}),
      log: options.log ?? ((line) => console.log(line)),
      sendBurst: burstSender(api, key),
    }).catch((e: unknown) => {
      if (e instanceof NotCertified) return { key: placeholder, sent: api.requests, restarts: 0, notCertified: e.reason } as ExhaustRecord;
      throw e;
    });
    api.finish();
    annotations.push({
      type: ANNOTATION.evidence,
      description:
        `${record.sent} requests sent on ${placeholder} in ${record.bursts ?? 0} bursts of at most ${record.largestBurst ?? 0} ` +
        `(${record.restarts} window restarts; ${record.inFlightAtRefusal ?? 0} in flight when the 429 arrived)`,
    });
  }
  return { record, annotations, warnings };
}

/**
 * The run's 429 sequence, computed once per run by whichever check asks first (the 429 checks and
 * the overload bursts judge the same record). On RATE_LIMIT_KEY the run's countdown on the key
 * (`countdown.ts`) is taken first, so that it never reads a key being driven to its limit; its
 * answers are the run's own on the key, and the sequence counts them in their windows.
 */
export function sequenceOfRun(
  conformance: ConformanceEnv,
  apiFactory: (annotate: (a: Sequence['annotations'][number]) => void) => ApiClient & { finish(): void },
  oncePerRun: OncePerRun,
): Promise<Sequence> {
  return oncePerRun('rate-limit/429-sequence', async () => {
    const annotations: Sequence['annotations'] = [];
    let earlier: Snapshot[] = [];
    if (conformance.rateLimitKey && conformance.profile !== 'readonly') {
      const api = apiFactory((a) => annotations.push(a));
      earlier = (await countdownOfRun(oncePerRun, api)).attempts.flat();
      api.finish();
    }
    return runSequence(
      conformance,
      apiFactory((a) => annotations.push(a)),
      annotations,
      { earlier },
    );
  });
}
