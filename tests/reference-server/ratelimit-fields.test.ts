/**
 * The IETF `RateLimit` / `RateLimit-Policy` fields (draft-ietf-httpapi-ratelimit-headers), an
 * option of the reference server: absent by default; when switched on, present on every kind of
 * response (200, 401, 404, 429, a ban, a parser-level 400) and in agreement with `X-RateLimit-*`:
 * q = Limit, r = Remaining, t = Reset − now on success and = Retry-After on a 429, w = the window.
 */
import { expect, test } from '../test.ts';
import { bearer, call, origin, parseRaw, rawExchange, withServer } from './helpers.ts';

const POLICY = /^"(minute|day)";q=(\d+);w=(\d+)$/;
const STATE = /^"(minute|day)";r=(\d+);t=(\d+)$/;

/** Parses both fields and checks them against X-RateLimit-* and Retry-After. */
function expectAgreement(headers: Record<string, unknown>, windowS: number, context: string): void {
  const policy = POLICY.exec(String(headers['ratelimit-policy']));
  const state = STATE.exec(String(headers.ratelimit));
  expect(policy, `${context}: RateLimit-Policy ${String(headers['ratelimit-policy'])}`).not.toBeNull();
  expect(state, `${context}: RateLimit ${String(headers.ratelimit)}`).not.toBeNull();
  expect(state![1], `${context}: one policy name`).toBe(policy![1]);
  expect(Number(policy![2]), `${context}: q = X-RateLimit-Limit`).toBe(Number(headers['x-ratelimit-limit']));
  expect(Number(policy![3]), `${context}: w`).toBe(windowS);
  expect(Number(state![2]), `${context}: r = X-RateLimit-Remaining`).toBe(Number(headers['x-ratelimit-remaining']));
  const t = Number(state![3]);
  if (headers['retry-after'] !== undefined) expect(t, `${context}: t = Retry-After`).toBe(Number(headers['retry-after']));
  const untilReset = Number(headers['x-ratelimit-reset']) - Math.floor(Date.now() / 1000);
  expect(Math.abs(t - untilReset), `${context}: t = Reset − now (±1 s)`).toBeLessThanOrEqual(1);
}

test.describe('reference server: IETF RateLimit fields', () => {
  test('RATELIMIT-FIELDS are not sent by default', async () => {
    await withServer({}, async (server) => {
      const reply = await call(origin(server), 'GET', '/v1/inventory', { headers: bearer(server.keys.free) });
      expect(reply.status).toBe(200);
      expect(reply.headers.ratelimit).toBeUndefined();
      expect(reply.headers['ratelimit-policy']).toBeUndefined();
    });
  });

  test('RATELIMIT-FIELDS when on, every kind of response carries both, agreeing with X-RateLimit-* and Retry-After', async () => {
    await withServer({ rateLimitFields: true, minuteWindowMs: 30_000, banThreshold: 2, banMs: 1_000 }, async (server) => {
      const o = origin(server);
      const key = bearer(server.keys.free);
      expectAgreement((await call(o, 'GET', '/v1/inventory', { headers: key })).headers, 30, '200');
      expectAgreement((await call(o, 'GET', '/v1/inventory')).headers, 30, '401');
      expectAgreement((await call(o, 'GET', '/v1/nowhere', { headers: key })).headers, 30, '404');
      const raw = parseRaw(await rawExchange(o, 'GET /v1/inventory HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n'));
      expect(raw.status).toBe(400);
      expectAgreement(raw.headers, 30, 'parser-level 400');
      let reply;
      // The windows are clock-aligned: one may end during the loop on a busy runner and give the
      // key its whole limit again, so the loop may take the limit (60) twice over before its 429.
      for (let i = 0; i < 180 && (reply = await call(o, 'GET', '/v1/store/orders', { headers: key })).status === 200; i++);
      expect(reply!.status).toBe(429);
      expectAgreement(reply!.headers, 30, '429');
      for (let i = 0; i < 2; i++) reply = await call(o, 'GET', '/v1/store/orders', { headers: key });
      expect(JSON.parse(reply!.text).code).toBe('key_banned');
      expect(reply!.headers.ratelimit).toMatch(/^"minute";r=0;t=\d+$/);
      expect(reply!.headers.ratelimit).toBe(`"minute";r=0;t=${reply!.headers['retry-after']}`);
    });
  });
});
