/**
 * Spec: Limits, rule 3 ("A request over the limit gets 429 Too Many Requests and a `Retry-After`
 * header"); Errors, 429 ("the client must wait for the time given in the `Retry-After` header
 * before retrying"); RFC 9110 §10.2.3; RFC 6585 §4.
 *
 * Runs in the `rate-limit` project, alone, after the functional checks, on RATE_LIMIT_KEY (else
 * API_KEY). One sequence (`exhaust.ts`) drives the key to its limit, takes the 429, waits its
 * Retry-After (the run-wide pacer holds every request on the key until then) and sends one more;
 * each test below judges one requirement on that record. The record is computed once per run
 * (`oncePerRun`): a worker restarted after a failed check reads it back.
 * The ban is never probed (AUTH-10, RL-13).
 */
import { test as base, expect, expectNoDeviation } from '../fixtures.ts';
import { rateLimitOf, type ExhaustRecord } from './exhaust.ts';
import { runSequence, type Sequence } from './sequence.ts';
import { ANNOTATION } from '../../core/results.ts';

const test = base.extend<{ sequence: Sequence }>({
  sequence: async ({ conformance, apiFactory, oncePerRun }, use) => {
    // Once per run: a worker restarted after a failed check reads the record back instead of
    // driving the key to 429 again.
    await use(
      await oncePerRun('rate-limit/429-sequence', () => {
        const annotations: Sequence['annotations'] = [];
        return runSequence(conformance, apiFactory((a) => annotations.push(a)), annotations);
      }),
    );
  },
});

/** The sequence's evidence and request count go to the first check; the others cite the 429. */
function report(
  seq: Sequence,
  id: string,
  annotate: (a: { type: string; description: string }) => void,
  warn: (m: string) => void,
  notCertified: (reason: string) => never,
): ExhaustRecord {
  const r = seq.record;
  if (id === 'RL-05') {
    for (const a of seq.annotations) annotate(a);
    for (const w of seq.warnings) warn(`RL-05: ${w}`);
  } else if (r.refused) {
    annotate({ type: ANNOTATION.evidence, description: `429 seen: ${r.refused.label}, Retry-After: ${r.refused.headers['retry-after'] ?? '(none)'}` });
  }
  if (r.notCertified) notCertified(r.notCertified);
  if (r.aborted) throw new Error(`${id}: the 429 sequence could not be completed: ${r.aborted}`);
  return r;
}

const TAGS = { tag: ['@exhausts'] };

test.describe('429 and Retry-After', () => {
  test.describe.configure({ mode: 'default' });

  test('RL-05 the request past the limit is refused with 429', TAGS, async ({ sequence, warn, notCertified }, testInfo) => {
    const r = report(sequence, 'RL-05', (a) => testInfo.annotations.push(a), warn, notCertified);
    if (r.alreadyLimited) warn(`RL-05: ${r.key} was already at its limit when the sequence began`);
    expect(r.overAdmission, `RL-05: expected 429 once X-RateLimit-Remaining reached 0, observed ${r.overAdmission}`).toBeUndefined();
    expect(r.refused?.status, `RL-05: expected the request past the limit to get 429, observed none after ${r.sent} requests`).toBe(429);
  });

  test('RL-10 no request is refused early or admitted past the limit', TAGS, async ({ sequence, warn, notCertified }, testInfo) => {
    const r = report(sequence, 'RL-10', (a) => testInfo.annotations.push(a), warn, notCertified);
    if (r.earlyRefusalUnconfirmed) notCertified(r.earlyRefusalUnconfirmed);
    expect(r.earlyRefusal, `RL-10: off by one: ${r.earlyRefusal}${r.key === '<API_KEY>' ? ' (or another client used API_KEY)' : ''}`).toBeUndefined();
    expect(r.overAdmission, `RL-10: over-admission: ${r.overAdmission}`).toBeUndefined();
    if (r.alreadyLimited) warn('RL-10: the key was already limited; the countdown was not observed');
  });

  test('RL-09 the 429 carries the three X-RateLimit headers with Remaining 0', TAGS, async ({ sequence, warn, notCertified }, testInfo) => {
    const r = report(sequence, 'RL-09', (a) => testInfo.annotations.push(a), warn, notCertified);
    expect(r.refused, 'RL-09: no 429 was observed (see RL-05)').toBeDefined();
    const info = rateLimitOf(r.refused!);
    expectNoDeviation(info.missing.map((h) => `${h} missing`), 'X-RateLimit-Limit, -Remaining and -Reset on the 429', r.refused!.label);
    expect(info.remaining, `RL-09: ${r.refused!.label}: expected X-RateLimit-Remaining 0, observed ${info.raw.remaining ?? 'none'}`).toBe(0);
  });

  test('RL-06 the 429 carries Retry-After', TAGS, async ({ sequence, warn, notCertified }, testInfo) => {
    const r = report(sequence, 'RL-06', (a) => testInfo.annotations.push(a), warn, notCertified);
    expect(r.refused, 'RL-06: no 429 was observed (see RL-05)').toBeDefined();
    expect(r.refused!.headers['retry-after'], `RL-06: ${r.refused!.label}: expected a Retry-After header, observed none`).toBeDefined();
  });

  test('RL-07 Retry-After is delta-seconds or an HTTP-date', TAGS, async ({ sequence, warn, notCertified }, testInfo) => {
    const r = report(sequence, 'RL-07', (a) => testInfo.annotations.push(a), warn, notCertified);
    expect(r.refused, 'RL-07: no 429 was observed (see RL-05)').toBeDefined();
    const value = r.refused!.headers['retry-after'];
    expect(value, 'RL-07: no Retry-After to judge (see RL-06)').toBeDefined();
    const ra = r.retryAfter!;
    expect(ra.ok, `RL-07: ${r.refused!.label}: expected delta-seconds or an HTTP-date, observed ${ra.ok ? value : ra.reason}`).toBe(true);
    if (ra.ok && ra.kind === 'date' && ra.basis === 'local-clock') warn('RL-07: the 429 has no Date header; its Retry-After date was judged against the local clock');
  });

  test('RL-08 after waiting Retry-After a request is admitted', TAGS, async ({ sequence, warn, notCertified }, testInfo) => {
    const r = report(sequence, 'RL-08', (a) => testInfo.annotations.push(a), warn, notCertified);
    expect(r.refused, 'RL-08: no 429 was observed (see RL-05)').toBeDefined();
    if (r.retryNotCertified) notCertified(r.retryNotCertified);
    expect(r.notRetried, `RL-08: ${r.notRetried}`).toBeUndefined();
    const ra = r.retryAfter!;
    const waitedS = (r.waitedMs ?? 0) / 1000;
    expect(ra.ok && waitedS >= ra.seconds, `RL-08: the suite must wait Retry-After (${ra.ok ? ra.seconds : '?'} s) before retrying; it waited ${waitedS.toFixed(2)} s`).toBe(true);
    const after = r.after!;
    if (r.earlyRefusalUnconfirmed && after.status === 429) notCertified(r.earlyRefusalUnconfirmed);
    expect(after.status >= 200 && after.status < 300, `RL-08: ${after.label}: expected a 2xx after waiting Retry-After (${r.refused!.headers['retry-after']}), observed ${after.status}${after.status === 429 ? ' (Retry-After too short, e.g. rounded down)' : ''}`).toBe(true);
  });
});
