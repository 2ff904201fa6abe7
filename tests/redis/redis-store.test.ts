/**
 * The Redis stores against a real redis-server: the Lua limiter decides exactly as `decide()`
 * (every outcome, header value and ban, hit for hit), stays exact under concurrency from two
 * servers, and the Redis inventory is shared and int64-exact. Also: a missing redis-server makes
 * a test fail naming the install command, never skip.
 */
import { expect, test } from '../test.ts';
import { Agent } from 'node:http';
import { Redis } from 'ioredis';
import { startReferenceServer, type RunningReferenceServer } from '../../reference-server/app.ts';
import { RedisRateLimitStore } from '../../reference-server/rate-limit/redis-store.ts';
import { MemoryRateLimitStore } from '../../reference-server/rate-limit/store.ts';
import type { RatePolicy } from '../../reference-server/rate-limit/policy.ts';
import { answeringPid, INSTALL_HINT } from '../../reference-server/shared-state/redis-server.ts';
import { bearer, call, expectRateHeaders, origin, parseJson } from '../reference-server/helpers.ts';
import { startRedisServer, type RedisServer } from './helpers.ts';

test.describe.configure({ mode: 'serial' });

let redis: RedisServer;
test.beforeAll(async () => {
  redis = await startRedisServer();
});
test.afterAll(async () => {
  await redis?.stop();
});

/** A small deterministic generator (mulberry32), so a failure is reproducible. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test.describe('Redis stores', () => {
  test('REDIS the Lua limiter decides exactly as decide(): outcome, Limit, Remaining, Reset, Retry-After and ban, hit for hit', async () => {
    const client = new Redis(redis.url);
    try {
      const store = new RedisRateLimitStore(client, { prefix: `equivalence-${Date.now()}:`, clock: 'caller' });
      const memory = new MemoryRateLimitStore();
      const policies: RatePolicy[] = [
        {
          windows: [
            { name: 'minute', limit: 3, ms: 1_000 },
            { name: 'day', limit: 7, ms: 5_000 },
          ],
          banThreshold: 3,
          banMs: 1_500,
        },
        {
          windows: [
            { name: 'minute', limit: 5, ms: 700 },
            { name: 'day', limit: 9, ms: 3_100 },
          ],
          banThreshold: 2,
          banMs: 300,
        },
      ];
      const next = random(20261123);
      let now = 1_764_000_000_000;
      const outcomes = new Set<string>();
      for (let i = 0; i < 600; i++) {
        now += Math.floor(next() * (next() < 0.8 ? 60 : 900));
        const p = i % 2;
        const identity = `id${i % 4}`;
        const expected = memory.hit(identity, policies[p], now);
        const observed = await store.hit(identity, policies[p], now);
        outcomes.add(expected.outcome);
        expect(observed, `hit ${i} of ${identity} at ${now}`).toEqual(expected);
      }
      expect([...outcomes].sort(), 'the sequence reached every outcome').toEqual(['admitted', 'banned', 'limited']);
    } finally {
      client.disconnect();
    }
  });

  test('REDIS two servers on one Redis admit exactly the limit of a concurrent burst between them, with one Reset', async () => {
    const prefix = `burst-${Date.now()}:`;
    const servers: RunningReferenceServer[] = [];
    for (let i = 0; i < 2; i++)
      servers.push(await startReferenceServer({ port: 0, host: '127.0.0.1', redisUrl: redis.url, redisPrefix: prefix, redisSeed: 'keep' }));
    const agent = new Agent({ keepAlive: true, maxSockets: 50 });
    try {
      const key = bearer(servers[0].keys.free);
      const replies = await Promise.all(
        Array.from({ length: 200 }, (_, i) => call(origin(servers[i % 2]), 'GET', '/v1/store/orders', { headers: key, agent })),
      );
      const admitted = replies.filter((r) => r.status === 200);
      expect(admitted.length, 'admitted of 200 concurrent requests over two servers (limit 60)').toBe(60);
      expect(replies.filter((r) => r.status === 429).length).toBe(140);
      const remaining = admitted.map((r) => expectRateHeaders(r.headers).remaining).sort((a, b) => a - b);
      expect(remaining, 'each admitted request has its own count').toEqual(Array.from({ length: 60 }, (_, i) => i));
      expect(new Set(admitted.map((r) => r.headers['x-ratelimit-reset'])).size).toBeLessThanOrEqual(2);
    } finally {
      agent.destroy();
      for (const s of servers) await s.close();
    }
  });

  test('REDIS the inventory is shared: an update on one server is listed by the other, int64 ids exact', async () => {
    const prefix = `inventory-${Date.now()}:`;
    const a = await startReferenceServer({ port: 0, host: '127.0.0.1', redisUrl: redis.url, redisPrefix: prefix });
    const b = await startReferenceServer({ port: 0, host: '127.0.0.1', redisUrl: redis.url, redisPrefix: prefix, redisSeed: 'keep' });
    try {
      const key = bearer(a.keys.business);
      const before = await call(origin(b), 'GET', '/v1/inventory', { headers: key });
      const memory = await startReferenceServer({ port: 0, host: '127.0.0.1' });
      const seed = await call(origin(memory), 'GET', '/v1/inventory', { headers: bearer(memory.keys.business) });
      await memory.close();
      expect(before.text, 'the Redis inventory starts as the in-memory seed, byte for byte').toBe(seed.text);
      for (const [petId, quantity] of [
        ['9007199254740993', 41],
        ['9223372036854775807', 7],
      ] as const) {
        const update = await call(origin(a), 'PATCH', `/v1/inventory/${petId}`, {
          headers: { ...key, 'content-type': 'application/json' },
          body: JSON.stringify({ quantity }),
        });
        expect(update.status, update.text).toBe(200);
        expect(update.text).toBe(
          `{"petId":${petId},"quantity":${quantity},"status":${JSON.stringify((parseJson(update.text) as { status: string }).status)}}`,
        );
        const list = await call(origin(b), 'GET', '/v1/inventory', { headers: key });
        expect(list.text, `the other server lists ${petId} with quantity ${quantity}`).toContain(
          `{"petId":${petId},"quantity":${quantity},`,
        );
        const pet = await call(origin(b), 'GET', `/v1/pets/${petId}`, { headers: key });
        expect(pet.status).toBe(200);
      }
      const unknown = await call(origin(b), 'PATCH', '/v1/inventory/123456789', {
        headers: { ...key, 'content-type': 'application/json' },
        body: '{"quantity":1}',
      });
      expect(unknown.status).toBe(404);
      const restarted = await startReferenceServer({
        port: 0,
        host: '127.0.0.1',
        redisUrl: redis.url,
        redisPrefix: prefix,
        redisSeed: 'keep',
      });
      const kept = await call(origin(restarted), 'GET', '/v1/inventory', { headers: key });
      await restarted.close();
      expect(kept.text, 'an instance joining with redisSeed keep does not reset the shared inventory').toContain(
        '{"petId":9007199254740993,"quantity":41,',
      );
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('REDIS a redis-server that cannot be started fails with the install command, and so does an unreachable REDIS_URL at start-up', async () => {
    await expect(startRedisServer({ binary: '/nonexistent/redis-server' })).rejects.toThrow(INSTALL_HINT);
    expect(INSTALL_HINT).toContain('apt-get install redis-server');
    const closed = `redis://127.0.0.1:${redis.port + 1}`;
    await expect(startReferenceServer({ port: 0, host: '127.0.0.1', redisUrl: closed })).rejects.toThrow(
      /cannot reach the Redis of REDIS_URL \(127\.0\.0\.1:\d+\)/,
    );
  });
  test('REDIS a redis-server answers as itself: several started at once get their own ports, and a port another one holds is refused, never shared', async () => {
    const started = await Promise.all(Array.from({ length: 3 }, () => startRedisServer()));
    try {
      expect(new Set(started.map((r) => r.port)).size, 'each server on its own port').toBe(3);
      for (const r of started) expect(await answeringPid(r.port), `the server on port ${r.port} is the one started there`).toBe(r.pid);
    } finally {
      await Promise.all(started.map((r) => r.stop()));
    }
    await expect(startRedisServer({ port: redis.port }), 'a given port held by another redis-server').rejects.toThrow(
      `port ${redis.port} was taken by another redis-server`,
    );
    expect(await answeringPid(redis.port), 'the holder keeps running').toBe(redis.pid);
  });
});
