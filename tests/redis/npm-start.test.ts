/**
 * `REDIS_URL=… INSTANCES=3 npm start`, as a user runs it: one address, three processes, limits
 * that hold across them; `INSTANCES` above 1 without `REDIS_URL` stops start-up naming it.
 */
import { expect, test } from '../test.ts';
import { bearer, call, npmStart } from '../reference-server/helpers.ts';
import { startRedisServer } from './helpers.ts';

test('DEPLOY REDIS_URL=… INSTANCES=3 npm start serves one address from three processes whose limit is one', async () => {
  test.setTimeout(90_000);
  const redis = await startRedisServer();
  try {
    const started = await npmStart(
      [],
      { REDIS_URL: redis.url, INSTANCES: '3', REDIS_PREFIX: `npm-start-${Date.now()}:` },
      8,
      async (out) => {
        const inventory = new URL(out.find((l) => l.startsWith('inventory: '))!.slice('inventory: '.length));
        const free = out.find((l) => l.startsWith('key free: '))!.slice('key free: '.length);
        const replies = await Promise.all(
          Array.from({ length: 90 }, () => call(inventory.origin, 'GET', '/v1/store/orders', { headers: bearer(free) })),
        );
        expect(replies.filter((r) => r.status === 200).length, 'admitted of 90 (limit 60)').toBe(60);
      },
    );
    expect(started.lines[0], started.stderr).toMatch(/^instances: 3 \(pids \d+, \d+, \d+\), shared state on Redis$/);
    expect(started.lines[1]).toMatch(/^inventory: http:\/\/127\.0\.0\.1:\d+\/v1$/);
  } finally {
    await redis.stop();
  }
});

test('DEPLOY INSTANCES above 1 without REDIS_URL stops start-up with exit code 2 naming REDIS_URL', async () => {
  const started = await npmStart([], { REDIS_URL: '', INSTANCES: '2' }, 1);
  expect(started.code).toBe(2);
  expect(started.stderr).toContain('INSTANCES=2 needs REDIS_URL');
});
