/**
 * Spec "Limits" and "Authentication" rule 5, over HTTP: X-RateLimit-* on every kind of response,
 * 429 + Retry-After + Error body, recovery after waiting, the ban and its end, exactness under
 * concurrency, per-address limits without a key, configurable enterprise limits, async stores.
 */
import { Agent } from 'node:http';
import { test, expect } from '../test.ts';
import { MemoryRateLimitStore, type RateLimitStore } from '../../reference-server/app.ts';
import { StoreUnavailableError } from '../../reference-server/errors/api-error.ts';
import {
  bearer,
  call,
  expectErrorBody,
  expectRateHeaders,
  origin,
  parseRaw,
  rawExchange,
  freshWindow,
  sleep,
  withServer,
} from './helpers.ts';

/** Waits until just after a boundary of a window of `ms`, so a burst stays inside one window. */
async function alignToWindow(ms: number): Promise<void> {
  const into = Date.now() % ms;
  await sleep(ms - into + 15);
}

test.describe('reference server: rate limits over HTTP', () => {
  test('LIMITS every kind of response carries X-RateLimit-* and Date', async () => {
    await withServer({ maxBodyBytes: 1024, anonymousLimits: { minute: 1000, day: 10000 } }, async (server) => {
      const o = origin(server);
      const key = bearer(server.keys.business);
      const json = { ...key, 'content-type': 'application/json' };
      const replies: [string, number, { status: number; headers: Record<string, unknown> }][] = [
        ['list', 200, await call(o, 'GET', '/v1/inventory', { headers: key })],
        ['HEAD list', 200, await call(o, 'HEAD', '/v1/inventory', { headers: key })],
        ['update', 200, await call(o, 'PATCH', '/v1/inventory/1', { headers: json, body: '{"quantity":3}' })],
        ['message', 201, await call(o, 'POST', '/quickstart/messages', { headers: json, body: '{"message":"m"}' })],
        ['deprecated pet', 200, await call(o, 'GET', '/v1/pets/1', { headers: key })],
        ['orders', 200, await call(o, 'GET', '/v1/store/orders', { headers: key })],
        ['400 invalid JSON', 400, await call(o, 'PATCH', '/v1/inventory/1', { headers: json, body: '{' })],
        ['400 message without content type', 400, await call(o, 'POST', '/quickstart/messages', { headers: key, body: '{"message":"m"}' })],
        ['401', 401, await call(o, 'GET', '/v1/inventory')],
        ['404 pet', 404, await call(o, 'PATCH', '/v1/inventory/404404', { headers: json, body: '{"quantity":3}' })],
        ['404 route', 404, await call(o, 'GET', '/v2/inventory', { headers: key })],
        ['405', 405, await call(o, 'DELETE', '/v1/inventory', { headers: key })],
        ['413', 413, await call(o, 'PATCH', '/v1/inventory/1', { headers: json, body: `{"quantity":1,"x":"${'a'.repeat(2000)}"}` })],
        ['414', 414, await call(o, 'GET', `/v1/inventory?${'a'.repeat(9000)}`, { headers: key })],
        [
          '415',
          415,
          await call(o, 'PATCH', '/v1/inventory/1', { headers: { ...key, 'content-type': 'text/plain' }, body: '{"quantity":3}' }),
        ],
        ['417', 417, await call(o, 'GET', '/v1/inventory', { headers: { ...key, expect: 'teapot' } })],
      ];
      const raw = [
        ['400 malformed request line', 400, parseRaw(await rawExchange(o, 'GARBAGE\r\n\r\n'))],
        [
          '400 two Content-Length',
          400,
          parseRaw(await rawExchange(o, 'PATCH /v1/inventory/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n{}')),
        ],
        [
          '431 huge header',
          431,
          parseRaw(await rawExchange(o, `GET /v1/inventory HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)),
        ],
      ] as const;
      for (const [label, status, reply] of [...replies, ...raw]) {
        expect(reply.status, label).toBe(status);
        expectRateHeaders(reply.headers, label);
        expect(String(reply.headers.date), `${label} Date`).toMatch(/GMT$/);
      }
      for (const [label, status, reply] of raw) {
        expectErrorBody({ status: reply.status, headers: reply.headers, text: reply.body }, status);
        expect(reply.headers.connection, label).toBe('close');
      }
    });
  });

  test('LIMITS plan limits show in X-RateLimit-Limit and Remaining counts down', async () => {
    await withServer({ enterpriseLimits: { minute: 7, day: 70 } }, async (server) => {
      const o = origin(server);
      await freshWindow(60_000, 10_000);
      const expected = { free: 60, pro: 300, business: 1000, enterprise: 7, load: 1_000_000_000 };
      for (const [name, limit] of Object.entries(expected)) {
        const key = server.keys[name as keyof typeof expected];
        const first = expectRateHeaders((await call(o, 'GET', '/v1/inventory', { headers: bearer(key) })).headers, name);
        const second = expectRateHeaders((await call(o, 'GET', '/v1/store/orders', { headers: bearer(key) })).headers, name);
        expect(first.limit, name).toBe(limit);
        expect(first.remaining, name).toBe(limit - 1);
        expect(second.remaining, name).toBe(limit - 2);
      }
    });
  });

  test('LIMITS over the limit: 429, Retry-After rounded up, Error body, no execution, recovery after waiting', async () => {
    await withServer({ minuteWindowMs: 3_000, banThreshold: 100 }, async (server) => {
      const o = origin(server);
      const key = bearer(server.keys.free);
      const agent = new Agent({ keepAlive: true, maxSockets: 4 });
      try {
        await alignToWindow(3_000);
        const replies = await Promise.all(Array.from({ length: 60 }, () => call(o, 'GET', '/v1/inventory', { headers: key, agent })));
        expect(replies.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
        const refused = await call(o, 'PATCH', '/v1/inventory/1', {
          headers: { ...key, 'content-type': 'application/json' },
          body: '{"quantity":4242}',
          agent,
        });
        const receivedAt = Date.now();
        expectErrorBody(refused, 429, 'rate_limited');
        const headers = expectRateHeaders(refused.headers, '429');
        expect(headers.remaining).toBe(0);
        expect(headers.limit).toBe(60);
        const retryAfter = String(refused.headers['retry-after']);
        expect(retryAfter).toMatch(/^[0-9]+$/);
        expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
        expect(Number(retryAfter)).toBeLessThanOrEqual(3);
        expect(headers.reset * 1000).toBeLessThanOrEqual(receivedAt + Number(retryAfter) * 1000);
        await sleep(Number(retryAfter) * 1000 - (Date.now() - receivedAt));
        const recovered = await call(o, 'GET', '/v1/inventory', { headers: key, agent });
        expect(recovered.status, recovered.text).toBe(200);
        expect(recovered.text).not.toContain('4242');
      } finally {
        agent.destroy();
      }
    });
  });

  test('LIMITS retrying before Retry-After bans the key for banMs; the ban ends', async () => {
    await withServer({ minuteWindowMs: 3_000, banThreshold: 3, banMs: 3_500 }, async (server) => {
      const o = origin(server);
      const key = bearer(server.keys.free);
      const agent = new Agent({ keepAlive: true, maxSockets: 4 });
      try {
        await alignToWindow(3_000);
        await Promise.all(Array.from({ length: 60 }, () => call(o, 'GET', '/v1/store/orders', { headers: key, agent })));
        const codes: string[] = [];
        for (let i = 0; i < 3; i++) {
          const r = await call(o, 'GET', '/v1/store/orders', { headers: key, agent });
          expectErrorBody(r, 429);
          codes.push((JSON.parse(r.text) as { code: string }).code);
        }
        expect(codes).toEqual(['rate_limited', 'rate_limited', 'rate_limited']);
        const banned = await call(o, 'GET', '/v1/store/orders', { headers: key, agent });
        const bannedAt = Date.now();
        expectErrorBody(banned, 429, 'key_banned');
        expect(banned.headers['retry-after']).toBe('4'); // 3.5 s rounded up (longer than the window's rest)
        expect(expectRateHeaders(banned.headers).remaining).toBe(0);
        const other = await call(o, 'GET', '/v1/store/orders', { headers: bearer(server.keys.pro), agent });
        expect(other.status, 'a ban is per key').toBe(200);
        await sleep(1_000);
        const during = await call(o, 'GET', '/v1/store/orders', { headers: key, agent });
        expectErrorBody(during, 429, 'key_banned');
        expect(Number(during.headers['retry-after'])).toBeLessThanOrEqual(3);
        await sleep(4_000 - (Date.now() - bannedAt));
        const after = await call(o, 'GET', '/v1/store/orders', { headers: key, agent });
        expect(after.status, after.text).toBe(200);
      } finally {
        agent.destroy();
      }
    });
  });

  test('LIMITS 600 concurrent requests on a free key admit exactly 60', async () => {
    await withServer({}, async (server) => {
      const o = origin(server);
      const agent = new Agent({ keepAlive: true, maxSockets: 600 });
      try {
        await freshWindow(60_000, 10_000);
        const replies = await Promise.all(
          Array.from({ length: 600 }, (_, i) =>
            i % 3 === 0
              ? call(o, 'PATCH', '/v1/inventory/7', {
                  headers: { ...bearer(server.keys.free), 'content-type': 'application/json' },
                  body: `{"quantity":${i}}`,
                  agent,
                })
              : call(o, 'GET', '/v1/inventory', { headers: bearer(server.keys.free), agent }),
          ),
        );
        const statuses = replies.map((r) => r.status);
        expect(statuses.filter((s) => s === 200).length).toBe(60);
        expect(statuses.filter((s) => s === 429).length).toBe(540);
        const remaining = replies
          .filter((r) => r.status === 200)
          .map((r) => Number(r.headers['x-ratelimit-remaining']))
          .sort((a, b) => a - b);
        expect(remaining).toEqual(Array.from({ length: 60 }, (_, i) => i));
      } finally {
        agent.destroy();
      }
    });
  });

  test('LIMITS an async store is honoured and stays exact when it is atomic', async () => {
    const memory = new MemoryRateLimitStore();
    const asyncStore: RateLimitStore = {
      hit: (identity, policy, now) => new Promise((resolve) => setImmediate(() => resolve(memory.hit(identity, policy, now)))),
    };
    await withServer({ store: asyncStore }, async (server) => {
      const o = origin(server);
      const agent = new Agent({ keepAlive: true, maxSockets: 100 });
      try {
        await freshWindow(60_000, 10_000);
        const replies = await Promise.all(
          Array.from({ length: 100 }, () => call(o, 'GET', '/v1/inventory', { headers: bearer(server.keys.free), agent })),
        );
        expect(replies.filter((r) => r.status === 200).length).toBe(60);
        expect(replies.filter((r) => r.status === 429).length).toBe(40);
        const unauth = await call(o, 'GET', '/v1/inventory', { agent });
        expectErrorBody(unauth, 401);
        expectRateHeaders(unauth.headers);
      } finally {
        agent.destroy();
      }
    });
  });

  test('LIMITS a failing store is a 500 Error body with rate-limit headers, never a hang', async () => {
    const broken: RateLimitStore = { hit: () => Promise.reject(new Error('store down')) };
    const throwing: RateLimitStore = {
      hit: () => {
        throw new Error('store down');
      },
    };
    const original = console.error;
    console.error = () => undefined;
    try {
      for (const store of [broken, throwing]) {
        await withServer({ store }, async (server) => {
          const reply = await call(origin(server), 'GET', '/v1/inventory', { headers: bearer(server.keys.free) });
          expectErrorBody(reply, 500, 'internal_error');
          expectRateHeaders(reply.headers);
        });
      }
    } finally {
      console.error = original;
    }
  });

  test('LIMITS a store that gives up late answers 503 with the Reset of the window current when it gave up, never one already past', async () => {
    // One-second windows and a store that fails after 2.2 s: a Reset taken when the request arrived
    // would be at least a second in the past by the time the 503 is written.
    const slow: RateLimitStore = {
      hit: () => new Promise((_, reject) => setTimeout(() => reject(new StoreUnavailableError('rate-limit store')), 2_200)),
    };
    await withServer({ store: slow, minuteWindowMs: 1_000 }, async (server) => {
      for (const headers of [bearer(server.keys.free), {}]) {
        const reply = await call(origin(server), 'GET', '/v1/inventory', { headers });
        expectErrorBody(reply, 503, 'service_unavailable');
        // A Reset taken on arrival is at least 1.2 s before the give-up; the give-up's own is after
        // it. A second of room lets a busy runner read the answer late.
        expect(Number(reply.headers['x-ratelimit-reset']) * 1000, 'X-RateLimit-Reset of the current window').toBeGreaterThan(
          Date.now() - 1000,
        );
      }
    });
  });

  test('LIMITS traffic without a valid key is limited per client address', async () => {
    await withServer({ anonymousLimits: { minute: 5, day: 100 }, banThreshold: 100 }, async (server) => {
      const o = origin(server);
      await freshWindow(60_000, 10_000);
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) {
        const reply = await call(o, 'GET', '/v1/inventory', { headers: i % 2 ? { authorization: 'Bearer wrong' } : {} });
        expect(expectRateHeaders(reply.headers).limit).toBe(5);
        statuses.push(reply.status);
        if (reply.status === 429) expect(reply.headers['retry-after']).toMatch(/^[0-9]+$/);
      }
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
      const keyed = await call(o, 'GET', '/v1/inventory', { headers: bearer(server.keys.free) });
      expect(keyed.status, 'a key has its own limits').toBe(200);
    });
  });

  test('LIMITS the day window is enforced', async () => {
    await withServer({ enterpriseLimits: { minute: 100, day: 3 }, banThreshold: 100 }, async (server) => {
      const o = origin(server);
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++)
        statuses.push((await call(o, 'GET', '/v1/store/orders', { headers: bearer(server.keys.enterprise) })).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
    });
  });
});
