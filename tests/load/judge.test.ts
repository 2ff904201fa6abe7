/**
 * `judgeWindows` on recorded responses: a window is identified by its X-RateLimit-Reset, so bursts
 * straddling a boundary and limiters whose Reset moves (sliding windows, token buckets) are no
 * failure; over-admission (probes included), non-429 refusals, a missing or invalid Retry-After,
 * missing headers, 5xx and unanswered requests are, each a finding naming expected and observed.
 */
import { test, expect } from '../test.ts';
import { judgeWindows, RETRY_AFTER_MARGIN_MS } from '../../suites/load/overload-check.ts';
import { formatFinding } from '../../core/finding.ts';
import type { RecordedResponse } from '../../suites/load/engine.ts';

const T0 = Date.UTC(2030, 0, 1, 0, 0, 10);
const DATE = new Date(T0).toUTCString();

function ok(reset: number, remaining = 0, limit = 60, step = 'burst'): RecordedResponse {
  return {
    step,
    status: 200,
    headers: {
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-remaining': String(remaining),
      'x-ratelimit-reset': String(reset),
      date: DATE,
    },
    receivedAt: T0,
  };
}

function refused(reset: number, retryAfter: string | undefined, status = 429): RecordedResponse {
  const headers: Record<string, string> = {
    'x-ratelimit-limit': '60',
    'x-ratelimit-remaining': '0',
    'x-ratelimit-reset': String(reset),
    date: DATE,
  };
  if (retryAfter !== undefined) headers['retry-after'] = retryAfter;
  return { step: 'burst', status, headers, receivedAt: T0 };
}

const R1 = T0 / 1000 + 50;
const R2 = R1 + 60;
const times = <T>(n: number, make: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => make(i));

test('two windows of 60 admissions each (probe + 59, then probe + 59) pass', () => {
  const responses = [
    ok(R1, 59, 60, 'probe'),
    ...times(59, () => ok(R1)),
    refused(R1, '50'),
    ok(R2, 59, 60, 'probe'),
    ...times(59, () => ok(R2)),
    refused(R2, '110'),
  ];
  const j = judgeWindows(responses, { limitHint: 60 });
  expect(j.findings).toEqual([]);
  expect(j.windows).toEqual([
    { reset: String(R1), successes: 60, limit: 60 },
    { reset: String(R2), successes: 60, limit: 60 },
  ]);
  expect(j.largestRetryAfterS).toBe(110);
  expect(j.notBefore).toBe(T0 + 110_000 + RETRY_AFTER_MARGIN_MS);
});

test('Limit + 1 admissions in one window, the probe included, is over-admission naming the Reset, the limit and the count', () => {
  // Headers consistent with what is admitted (Remaining 59 after the probe), yet 61 admitted.
  const j = judgeWindows([ok(R1, 59, 60, 'probe'), ...times(60, () => ok(R1))], { limitHint: 60 });
  expect(j.findings).toEqual([
    {
      id: 'LOAD-02',
      part: 'admission',
      level: 'fail',
      message: `over-admission in the window whose X-RateLimit-Reset is ${R1} (probes included)`,
      expected: 'at most X-RateLimit-Limit 60 requests admitted',
      observed: '61 requests admitted',
    },
  ]);
  expect(formatFinding(j.findings[0])).toBe(
    `LOAD-02 (admission) over-admission in the window whose X-RateLimit-Reset is ${R1} (probes included): expected at most X-RateLimit-Limit 60 requests admitted; observed 61 requests admitted`,
  );
});

test('three instances on one shared limiter, recorded on a loaded host: bursts straddling 5 s windows and a probe refused after a full spill pass', () => {
  // The responses of one overload check against the 3-instance deployment on Redis (Resets as
  // recorded): window 1's probe came in the last second of its window and the whole burst landed
  // in the next one (60 of 60, no refusal), so window 2's probe got a 429; later bursts split
  // 19/41 across a boundary, and the last one admitted 59 and refused one.
  const [a, b, c, d, e, f] = [1795424250, 1795424255, 1795424265, 1795424270, 1795424280, 1795424285];
  const responses = [
    ok(a, 59, 60, 'probe'),
    ...times(60, (i) => ok(b, 59 - i)),
    refused(b, '3'),
    ok(c, 59, 60, 'probe'),
    ...times(19, (i) => ok(c, 58 - i)),
    ...times(41, (i) => ok(d, 59 - i)),
    ok(d, 18, 60, 'probe'),
    ok(e, 59, 60, 'probe'),
    ...times(59, (i) => ok(e, 58 - i)),
    refused(e, '4'),
    ok(f, 59, 60, 'probe'),
  ].map((r) => ({ ...r, headers: { ...r.headers, date: new Date((Number(r.headers['x-ratelimit-reset']) - 4) * 1000).toUTCString() } }));
  const j = judgeWindows(responses, { limitHint: 60 });
  expect(j.findings).toEqual([]);
  expect(j.windows.map((w) => `${w.reset}: ${w.successes}`)).toEqual([
    `${a}: 1`,
    `${b}: 60`,
    `${c}: 20`,
    `${d}: 42`,
    `${e}: 60`,
    `${f}: 1`,
  ]);
});

test('headers that switch to the day figure (the day quota nearly spent) are a window of their own, judged against its own Limit', () => {
  // Free plan: 60 a minute, 1,000 a day. With fewer requests left today than in the minute, the
  // headers describe the day: over several minute windows its one Reset gathers more than 60.
  const day = R1 + 86_000;
  const j = judgeWindows([ok(R1, 59, 60, 'probe'), ...times(30, () => ok(R1)), ...times(100, (i) => ok(day, 99 - i, 1000))], {
    limitHint: 60,
  });
  expect(j.findings).toEqual([]);
  expect(j.windows).toEqual([
    { reset: String(R1), successes: 31, limit: 60 },
    { reset: String(day), successes: 100, limit: 1000 },
  ]);
});

test('a limiter whose Reset moves with every response (sliding window, token bucket) is not failed for it', () => {
  const j = judgeWindows([...times(60, (i) => ok(R1 + i)), refused(R1 + 60, '1')], { limitHint: 60 });
  expect(j.findings).toEqual([]);
  expect(j.windows).toHaveLength(60);
});

test('refusals that are not 429, 5xx, a missing or invalid Retry-After and missing headers each fail', () => {
  const noHeaders: RecordedResponse = { step: 'burst', status: 429, headers: { 'retry-after': '5', date: DATE }, receivedAt: T0 };
  const j = judgeWindows(
    [...times(60, () => ok(R1)), refused(R1, undefined), refused(R1, '2.5'), refused(R1, '5', 503), refused(R1, '5', 403), noHeaders],
    { limitHint: 60 },
  );
  expect(j.findings.map(formatFinding)).toEqual([
    'LOAD-02 (refusals) responses to the bursts were 5xx: expected 2xx or 429; observed 503 ×1',
    'LOAD-02 (refusals) refused requests must be 429 Too Many Requests: expected 429; observed 403 ×1',
    'LOAD-02 (refusals) 1 429 response without a valid Retry-After: expected Retry-After as delta-seconds or an HTTP-date; observed Retry-After is missing',
    'LOAD-02 (refusals) 1 429 response without a valid Retry-After: expected Retry-After as delta-seconds or an HTTP-date; observed Retry-After "2.5" is not delta-seconds (1*DIGIT): no sign, no fraction',
    'LOAD-02 (refusals) 1 response (e.g. a 429) lacked headers: expected the three X-RateLimit-* headers on every response; observed X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset missing',
  ]);
  expect(j.count5xx).toBe(1);
  // Without a usable Retry-After the wait falls back to X-RateLimit-Reset (50 s after Date) plus a margin.
  expect(j.notBefore).toBe(T0 + 50_000 + 1000);
});

test('an HTTP-date Retry-After is judged against the response Date', () => {
  const at = new Date(T0 + 30_000).toUTCString();
  const j = judgeWindows([...times(60, () => ok(R1)), refused(R1, at)], { limitHint: 60 });
  expect(j.findings).toEqual([]);
  expect(j.largestRetryAfterS).toBe(30);
  expect(j.notBefore).toBe(T0 + 30_000 + RETRY_AFTER_MARGIN_MS);
});

test('requests without an answer fail', () => {
  expect(
    judgeWindows(
      times(60, () => ok(R1)),
      { limitHint: 60, lost: 3 },
    ).findings.map(formatFinding),
  ).toEqual([
    'LOAD-02 (refusals) requests of the bursts got no answer within the request timeout: expected every request answered (a refusal with 429); observed 3 requests unanswered',
  ]);
});

/**
 * A sliding log's Reset is when its oldest request leaves: in the last second before it, an old
 * request may have left and a new one come in under the same Reset. Only the 2xx before that
 * second (by the server's Date) were in the log at once; a 2xx without Date cannot be placed.
 */
test('2xx in the last second before their Reset, or without Date, are not counted in its window', () => {
  const at = (reset: number, dateS: number | undefined): RecordedResponse => {
    const r = ok(reset);
    const headers = { ...r.headers };
    if (dateS === undefined) delete headers.date;
    else headers.date = new Date(dateS * 1000).toUTCString();
    return { ...r, headers };
  };
  const j = judgeWindows([...times(60, () => at(R1, R1 - 3)), ...times(30, () => at(R1, R1 - 1)), ...times(30, () => at(R1, undefined))], {
    limitHint: 60,
  });
  expect(j.findings).toEqual([]);
  expect(j.successes).toBe(120);
  expect(j.windows).toEqual([{ reset: String(R1), successes: 60, limit: 60 }]);
  // The same 61st 2xx two seconds before Reset is over-admission.
  expect(judgeWindows([...times(61, () => at(R1, R1 - 2))], { limitHint: 60 }).findings.map((f) => f.observed)).toEqual([
    '61 requests admitted',
  ]);
});
