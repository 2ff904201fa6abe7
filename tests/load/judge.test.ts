/**
 * `judgeBurst` on recorded responses: a window is identified by its X-RateLimit-Reset, so a burst
 * straddling a boundary is no failure; over-admission, non-429 refusals, a missing or invalid
 * Retry-After, missing headers, 5xx and lost requests are; the wait after the burst covers the
 * largest Retry-After in either form.
 */
import { test, expect } from '@playwright/test';
import { judgeBurst, RETRY_AFTER_MARGIN_MS } from '../../suites/load/overload-check.ts';
import type { RecordedResponse } from '../../suites/lib/load.ts';

const T0 = Date.UTC(2030, 0, 1, 0, 0, 10);
const DATE = new Date(T0).toUTCString();

function ok(reset: number, remaining = 0, limit = 60): RecordedResponse {
  return {
    step: 'GET /v1/inventory',
    status: 200,
    headers: { 'x-ratelimit-limit': String(limit), 'x-ratelimit-remaining': String(remaining), 'x-ratelimit-reset': String(reset), date: DATE },
    receivedAt: T0,
  };
}

function refused(reset: number, retryAfter: string | undefined, status = 429): RecordedResponse {
  const headers: Record<string, string> = { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset), date: DATE };
  if (retryAfter !== undefined) headers['retry-after'] = retryAfter;
  return { step: 'GET /v1/inventory', status, headers, receivedAt: T0 };
}

const R1 = T0 / 1000 + 50;
const R2 = R1 + 60;
const times = <T>(n: number, make: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => make(i));

test('a burst straddling a window boundary (60 + 60 successes under two Reset values) passes', () => {
  const responses = [...times(60, () => ok(R1)), ...times(100, () => refused(R1, '50')), ...times(60, () => ok(R2)), ...times(280, () => refused(R2, '110'))];
  const j = judgeBurst(responses, { limitHint: 60 });
  expect(j.failures).toEqual([]);
  expect(j.windows).toEqual([
    { reset: String(R1), successes: 60, limit: 60 },
    { reset: String(R2), successes: 60, limit: 60 },
  ]);
  expect(j.largestRetryAfterS).toBe(110);
  expect(j.notBefore).toBe(T0 + 110_000 + RETRY_AFTER_MARGIN_MS);
});

test('61 successes in one window is over-admission, named with the Reset and the limit', () => {
  const j = judgeBurst([...times(61, () => ok(R1)), ...times(439, () => refused(R1, '50'))], { limitHint: 60 });
  expect(j.failures).toEqual([
    `LOAD-02 (admission) over-admission: 61 requests succeeded in the window whose X-RateLimit-Reset is ${R1}, more than its X-RateLimit-Limit 60`,
  ]);
});

test('the probe before the burst counts in its window', () => {
  const j = judgeBurst([...times(60, () => ok(R1)), ...times(10, () => refused(R1, '5'))], { limitHint: 60, extraSuccesses: [ok(R1)] });
  expect(j.successes).toBe(60);
  expect(j.failures[0]).toMatch(/^LOAD-02 \(admission\) over-admission: 61 requests/);
});

test('a limiter whose Reset moves with every response (sliding) is not failed for it', () => {
  const j = judgeBurst([...times(60, (i) => ok(R1 + i)), ...times(440, () => refused(R1 + 60, '1'))], { limitHint: 60 });
  expect(j.failures).toEqual([]);
  expect(j.windows).toHaveLength(60);
});

test('refusals that are not 429, 5xx, a missing or invalid Retry-After and missing headers each fail', () => {
  const noHeaders: RecordedResponse = { step: 'GET /v1/inventory', status: 429, headers: { 'retry-after': '5', date: DATE }, receivedAt: T0 };
  const j = judgeBurst(
    [...times(60, () => ok(R1)), refused(R1, undefined), refused(R1, '2.5'), refused(R1, '5', 503), refused(R1, '5', 403), noHeaders],
    { limitHint: 60 },
  );
  expect(j.failures).toEqual([
    'LOAD-02 (refusals) 1 response of the burst were 5xx (503 ×1); expected 2xx or 429',
    'LOAD-02 (refusals) refused requests must be 429 Too Many Requests; observed 403 ×1',
    'LOAD-02 (refusals) 1 429 response without a valid Retry-After: Retry-After is missing',
    'LOAD-02 (refusals) 1 429 response without a valid Retry-After: Retry-After "2.5" is not delta-seconds (1*DIGIT): no sign, no fraction',
    'LOAD-02 (refusals) 1 response (e.g. a 429) lacked X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset; every response carries the three X-RateLimit-* headers',
  ]);
  expect(j.count5xx).toBe(1);
  // Without a usable Retry-After the wait falls back to X-RateLimit-Reset (50 s after Date) plus a margin.
  expect(j.notBefore).toBe(T0 + 50_000 + 1000);
});

test('an HTTP-date Retry-After is judged against the response Date', () => {
  const at = new Date(T0 + 30_000).toUTCString();
  const j = judgeBurst([...times(60, () => ok(R1)), refused(R1, at)], { limitHint: 60 });
  expect(j.failures).toEqual([]);
  expect(j.largestRetryAfterS).toBe(30);
  expect(j.notBefore).toBe(T0 + 30_000 + RETRY_AFTER_MARGIN_MS);
});

test('requests lost without an answer fail, and a burst past the limit with no 429 fails', () => {
  expect(judgeBurst([...times(60, () => ok(R1))], { limitHint: 60, lost: 3 }).failures).toEqual([
    'LOAD-02 (refusals) 3 requests of the burst got no response (socket error, timeout or connection closed); a refused request must be answered with 429',
  ]);
  const all = judgeBurst(times(100, () => ok(R1, 0, 1000)), { limitHint: 60 });
  expect(all.failures).toEqual(['LOAD-02 (refusals) a burst of 100 requests past X-RateLimit-Limit 60 got no 429']);
});
