import { test, expect } from '@playwright/test';
import { Pacer, PacerWaitTooLong } from '../../suites/lib/pacer.ts';

const T0 = Date.UTC(2025, 0, 1, 0, 0, 10);
const date = (ms: number) => new Date(ms).toUTCString();
const resetAt = (s: number) => String(Math.floor(T0 / 1000) + s);

function pacer(reserve = 2, maxWaitMs = 30_000) {
  return new Pacer({ reserve, maxWaitMs, label: '<API_KEY>' });
}

function ok(p: Pacer, remaining: number, at = T0, reset = 20, status = 200) {
  p.begin();
  return p.observe({
    status,
    receivedAtMs: at,
    headers: { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': String(remaining), 'x-ratelimit-reset': resetAt(reset), date: date(at) },
  });
}

test('no wait while Remaining is above the reserve', () => {
  const p = pacer();
  expect(p.plan(T0).waitMs).toBe(0);
  ok(p, 10);
  expect(p.plan(T0).waitMs).toBe(0);
  expect(p.lastRemaining).toBe(10);
});

test('at the reserve it waits for X-RateLimit-Reset (judged by the server Date) plus a margin', () => {
  const p = pacer(2);
  ok(p, 2);
  const plan = p.plan(T0);
  expect(plan.waitMs).toBe(20_000 + 1000);
  expect(plan.reason).toMatch(/X-RateLimit-Remaining 2 on <API_KEY>/);
  // exhaust mode spends the reserve
  expect(p.plan(T0, 'exhaust').waitMs).toBe(0);
});

test('the server clock, not the local clock, decides the wait (skew)', () => {
  const p = pacer(2);
  p.begin();
  // The local clock is 5 s behind the server's Date.
  p.observe({ status: 200, receivedAtMs: T0 - 5000, headers: { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '1', 'x-ratelimit-reset': resetAt(20), date: date(T0) } });
  expect(p.plan(T0 - 5000).waitMs).toBe(21_000);
});

test('requests in flight count against Remaining', () => {
  const p = pacer(2);
  ok(p, 5);
  p.begin();
  p.begin();
  expect(p.plan(T0).waitMs).toBe(0);
  p.begin();
  expect(p.plan(T0).waitMs).toBeGreaterThan(0);
  p.abort();
  expect(p.plan(T0).waitMs).toBe(0);
});

test('after a 429 nothing is sent before Retry-After (delta) has passed, in any mode', () => {
  const p = pacer(0);
  const r = ok(p, 0, T0, 20, 429);
  expect(r.retryAfterProblem).toBe('Retry-After is missing');
  const p2 = pacer(0);
  p2.begin();
  const r2 = p2.observe({ status: 429, receivedAtMs: T0, headers: { 'retry-after': '3', 'x-ratelimit-remaining': '0', 'x-ratelimit-limit': '60', 'x-ratelimit-reset': resetAt(3), date: date(T0) } });
  expect(r2).toEqual({ blockedForMs: 3250, retryAfterProblem: undefined });
  expect(p2.plan(T0, 'exhaust').waitMs).toBe(3250);
  expect(p2.plan(T0 + 3000, 'exhaust').waitMs).toBe(250);
  expect(p2.plan(T0 + 3250, 'exhaust').waitMs).toBe(0);
  expect(p2.blockedUntil).toBe(T0 + 3250);
});

for (const [format, value] of [
  ['imf-fixdate', 'Wed, 01 Jan 2025 00:00:14 GMT'],
  ['rfc850', 'Wednesday, 01-Jan-25 00:00:14 GMT'],
  ['asctime', 'Wed Jan  1 00:00:14 2025'],
] as const) {
  test(`after a 429 with an HTTP-date Retry-After (${format}) the pacer holds until that date`, () => {
    const p = pacer(0);
    p.begin();
    const r = p.observe({ status: 429, receivedAtMs: T0, headers: { 'retry-after': value, date: date(T0) } });
    expect(r.retryAfterProblem).toBeUndefined();
    expect(r.blockedForMs).toBe(4250);
    expect(p.plan(T0 + 4000, 'exhaust').waitMs).toBe(250);
  });
}

test('a 429 with an invalid Retry-After holds until Reset, or a minute without one', () => {
  const p = pacer(0, 120_000);
  p.begin();
  const r = p.observe({ status: 429, receivedAtMs: T0, headers: { 'retry-after': '2.0', 'x-ratelimit-reset': resetAt(8), 'x-ratelimit-remaining': '0', 'x-ratelimit-limit': '60', date: date(T0) } });
  expect(r.retryAfterProblem).toMatch(/not delta-seconds/);
  expect(r.blockedForMs).toBe(9000);
  const q = pacer(0, 120_000);
  q.begin();
  expect(q.observe({ status: 429, receivedAtMs: T0, headers: {} }).blockedForMs).toBe(60_000);
});

test('a wait longer than maxWaitMs throws a clear error instead of hanging', () => {
  const p = pacer(0, 5000);
  p.begin();
  p.observe({ status: 429, receivedAtMs: T0, headers: { 'retry-after': '3600', date: date(T0) } });
  expect(() => p.plan(T0)).toThrow(PacerWaitTooLong);
  expect(() => p.plan(T0)).toThrow(/MAX_RETRY_AFTER_S=5 s/);
});

test('after the reset has passed, the old Remaining is forgotten', () => {
  const p = pacer(2);
  ok(p, 1);
  const wait = p.plan(T0).waitMs;
  p.waited(T0 + wait);
  expect(p.lastRemaining).toBeUndefined();
  expect(p.plan(T0 + wait).waitMs).toBe(0);
});

test('within one window Remaining only goes down (out-of-order responses)', () => {
  const p = pacer(0);
  ok(p, 5);
  ok(p, 7);
  expect(p.lastRemaining).toBe(5);
  ok(p, 59, T0, 80);
  expect(p.lastRemaining).toBe(59);
});
