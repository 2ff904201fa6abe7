/**
 * Spec: Limits, rule 3 ("A request over the limit gets 429 Too Many Requests and a `Retry-After`
 * header"); Errors, 429 ("the client must wait for the time given in the `Retry-After` header
 * before retrying"); RFC 9110 §10.2.3; RFC 6585 §4.
 *
 * Runs in the `rate-limit` project, alone: on RATE_LIMIT_KEY from the start of the run, else on
 * API_KEY after the functional checks. One sequence (`exhaust.ts`) drives the key to its limit,
 * takes the 429, waits its Retry-After (the run-wide pacer holds every request on the key until
 * then) and sends one more; each test below judges one requirement on that record. The record is
 * computed once per run (`sequenceOfRun`): a worker restarted after a failed check reads it back.
 * The ban is never probed (AUTH-10, RL-13).
 */
import { test as base, expectFact, expectNoDeviation } from '../fixtures.ts';
import { metFindingAnnotation, refusalFindings } from '../fixtures/unplanned-429.ts';
import { rateLimitOf, type ExhaustRecord, type Snapshot } from './exhaust.ts';
import { sequenceOfRun, type Sequence } from './sequence.ts';
import { ANNOTATION } from '../../core/results.ts';
import { answeredBy } from '../lib/front-door.ts';

const test = base.extend<{ sequence: Sequence }>({
  sequence: async ({ conformance, apiFactory, oncePerRun }, use) => {
    // Once per run: a worker restarted after a failed check reads the record back instead of
    // driving the key to 429 again.
    await use(await sequenceOfRun(conformance, apiFactory, oncePerRun));
  },
});

/** An answer with at least one of the three X-RateLimit-* headers: the limiter the sequence drove (spec, Limits). */
function carriesRateLimit(s: Snapshot): boolean {
  const { raw } = rateLimitOf(s);
  return raw.limit !== undefined || raw.remaining !== undefined || raw.reset !== undefined;
}

/** What a 429 breaks by itself (fixtures/unplanned-429.ts), judged on a kept answer. */
function refusalFindingsOf(s: Snapshot) {
  return refusalFindings({ label: s.label, curl: s.curl ?? '', header: (n) => s.headers[n.toLowerCase()] });
}

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
    annotate({
      type: ANNOTATION.evidence,
      description: `429 seen: ${r.refused.label}, Retry-After: ${r.refused.headers['retry-after'] ?? '(none)'}`,
    });
  }
  if (r.notCertified) notCertified(r.notCertified);
  if (r.aborted) throw new Error(`${id}: the 429 sequence could not be completed: ${r.aborted}`);
  return r;
}

/** The 429 the checks after RL-05 judge; fails (naming RL-05, which judges its absence) when the sequence saw none. */
function refusedOf(r: ExhaustRecord): Snapshot {
  expectFact(r.refused, { what: 'the request past the limit', expected: 'a 429 to judge', observed: 'no 429 was observed (see RL-05)' });
  return r.refused;
}

const TAGS = { tag: ['@exhausts'] };

test.describe('429 and Retry-After', () => {
  test.describe.configure({ mode: 'default' });

  test('RL-05 the request past the limit is refused with 429', TAGS, async ({ sequence, warn, notCertified }, testInfo) => {
    const r = report(sequence, 'RL-05', (a) => testInfo.annotations.push(a), warn, notCertified);
    if (r.alreadyLimited) warn(`RL-05: ${r.key} was already at its limit when the sequence began`);
    if (r.admissionUnconfirmed) notCertified(r.admissionUnconfirmed);
    expectFact(r.overAdmission === undefined, {
      what: `${r.key} driven to its limit`,
      expected: '429 once X-RateLimit-Remaining reached 0',
      observed: r.overAdmission ?? '',
    });
    expectFact(r.refused?.status === 429, {
      what: `${r.key} driven to its limit`,
      expected: 'the request past the limit refused with 429',
      observed: `none after ${r.sent} requests`,
    });
  });

  test('RL-10 no request is refused early or admitted past the limit', TAGS, async ({ sequence, warn, notCertified }, testInfo) => {
    const r = report(sequence, 'RL-10', (a) => testInfo.annotations.push(a), warn, notCertified);
    if (r.earlyRefusalUnconfirmed) notCertified(r.earlyRefusalUnconfirmed);
    if (r.admissionUnconfirmed && r.earlyRefusal === undefined) notCertified(r.admissionUnconfirmed);
    // A 429 without X-RateLimit-Remaining cannot be read against the key's count (a front door's own gate answers so): RL-09 judges it.
    if (r.earlyRefusal && r.refused && rateLimitOf(r.refused).remaining === undefined)
      notCertified(
        `${r.earlyRefusal}, but that 429 carries no X-RateLimit-Remaining: it says nothing of ${r.key}'s count (RL-09 judges it)`,
      );
    const early = `${r.earlyRefusal ?? ''}${r.key === '<API_KEY>' ? ' (or another client used API_KEY)' : ''}`;
    expectFact(r.earlyRefusal === undefined, {
      what: `off by one on ${r.key}`,
      expected: 'no 429 while X-RateLimit-Remaining says requests are left',
      observed: early,
      ...(r.refused ? { res: r.refused } : {}),
    });
    expectFact(r.overAdmission === undefined, {
      what: `over-admission on ${r.key}`,
      expected: 'at most X-RateLimit-Limit admitted in one window',
      observed: r.overAdmission ?? '',
    });
    if (r.alreadyLimited) warn('RL-10: the key was already limited; the countdown was not observed');
  });

  test('RL-09 the 429 carries the three X-RateLimit headers with Remaining 0', TAGS, async ({ sequence, warn, notCertified }, testInfo) => {
    const r = report(sequence, 'RL-09', (a) => testInfo.annotations.push(a), warn, notCertified);
    const refused = refusedOf(r);
    const info = rateLimitOf(refused);
    // Headers missing on the 429 break "every response carries" them too (RL-01).
    for (const f of refusalFindingsOf(refused).filter((x) => x.id === 'RL-01')) testInfo.annotations.push(metFindingAnnotation(f));
    expectNoDeviation(
      info.missing.map((h) => `${h} missing`),
      'X-RateLimit-Limit, -Remaining and -Reset on the 429',
      refused.label,
      refused,
    );
    expectFact(info.remaining === 0, { expected: 'X-RateLimit-Remaining 0', observed: info.raw.remaining ?? 'none', res: refused });
  });

  test('RL-06 the 429 carries Retry-After', TAGS, async ({ sequence, warn, notCertified }, testInfo) => {
    const r = report(sequence, 'RL-06', (a) => testInfo.annotations.push(a), warn, notCertified);
    const refused = refusedOf(r);
    expectFact(refused.headers['retry-after'] !== undefined, { expected: 'a Retry-After header', observed: 'none', res: refused });
  });

  test('RL-07 Retry-After is delta-seconds or an HTTP-date', TAGS, async ({ sequence, warn, notCertified }, testInfo) => {
    const r = report(sequence, 'RL-07', (a) => testInfo.annotations.push(a), warn, notCertified);
    const refused = refusedOf(r);
    const value = refused.headers['retry-after'];
    if (value === undefined) notCertified(`${refused.label} carries no Retry-After to judge (RL-06 fails on it)`);
    const ra = r.retryAfter!;
    expectFact(ra.ok, {
      expected: 'Retry-After as delta-seconds or an HTTP-date (RFC 9110 §10.2.3)',
      observed: ra.ok ? value : ra.reason,
      res: refused,
    });
    if (ra.ok && ra.kind === 'date' && ra.basis === 'local-clock')
      warn('RL-07: the 429 has no Date header; its Retry-After date was judged against the local clock');
  });

  test('RL-08 after waiting Retry-After a request is admitted', TAGS, async ({ sequence, warn, notCertified }, testInfo) => {
    const r = report(sequence, 'RL-08', (a) => testInfo.annotations.push(a), warn, notCertified);
    const refused = refusedOf(r);
    if (r.retryNotCertified) notCertified(r.retryNotCertified);
    if (refused.headers['retry-after'] === undefined) notCertified(`${refused.label} carries no Retry-After to wait (RL-06 fails on it)`);
    expectFact(r.notRetried === undefined, {
      what: 'the request after the wait',
      expected: 'a request sent once Retry-After has passed',
      observed: r.notRetried ?? '',
      res: refused,
    });
    const ra = r.retryAfter!;
    const waitedS = (r.waitedMs ?? 0) / 1000;
    expectFact(ra.ok && waitedS >= ra.seconds, {
      what: 'the wait of the suite',
      expected: `a wait of Retry-After (${ra.ok ? ra.seconds : '?'} s) before the retry`,
      observed: `a wait of ${waitedS.toFixed(2)} s`,
      res: refused,
    });
    const after = r.after!;
    if (r.earlyRefusalUnconfirmed && after.status === 429) notCertified(r.earlyRefusalUnconfirmed);
    if (after.status === 429 && carriesRateLimit(refused) && !carriesRateLimit(after)) {
      // Another limiter's 429 (a front door's gate, a limit per address): what it breaks is judged on it.
      const met = refusalFindingsOf(after);
      for (const f of met) testInfo.annotations.push(metFindingAnnotation(f));
      notCertified(
        `the request after the wait met a 429 without any X-RateLimit-* header (${answeredBy(after)}), not the limit whose 429 set Retry-After but another on the way; that 429 itself fails ${[...new Set(met.map((f) => f.id))].join(', ')}`,
      );
    }
    expectFact(after.status >= 200 && after.status < 300, {
      expected: `a 2xx after waiting Retry-After (${refused.headers['retry-after']})`,
      observed: `status ${after.status}${after.status === 429 ? ' (Retry-After too short, e.g. rounded down)' : ''}`,
      res: after,
    });
  });
});
