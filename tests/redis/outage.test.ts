/**
 * Failure of the shared store: a real redis-server is stopped under a running server and started
 * again. While it is down every request gets a 503 Error body with the rate-limit headers and a
 * Retry-After, at once (no hang, never an admission without counting, no crash); when it is back
 * the same server admits again by itself. A Redis that hangs (SIGSTOP) is the same: 503 once the
 * command timeout (2 s) passes, admitted again when it resumes.
 */
import { expect, test } from '../test.ts';
import { startReferenceServer } from '../../reference-server/app.ts';
import { bearer, call, expectErrorBody, expectRateHeaders, origin, sleep } from '../reference-server/helpers.ts';
import { startRedisServer } from './helpers.ts';

test('OUTAGE Redis down: 503 Error bodies with rate-limit headers and Retry-After, without waiting for Redis, nothing admitted; Redis back: the server admits again', async () => {
  test.setTimeout(60_000);
  const redis = await startRedisServer();
  const server = await startReferenceServer({ port: 0, host: '127.0.0.1', redisUrl: redis.url, rateLimitFields: true });
  try {
    const o = origin(server);
    const key = bearer(server.keys.pro);
    expect((await call(o, 'GET', '/v1/inventory', { headers: key })).status).toBe(200);
    await redis.stop();
    const paths: [string, string, string?][] = [
      ['GET', '/v1/inventory'],
      ['PATCH', '/v1/inventory/1', '{"quantity":3}'],
      ['GET', '/v1/pets/1'],
      ['POST', '/quickstart/messages', '{"message":"hi"}'],
    ];
    for (let round = 0; round < 3; round++) {
      for (const [method, path, body] of paths) {
        const started = Date.now();
        const reply = await call(o, method, path, { headers: { ...key, 'content-type': 'application/json' }, body });
        expect(Date.now() - started, `${method} ${path} answered without waiting for Redis`).toBeLessThan(2_500);
        expectErrorBody(reply, 503, 'service_unavailable');
        const { limit, remaining } = expectRateHeaders(reply.headers, `${method} ${path}`);
        expect(limit).toBe(300);
        expect(remaining).toBe(0);
        expect(reply.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
        expect(reply.headers['ratelimit-policy']).toBe('"minute";q=300;w=60');
      }
      const unauth = await call(o, 'GET', '/v1/inventory');
      expectErrorBody(unauth, 503, 'service_unavailable');
    }
    await redis.restart();
    let status = 0;
    for (let i = 0; i < 40 && status !== 200; i++) {
      await sleep(250);
      status = (await call(o, 'GET', '/v1/inventory', { headers: key })).status;
    }
    expect(status, 'the server admits again once Redis is back').toBe(200);
    const update = await call(o, 'PATCH', '/v1/inventory/1', {
      headers: { ...key, 'content-type': 'application/json' },
      body: '{"quantity":3}',
    });
    expect(update.status).toBe(200);
  } finally {
    await server.close();
    await redis.stop();
  }
});

test('OUTAGE Redis hung (SIGSTOP): 503 after the 2 s command timeout, never a hang; resumed (SIGCONT): admitted again', async () => {
  test.setTimeout(60_000);
  const redis = await startRedisServer();
  const server = await startReferenceServer({ port: 0, host: '127.0.0.1', redisUrl: redis.url });
  const pid = redis.pid!;
  try {
    const o = origin(server);
    const key = bearer(server.keys.pro);
    expect((await call(o, 'GET', '/v1/inventory', { headers: key })).status).toBe(200);
    process.kill(pid, 'SIGSTOP');
    try {
      const started = Date.now();
      const replies = await Promise.all([0, 1, 2].map(() => call(o, 'GET', '/v1/inventory', { headers: key })));
      expect(Date.now() - started, 'answered within the command timeout and a margin').toBeLessThan(5_000);
      for (const reply of replies) {
        expectErrorBody(reply, 503, 'service_unavailable');
        expectRateHeaders(reply.headers);
      }
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    let status = 0;
    for (let i = 0; i < 40 && status !== 200; i++) {
      await sleep(250);
      status = (await call(o, 'GET', '/v1/inventory', { headers: key })).status;
    }
    expect(status, 'admitted again once Redis resumes').toBe(200);
  } finally {
    await server.close();
    await redis.stop();
  }
});
