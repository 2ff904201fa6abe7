/** The pacer of the suites (`suites/lib/pacer.ts`): reserve, reset waits, Retry-After holds, caps. */
import { test, expect } from '@playwright/test';
import { Pacer, PacerWaitTooLong } from '../../suites/lib/pacer.ts';

const T0 = Date.UTC(2026, 10, 22, 8, 0, 0);
const headers = (remaining: number, resetS: number, dateMs = T0, extra: Record<string, string> = {}) => ({
  'X-RateLimit-Limit': '60',
  'X-RateLimit-Remaining': String(remaining),
  'X-RateLimit-Reset': String(resetS),
  Date: new Date(dateMs).toUTCString(),
  ...extra,
});
const pacer = () => new Pacer({ label: '<API_KEY>', reserve: 3, maxWaitMs: 120_000 });

test('no wait while Remaining is above the reserve', () => {
  const p = pacer();
  p.begin();
  p.observe({ status: 200, headers: headers(10, T0 / 1000 + 30), receivedAtMs: T0 });
  expect(p.plan(T0).waitMs).toBe(0);
});

test('at the reserve it waits for Reset, judged against Date, not the local clock', () => {
  const p = pacer();
  // The local clock runs 500 s behind the server: the wait must still be about 30 s.
  const local = T0 - 500_000;
  p.begin();
  p.observe({ status: 200, headers: headers(3, T0 / 1000 + 30), receivedAtMs: local });
  const plan = p.plan(local);
  expect(plan.waitMs).toBeGreaterThanOrEqual(30_000);
  expect(plan.waitMs).toBeLessThanOrEqual(32_000);
  expect(plan.reason).toContain('reserve');
  expect(plan.reason).not.toMatch(/ik_|Bearer/);
});

test('requests in flight count against the reserve', () => {
  const p = pacer();
  p.begin();
  p.observe({ status: 200, headers: headers(5, T0 / 1000 + 10), receivedAtMs: T0 });
  p.begin();
  p.begin();
  expect(p.plan(T0).waitMs).toBeGreaterThan(0);
});

test('exhaust mode spends the reserve but a 429 holds every mode until Retry-After', () => {
  const p = pacer();
  p.begin();
  p.observe({ status: 200, headers: headers(1, T0 / 1000 + 10), receivedAtMs: T0 });
  expect(p.plan(T0, 'exhaust').waitMs).toBe(0);
  p.begin();
  const seen = p.observe({ status: 429, headers: headers(0, T0 / 1000 + 10, T0, { 'Retry-After': '7' }), receivedAtMs: T0 });
  expect(seen.blockedForMs).toBe(7_250);
  expect(p.plan(T0 + 1000, 'exhaust').waitMs).toBe(6_250);
  expect(p.plan(T0 + 7_250, 'exhaust').waitMs).toBe(0);
});

test('a 429 with an HTTP-date Retry-After holds until that date (judged against Date)', () => {
  const p = pacer();
  p.begin();
  const retry = new Date(T0 + 12_000).toUTCString();
  p.observe({ status: 429, headers: headers(0, T0 / 1000 + 12, T0, { 'Retry-After': retry }), receivedAtMs: T0 - 99_000 });
  expect(p.plan(T0 - 99_000, 'exhaust').waitMs).toBe(12_250);
});

test('a 429 without a valid Retry-After holds until Reset', () => {
  const p = pacer();
  p.begin();
  const seen = p.observe({ status: 429, headers: headers(0, T0 / 1000 + 20, T0, { 'Retry-After': '2.5' }), receivedAtMs: T0 });
  expect(seen.retryAfterProblem).toContain('2.5');
  expect(p.plan(T0, 'exhaust').waitMs).toBe(21_000);
});

test('a wait longer than the cap fails, naming the variable that raises it', () => {
  const p = pacer();
  p.begin();
  p.observe({ status: 429, headers: headers(0, T0 / 1000 + 3600, T0, { 'Retry-After': '3600' }), receivedAtMs: T0 });
  expect(() => p.plan(T0)).toThrow(PacerWaitTooLong);
  expect(() => p.plan(T0)).toThrow(/MAX_RETRY_AFTER_S=120/);
});

test('after a reset wait the old Remaining is forgotten', () => {
  const p = pacer();
  p.begin();
  p.observe({ status: 200, headers: headers(2, T0 / 1000 + 5), receivedAtMs: T0 });
  const plan = p.plan(T0);
  expect(plan.waitMs).toBeGreaterThan(0);
  p.waited(T0 + plan.waitMs);
  expect(p.plan(T0 + plan.waitMs).waitMs).toBe(0);
});
