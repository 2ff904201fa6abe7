/**
 * Spec "Versioning" and "Other operations": `/v1` base path, the deprecated `GET /v1/pets/{petId}`
 * with `Deprecation` (RFC 9745) and a future `Sunset` (RFC 8594), and `GET /v1/store/orders`.
 */
import { test, expect } from '../test.ts';
import { DEPRECATED_AT_MS, sunsetFor } from '../../reference-server/versioning/deprecation.ts';
import { bearer, call, expectErrorBody, origin, withServer } from './helpers.ts';

const IMF_FIXDATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;

function expectDeprecation(headers: Record<string, unknown>, context: string): void {
  const deprecation = String(headers.deprecation);
  expect(deprecation, context).toMatch(/^@\d+$/);
  const sunset = String(headers.sunset);
  expect(sunset, context).toMatch(IMF_FIXDATE);
  const date = Date.parse(String(headers.date));
  expect(Date.parse(sunset), `${context}: Sunset is in the future`).toBeGreaterThan(date);
  expect(Date.parse(sunset), `${context}: Sunset is not before Deprecation`).toBeGreaterThanOrEqual(Number(deprecation.slice(1)) * 1000);
  expect(Number(deprecation.slice(1)) * 1000, `${context}: already deprecated`).toBeLessThanOrEqual(date);
}

test.describe('reference server: versioning and named-only operations', () => {
  test('VERSIONING the deprecated pet route carries Deprecation and Sunset on every response', async () => {
    await withServer({}, async (server) => {
      const o = origin(server);
      const found = await call(o, 'GET', '/v1/pets/42', { headers: bearer(server.keys.free) });
      expect(found.status).toBe(200);
      expect(found.json()).toEqual({ id: 42, status: 'available' });
      expectDeprecation(found.headers, '200');
      const big = await call(o, 'GET', '/v1/pets/9223372036854775807', { headers: bearer(server.keys.free) });
      expect(big.text).toBe('{"id":9223372036854775807,"status":"pending"}');
      const missing = await call(o, 'GET', '/v1/pets/404404', { headers: bearer(server.keys.free) });
      expectErrorBody(missing, 404, 'not_found');
      expectDeprecation(missing.headers, '404');
      const bad = await call(o, 'GET', '/v1/pets/abc', { headers: bearer(server.keys.free) });
      expectErrorBody(bad, 400, 'invalid_pet_id');
      expectDeprecation(bad.headers, '400');
      const unauthorized = await call(o, 'GET', '/v1/pets/42');
      expectErrorBody(unauthorized, 401);
      expectDeprecation(unauthorized.headers, '401');
      const list = await call(o, 'GET', '/v1/inventory', { headers: bearer(server.keys.free) });
      expect(list.headers.deprecation, 'other routes are not deprecated').toBeUndefined();
      expect(list.headers.sunset).toBeUndefined();
    });
  });

  test('VERSIONING the sunset stays at least a year ahead and after the deprecation', () => {
    for (const now of [Date.UTC(2026, 0, 1), Date.UTC(2026, 10, 22), Date.UTC(2031, 11, 31, 23, 59)]) {
      expect(sunsetFor(now) - now).toBeGreaterThan(365 * 86_400_000);
      expect(sunsetFor(now)).toBeGreaterThan(DEPRECATED_AT_MS);
    }
  });

  test('VERSIONING store orders is 200 with an empty array; HEAD answers like GET', async () => {
    await withServer({}, async (server) => {
      const reply = await call(origin(server), 'GET', '/v1/store/orders', { headers: bearer(server.keys.free) });
      expect(reply.status).toBe(200);
      expect(reply.json()).toEqual([]);
      const head = await call(origin(server), 'HEAD', '/v1/inventory', { headers: bearer(server.keys.free) });
      expect(head.status).toBe(200);
      expect(head.text).toBe('');
      const get = await call(origin(server), 'GET', '/v1/inventory', { headers: bearer(server.keys.free) });
      expect(head.headers['content-length']).toBe(get.headers['content-length']);
    });
  });
});
