import nock from 'nock';
import { test, expect } from '@playwright/test';
import { judgeSunset, parseDeprecation } from '../../suites/lib/deprecation.ts';

test.afterEach(() => nock.cleanAll());

const DEP_S = Date.UTC(2026, 0, 1) / 1000;

test('Deprecation and Sunset read from a real response (odd header case)', async ({ request }) => {
  nock('http://dep.test')
    .get('/v1/pets/1')
    .reply(200, '{}', {
      DEPRECATION: `@${DEP_S}`,
      sunset: 'Sat, 01 Jan 2028 00:00:00 GMT',
      Date: 'Sun, 22 Nov 2026 09:00:00 GMT',
    });
  const h = (await request.get('http://dep.test/v1/pets/1')).headers();
  expect(parseDeprecation(h.deprecation!)).toEqual({ ok: true, form: 'sf-date', epochS: DEP_S });
  expect(judgeSunset(h.sunset!, h.date, DEP_S)).toEqual({ problems: [], warnings: [] });
});

const DEPRECATIONS: Array<[string, 'sf-date' | 'obsolete' | 'invalid']> = [
  [`@${DEP_S}`, 'sf-date'],
  [' @0 ', 'sf-date'],
  ['true', 'obsolete'],
  ['?1', 'obsolete'],
  ['Thu, 01 Jan 2026 00:00:00 GMT', 'obsolete'],
  ['Thursday, 01-Jan-26 00:00:00 GMT', 'obsolete'],
  ['yes', 'invalid'],
  ['2026-01-01', 'invalid'],
  ['@1.5', 'invalid'],
  ['', 'invalid'],
];
for (const [value, form] of DEPRECATIONS) {
  test(`Deprecation ${JSON.stringify(value)} is ${form}`, () => {
    const r = parseDeprecation(value);
    if (form === 'invalid') expect(r).toMatchObject({ ok: false, reason: expect.stringContaining('RFC 9745') });
    else expect(r).toMatchObject({ ok: true, form });
  });
}

test('Sunset: not an HTTP-date, earlier than Deprecation, in the past, obsolete format', () => {
  expect(judgeSunset('2028-01-01T00:00:00Z', undefined, DEP_S).problems[0]).toMatch(/not an HTTP-date/);
  expect(judgeSunset('Mon, 01 Dec 2025 00:00:00 GMT', undefined, DEP_S).problems[0]).toMatch(/earlier than Deprecation/);
  const past = judgeSunset('Fri, 02 Jan 2026 00:00:00 GMT', 'Sun, 22 Nov 2026 09:00:00 GMT', DEP_S);
  expect(past.problems).toEqual([]);
  expect(past.warnings[0]).toMatch(/not after the response Date/);
  expect(judgeSunset('Sat Jan  1 00:00:00 2028', undefined, undefined).warnings[0]).toMatch(/asctime/);
});
