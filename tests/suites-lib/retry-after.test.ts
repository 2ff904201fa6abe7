import nock from 'nock';
import { test, expect } from '@playwright/test';
import { formatImfFixdate, parseHttpDate } from '../../suites/lib/http-date.ts';
import { holdAfter429, parseRetryAfter, retryAfterWaitSeconds } from '../../suites/lib/retry-after.ts';

test.afterEach(() => nock.cleanAll());

// RFC 9110 §5.6.7: the same instant in the three formats.
const INSTANT = Date.UTC(1994, 10, 6, 8, 49, 37);
const FORMATS = [
  ['imf-fixdate', 'Sun, 06 Nov 1994 08:49:37 GMT'],
  ['rfc850', 'Sunday, 06-Nov-94 08:49:37 GMT'],
  ['asctime', 'Sun Nov  6 08:49:37 1994'],
] as const;

for (const [format, value] of FORMATS) {
  test(`HTTP-date in ${format} parses to the same instant`, () => {
    expect(parseHttpDate(value, Date.UTC(2000, 0, 1))).toEqual({ ms: INSTANT, format });
  });
}

test('HTTP-dates that are malformed or impossible are refused', () => {
  for (const bad of [
    'Sun, 31 Feb 1994 08:49:37 GMT',
    'Sun, 06 Nov 1994 08:49:37 UTC',
    '1994-11-06T08:49:37Z',
    'Sun, 06 Nov 1994 25:00:00 GMT',
    'yesterday',
    '',
  ]) {
    expect(parseHttpDate(bad), bad).toBeUndefined();
  }
  expect(parseHttpDate(undefined)).toBeUndefined();
});

test('RFC 850 two-digit years resolve to at most 50 years ahead', () => {
  const now = Date.UTC(2026, 0, 1);
  expect(new Date(parseHttpDate('Thursday, 01-Jan-70 00:00:00 GMT', now)!.ms).getUTCFullYear()).toBe(2070);
  expect(new Date(parseHttpDate('Saturday, 01-Jan-80 00:00:00 GMT', now)!.ms).getUTCFullYear()).toBe(1980);
});

test('formatImfFixdate round-trips', () => {
  const ms = Date.UTC(2030, 5, 15, 12, 0, 5);
  expect(parseHttpDate(formatImfFixdate(ms))).toEqual({ ms, format: 'imf-fixdate' });
});

test('Retry-After delta-seconds, 0 included', () => {
  expect(parseRetryAfter('0', undefined)).toEqual({ ok: true, seconds: 0, kind: 'delta' });
  expect(parseRetryAfter(' 7 ', undefined)).toEqual({ ok: true, seconds: 7, kind: 'delta' });
  expect(parseRetryAfter('120', undefined, { secondsUntilReset: 120 })).toMatchObject({ ok: true, seconds: 120 });
});

const DATE = 'Sun, 06 Nov 1994 08:49:30 GMT';
for (const [format, value] of FORMATS) {
  test(`Retry-After as an HTTP-date (${format}) from a 429 is judged against the response Date`, async ({ request }) => {
    nock('http://ra.test').get('/v1/inventory').reply(429, '', { 'Retry-After': value, Date: DATE });
    const res = await request.get('http://ra.test/v1/inventory');
    const h = res.headers();
    const parsed = parseRetryAfter(h['retry-after'], h.date, { nowMs: Date.UTC(2026, 0, 1) });
    expect(parsed).toEqual({ ok: true, seconds: 7, kind: 'date', format, basis: 'date-header' });
  });
}

test('Retry-After as an HTTP-date without a Date header falls back to the local clock, never negative', () => {
  const now = INSTANT - 3000;
  expect(parseRetryAfter(FORMATS[0][1], undefined, { nowMs: now })).toMatchObject({ ok: true, seconds: 3, basis: 'local-clock' });
  expect(parseRetryAfter(FORMATS[0][1], undefined, { nowMs: INSTANT + 60_000 })).toMatchObject({ ok: true, seconds: 0 });
});

const INVALID: Array<[string | undefined, RegExp, { secondsUntilReset?: number }?]> = [
  [undefined, /missing/],
  ['', /empty/],
  ['2.0', /not delta-seconds/],
  ['1.5', /not delta-seconds/],
  ['-1', /not delta-seconds/],
  ['+3', /not delta-seconds/],
  ['5s', /unit/],
  ['2000', /milliseconds/, { secondsUntilReset: 2 }],
  ['soon', /neither/],
  ['Sun, 06 Nov 1994 08:49:37', /neither/],
];
for (const [value, reason, ctx] of INVALID) {
  test(`Retry-After ${JSON.stringify(value)} is refused with a reason`, () => {
    const r = parseRetryAfter(value, DATE, ctx);
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : r.reason).toMatch(reason);
  });
}

test('a large delta is not called milliseconds when Reset is as far away', () => {
  expect(parseRetryAfter('3600', DATE, { secondsUntilReset: 3600 })).toMatchObject({ ok: true, seconds: 3600 });
});

test('delta-seconds are seconds whatever their size: never an epoch timestamp', () => {
  for (const v of ['1000000000', '1700000000', '99999999999']) {
    expect(parseRetryAfter(v, DATE)).toEqual({ ok: true, seconds: Number(v), kind: 'delta' });
    expect(retryAfterWaitSeconds(v, DATE)).toBe(Number(v));
  }
});

test('a sender waits a value judged to look like milliseconds as seconds', () => {
  expect(parseRetryAfter('2000', DATE, { secondsUntilReset: 2 }).ok).toBe(false);
  expect(retryAfterWaitSeconds('2000', DATE)).toBe(2000);
  expect(retryAfterWaitSeconds('soon', DATE)).toBeUndefined();
  expect(retryAfterWaitSeconds(undefined, DATE)).toBeUndefined();
});

test('RL-08 holdAfter429: one rule for the pacer and the checks: Retry-After (seconds whatever their size) plus a margin, else the reset plus a margin, else the fallback', () => {
  const base = {
    date: 'Wed, 25 Nov 2026 10:00:00 GMT',
    receivedAtMs: Date.parse('2026-11-25T10:00:00Z'),
    retryAfterMarginMs: 20,
    resetMarginMs: 1000,
    fallbackMs: 60_000,
  };
  const rows: Array<{ retryAfter: string | undefined; secondsUntilReset: number | undefined; holdMs: number; ok: boolean }> = [
    { retryAfter: '7', secondsUntilReset: 30, holdMs: 7_020, ok: true },
    { retryAfter: 'Wed, 25 Nov 2026 10:00:12 GMT', secondsUntilReset: undefined, holdMs: 12_020, ok: true },
    // Looks like milliseconds (reported as a problem), still waited as seconds: waiting longer never earns a ban.
    { retryAfter: '30000', secondsUntilReset: 30, holdMs: 30_000_020, ok: false },
    { retryAfter: undefined, secondsUntilReset: 30, holdMs: 31_000, ok: false },
    { retryAfter: '2.5', secondsUntilReset: 4, holdMs: 5_000, ok: false },
    { retryAfter: 'soon', secondsUntilReset: undefined, holdMs: 60_000, ok: false },
    { retryAfter: undefined, secondsUntilReset: 0, holdMs: 60_000, ok: false },
  ];
  for (const r of rows) {
    const hold = holdAfter429({ ...base, retryAfter: r.retryAfter, secondsUntilReset: r.secondsUntilReset });
    expect({ value: r.retryAfter, holdMs: hold.holdMs, ok: hold.parsed.ok }).toEqual({ value: r.retryAfter, holdMs: r.holdMs, ok: r.ok });
  }
});
