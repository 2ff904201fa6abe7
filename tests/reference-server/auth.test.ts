/**
 * Spec "Authentication": bearer scheme on every route; 401 + Error body + WWW-Authenticate for
 * missing, empty, malformed, other-scheme, bare and unknown keys; case-insensitive scheme,
 * case-sensitive token; keys compared by digest and never logged.
 */
import { inspect } from 'node:util';
import { Agent } from 'node:http';
import { test, expect } from '../test.ts';
import { KeyRing } from '../../reference-server/auth/keys.ts';
import { authenticate, sameString } from '../../reference-server/auth/bearer.ts';
import { ApiError } from '../../reference-server/errors/api-error.ts';
import { bearer, call, expectErrorBody, expectRateHeaders, origin, freshWindow, withServer } from './helpers.ts';

const ROUTES: { method: string; path: string; body?: string; type?: string }[] = [
  { method: 'GET', path: '/v1/inventory' },
  { method: 'PATCH', path: '/v1/inventory/1', body: '{"quantity":5}', type: 'application/json' },
  { method: 'POST', path: '/quickstart/messages', body: '{"message":"hi"}', type: 'application/json' },
  { method: 'GET', path: '/v1/pets/1' },
  { method: 'GET', path: '/v1/store/orders' },
];

type Case = { label: string; authorization: (key: string) => string | string[] | undefined; error: boolean };

const REJECTED: Case[] = [
  { label: 'missing header', authorization: () => undefined, error: false },
  { label: 'empty header', authorization: () => '', error: true },
  { label: '"Bearer" without a token', authorization: () => 'Bearer', error: true },
  { label: '"Bearer" and spaces only', authorization: () => 'Bearer    ', error: true },
  { label: 'Basic scheme', authorization: () => 'Basic dXNlcjpwYXNzd29yZA==', error: true },
  { label: 'Basic scheme carrying the key', authorization: (k) => `Basic ${k}`, error: true },
  { label: 'Token scheme', authorization: (k) => `Token ${k}`, error: true },
  { label: 'bare key without a scheme', authorization: (k) => k, error: true },
  { label: 'unknown key', authorization: () => 'Bearer ik_free_00000000000000000000000000000000', error: true },
  { label: 'key in the wrong case', authorization: (k) => `Bearer ${k.toUpperCase()}`, error: true },
  { label: 'key with a suffix', authorization: (k) => `Bearer ${k}x`, error: true },
  { label: 'key prefix', authorization: (k) => `Bearer ${k.slice(0, -1)}`, error: true },
  { label: 'two Authorization headers', authorization: (k) => [`Bearer ${k}`, `Bearer ${k}`], error: true },
];

const ACCEPTED: string[] = ['Bearer', 'bearer', 'BEARER', 'bEaReR'];

test.describe('reference server: bearer authentication', () => {
  test('AUTH every rejected credential on every route yields 401, an Error body and a Bearer challenge', async () => {
    await withServer({}, async (server) => {
      for (const route of ROUTES) {
        for (const c of REJECTED) {
          const authorization = c.authorization(server.keys.free);
          const headers: Record<string, string | string[]> = {};
          if (authorization !== undefined) headers.authorization = authorization;
          if (route.type) headers['content-type'] = route.type;
          const reply = await call(origin(server), route.method, route.path, { headers, body: route.body });
          const context = `${route.method} ${route.path} with ${c.label}`;
          expectErrorBody(reply, 401, c.label === 'missing header' ? 'missing_credentials' : 'invalid_credentials');
          const challenge = String(reply.headers['www-authenticate']);
          expect(challenge, context).toMatch(/^Bearer realm="inventory"/);
          if (c.error) expect(challenge, context).toContain('error="invalid_token"');
          else expect(challenge, context).not.toContain('error=');
          expectRateHeaders(reply.headers, context);
        }
      }
    });
  });

  test('AUTH the scheme is case-insensitive and the token exact on every route', async () => {
    await withServer({}, async (server) => {
      for (const route of ROUTES) {
        for (const scheme of ACCEPTED) {
          const headers: Record<string, string> = { authorization: `${scheme} ${server.keys.pro}` };
          if (route.type) headers['content-type'] = route.type;
          const reply = await call(origin(server), route.method, route.path, { headers, body: route.body });
          expect(reply.status, `${route.method} ${route.path} with scheme ${scheme}: ${reply.text}`).toBeLessThan(300);
        }
      }
      const spaced = await call(origin(server), 'GET', '/v1/inventory', { headers: { authorization: `Bearer   ${server.keys.pro}` } });
      expect(spaced.status).toBe(200);
    });
  });

  test('AUTH an unknown route without a key is 401, with a key 404', async () => {
    await withServer({}, async (server) => {
      expectErrorBody(await call(origin(server), 'GET', '/v1/nothing-here'), 401);
      expectErrorBody(await call(origin(server), 'GET', '/v1/nothing-here', { headers: bearer(server.keys.free) }), 404, 'route_not_found');
    });
  });

  test('AUTH a connection that authenticated once is still checked on every request', async () => {
    await withServer({}, async (server) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const o = origin(server);
        await freshWindow(60_000, 10_000);
        const first = await call(o, 'GET', '/v1/inventory', { headers: bearer(server.keys.free), agent });
        expect(first.status).toBe(200);
        expect(first.headers['x-ratelimit-limit']).toBe('60');
        const wrong = await call(o, 'GET', '/v1/inventory', { headers: bearer(`${server.keys.free}x`), agent });
        expectErrorBody(wrong, 401, 'invalid_credentials');
        const none = await call(o, 'GET', '/v1/inventory', { agent });
        expectErrorBody(none, 401, 'missing_credentials');
        const pro = await call(o, 'GET', '/v1/inventory', { headers: bearer(server.keys.pro), agent });
        expect(pro.headers['x-ratelimit-limit']).toBe('300');
        const again = await call(o, 'GET', '/v1/inventory', { headers: bearer(server.keys.free), agent });
        expect(again.headers['x-ratelimit-limit']).toBe('60');
        expect(Number(again.headers['x-ratelimit-remaining'])).toBe(58);
      } finally {
        agent.destroy();
      }
    });
  });

  test('AUTH a rejected update does not change the inventory', async () => {
    await withServer({}, async (server) => {
      const o = origin(server);
      const before = await call(o, 'GET', '/v1/inventory', { headers: bearer(server.keys.free) });
      const reply = await call(o, 'PATCH', '/v1/inventory/1', {
        headers: { authorization: 'Bearer nope', 'content-type': 'application/json' },
        body: '{"quantity":999}',
      });
      expectErrorBody(reply, 401);
      const after = await call(o, 'GET', '/v1/inventory', { headers: bearer(server.keys.free) });
      expect(after.text).toBe(before.text);
    });
  });

  test('AUTH the key ring keeps digests only and lookups compare digests', () => {
    const key = 'ik_test_0123456789abcdef';
    const record = { name: 'free', plan: 'free' as const, identity: 'key:free', policy: { windows: [], banThreshold: 1, banMs: 1 } };
    const ring = new KeyRing([{ key, record }]);
    expect(inspect(ring, { depth: 5, showHidden: true })).not.toContain(key);
    expect(ring.lookup(key)).toBe(record);
    expect(ring.lookup(key.slice(0, -1))).toBeUndefined();
    expect(ring.lookup(`${key} `)).toBeUndefined();
    const connection = {};
    expect(authenticate(['Authorization', `bearer ${key}`], ring, connection)).toBe(record);
    expect(authenticate(['authorization', `Bearer ${key}`], ring, connection)).toBe(record);
    expect(authenticate(['AUTHORIZATION', `Bearer ${key}x`], ring, connection)).toBeInstanceOf(ApiError);
    expect(inspect(connection, { showHidden: true })).toContain('record');
    expect([
      sameString('abc', 'abc'),
      sameString('abc', 'abd'),
      sameString('abc', 'xbc'),
      sameString('abc', 'ab'),
      sameString('', ''),
    ]).toEqual([true, false, false, false, true]);
  });

  test('AUTH keys never reach the server output', async () => {
    const written: string[] = [];
    const original = { log: console.log, error: console.error, warn: console.warn, out: process.stdout.write, err: process.stderr.write };
    const capture = (...args: unknown[]): void => void written.push(args.map(String).join(' '));
    console.log = capture;
    console.error = capture;
    console.warn = capture;
    process.stdout.write = ((chunk: unknown) => (written.push(String(chunk)), true)) as typeof process.stdout.write;
    process.stderr.write = ((chunk: unknown) => (written.push(String(chunk)), true)) as typeof process.stderr.write;
    let keys: string[] = [];
    try {
      await withServer({}, async (server) => {
        keys = Object.values(server.keys);
        for (const key of keys) {
          await call(origin(server), 'GET', '/v1/inventory', { headers: bearer(key) });
          await call(origin(server), 'GET', '/v1/inventory', { headers: { authorization: `Basic ${key}` } });
          await call(origin(server), 'PATCH', '/v1/inventory/1', { headers: bearer(key), body: '{bad' });
        }
      });
    } finally {
      Object.assign(console, { log: original.log, error: original.error, warn: original.warn });
      process.stdout.write = original.out;
      process.stderr.write = original.err;
    }
    expect(keys.length).toBe(5);
    for (const key of keys) expect(written.join('\n')).not.toContain(key);
  });
});
