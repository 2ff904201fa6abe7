import nock from 'nock';
import { test, expect } from '@playwright/test';
import { judgeReset, limitMatchesPlan, parseRateLimitHeaders, secondsUntilReset } from '../../suites/lib/rate-limit.ts';

test.afterEach(() => nock.cleanAll());

const DATE = 'Wed, 01 Jan 2025 00:00:00 GMT';
const DATE_S = Date.UTC(2025, 0, 1) / 1000;

test('X-RateLimit-* read from a real response in odd header case', async ({ request }) => {
  nock('http://rl.test')
    .get('/v1/inventory')
    .reply(200, '[]', {
      'x-ratelimit-LIMIT': '60',
      'X-RATELIMIT-remaining': '59',
      'X-Ratelimit-Reset': String(DATE_S + 30),
      Date: DATE,
    });
  const res = await request.get('http://rl.test/v1/inventory');
  const info = parseRateLimitHeaders(res.headersArray());
  expect(info).toMatchObject({ limit: 60, remaining: 59, reset: DATE_S + 30, dateMs: DATE_S * 1000, missing: [], problems: [] });
  expect(secondsUntilReset(info)).toBe(30);
});

const CASES: Array<[string, Record<string, string>, RegExp | 'ok']> = [
  ['conformant minute window', { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(DATE_S + 60) }, 'ok'],
  [
    'conformant day window (Reset hours ahead)',
    { 'x-ratelimit-limit': '1000', 'x-ratelimit-remaining': '999', 'x-ratelimit-reset': String(DATE_S + 86_000) },
    'ok',
  ],
  [
    'Reset rounded to the current second',
    { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '3', 'x-ratelimit-reset': String(DATE_S - 1) },
    'ok',
  ],
  ['Reset as a delta', { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '3', 'x-ratelimit-reset': '42' }, /delta/],
  [
    'Reset in milliseconds',
    { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '3', 'x-ratelimit-reset': String((DATE_S + 30) * 1000) },
    /milliseconds/,
  ],
  [
    'Reset long past',
    { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '3', 'x-ratelimit-reset': String(DATE_S - 600) },
    /before the response Date/,
  ],
  [
    'Reset beyond the day window',
    { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '3', 'x-ratelimit-reset': String(DATE_S + 200_000) },
    /beyond the day window/,
  ],
  [
    'Remaining above Limit',
    { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '61', 'x-ratelimit-reset': String(DATE_S + 10) },
    /exceeds/,
  ],
  [
    'negative Remaining',
    { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '-1', 'x-ratelimit-reset': String(DATE_S + 10) },
    /not a non-negative integer/,
  ],
  [
    'fractional Limit',
    { 'x-ratelimit-limit': '60.0', 'x-ratelimit-remaining': '1', 'x-ratelimit-reset': String(DATE_S + 10) },
    /not a non-negative integer/,
  ],
];
for (const [name, hs, want] of CASES) {
  test(`rate-limit headers: ${name} ${want === 'ok' ? 'conform' : 'are a deviation'}`, () => {
    const info = parseRateLimitHeaders({ ...hs, date: DATE });
    if (want === 'ok') expect(info.problems).toEqual([]);
    else expect(info.problems.join('; ')).toMatch(want);
  });
}

test('missing headers are named', () => {
  const info = parseRateLimitHeaders({ 'X-RateLimit-Limit': '60' });
  expect(info.missing).toEqual(['X-RateLimit-Remaining', 'X-RateLimit-Reset']);
  expect(secondsUntilReset(info)).toBeUndefined();
});

test('without Date, Reset is judged by magnitude only', () => {
  expect(judgeReset(DATE_S - 10_000, undefined)).toBeUndefined();
  expect(judgeReset(5, undefined)).toMatch(/delta/);
});

test('plan limits: either window figure; enterprise any positive figure', () => {
  expect(limitMatchesPlan(60, 'free')).toBe(true);
  expect(limitMatchesPlan(1000, 'free')).toBe(true);
  expect(limitMatchesPlan(300, 'free')).toBe(false);
  expect(limitMatchesPlan(10000, 'pro')).toBe(true);
  expect(limitMatchesPlan(60, 'business')).toBe(false);
  expect(limitMatchesPlan(7, 'enterprise')).toBe(true);
  expect(limitMatchesPlan(0, 'enterprise')).toBe(false);
});
