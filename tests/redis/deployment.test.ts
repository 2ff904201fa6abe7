/**
 * A multi-instance deployment (`startDeployment`: 3 cluster workers on one address, Redis shared):
 * every instance answers the same limits, Reset and Retry-After; a ban earned through one holds
 * on all; an update answered by one is listed by the others. The same deployment with per-process
 * limiters over-admits a burst: that is what the shared store prevents, and it shows the requests
 * (each on a fresh connection) are spread over the instances.
 */
import { expect, test } from '../test.ts';
import { startDeployment, type RunningDeployment } from '../../reference-server/deployment/start.ts';
import { bearer, call, expectErrorBody, expectRateHeaders, freshWindow, origin, sleep } from '../reference-server/helpers.ts';
import { keysFileWithExtras, startRedisServer, type RedisServer } from './helpers.ts';

test.describe.configure({ mode: 'serial' });

const WINDOW_MS = 12_000;
let redis: RedisServer;
let keysFile: ReturnType<typeof keysFileWithExtras>;
let deployment: RunningDeployment;

test.beforeAll(async () => {
  test.setTimeout(90_000);
  redis = await startRedisServer();
  keysFile = keysFileWithExtras();
  deployment = await startDeployment({
    instances: 3,
    redisUrl: redis.url,
    server: { keysFile: keysFile.file, minuteWindowMs: WINDOW_MS, banThreshold: 3, banMs: 2_000 },
  });
});
test.afterAll(async () => {
  await deployment?.close();
  await redis?.stop();
  keysFile?.remove();
});

/** One request on a fresh connection (the cluster hands each connection to the next instance). */
const fresh = (method: string, path: string, key: string, body?: string) =>
  call(origin(deployment), method, path, {
    headers: { ...bearer(key), ...(body ? { 'content-type': 'application/json' } : {}) },
    body,
  });

type Reply = Awaited<ReturnType<typeof fresh>>;

/**
 * The key's first 60 requests of one window, one after another on fresh connections, then three
 * more at once. On a busy runner they may outlast the window's 8 s left: one of the sixty with
 * another Reset than the first, or one of the three admitted with another, means the window ended
 * under them, and all 63 are sent again from the start of the next window (the harness's pace,
 * never the deployment's count; three tries).
 */
async function sixtyAndThreeInOneWindow(key: string): Promise<{ sixty: Reply[]; three: Reply[] }> {
  await freshWindow(WINDOW_MS, 8_000);
  for (let attempt = 1; ; attempt++) {
    const sixty: Reply[] = [];
    const inFirstWindow = (r: Reply) => r.headers['x-ratelimit-reset'] === sixty[0]!.headers['x-ratelimit-reset'];
    while (sixty.length < 60) {
      const reply = await fresh('GET', '/v1/inventory', key);
      sixty.push(reply);
      if (!inFirstWindow(reply)) break;
    }
    if (inFirstWindow(sixty.at(-1)!)) {
      const three = await Promise.all([0, 1, 2].map(() => fresh('GET', '/v1/inventory', key)));
      // Admitted under another Reset: a new window began under them. Anything else is judged.
      if (!three.some((r) => r.status === 200 && !inFirstWindow(r))) return { sixty, three };
    }
    if (attempt === 3)
      throw new Error(`63 requests did not fit in one ${WINDOW_MS / 1000} s window in three tries: the runner is too slow for this test`);
    await sleep(WINDOW_MS - (Date.now() % WINDOW_MS) + 50);
  }
}

test.describe('multi-instance deployment on Redis', () => {
  test('DEPLOY three instances count one key as one: Remaining falls by one per request across instances, one Reset, the 61st is refused everywhere with one Retry-After', async () => {
    test.setTimeout(60_000);
    expect(deployment.pids).toHaveLength(3);
    const key = keysFile.keys.exact;
    const { sixty, three: refused } = await sixtyAndThreeInOneWindow(key);
    const resets = new Set<string>();
    sixty.forEach((reply, i) => {
      expect(reply.status, `request ${i + 1}`).toBe(200);
      const { limit, remaining } = expectRateHeaders(reply.headers);
      expect(limit).toBe(60);
      expect(remaining, `request ${i + 1}: Remaining`).toBe(59 - i);
      resets.add(String(reply.headers['x-ratelimit-reset']));
    });
    expect(resets.size, 'one X-RateLimit-Reset for the window').toBe(1);
    for (const reply of refused) {
      expectErrorBody(reply, 429, 'rate_limited');
      expect(reply.headers['x-ratelimit-reset']).toBe([...resets][0]);
    }
    const retryAfter = new Set(refused.map((r) => Number(r.headers['retry-after'])));
    expect(Math.max(...retryAfter) - Math.min(...retryAfter), 'Retry-After agrees across instances').toBeLessThanOrEqual(1);
  });

  test('DEPLOY a ban earned through one instance holds on all, and ends for all', async () => {
    test.setTimeout(60_000);
    await freshWindow(WINDOW_MS, 6_000);
    const key = keysFile.keys.ban;
    for (let i = 0; i < 5; i++) expect((await fresh('GET', '/v1/store/orders', key)).status).toBe(200);
    expectErrorBody(await fresh('GET', '/v1/store/orders', key), 429, 'rate_limited');
    let banned;
    for (let strike = 1; strike <= 3; strike++) banned = await fresh('GET', '/v1/store/orders', key);
    expectErrorBody(banned!, 429, 'key_banned');
    const during = await Promise.all([0, 1, 2, 3, 4, 5].map(() => fresh('GET', '/v1/store/orders', key)));
    for (const reply of during) expectErrorBody(reply, 429, 'key_banned');
    const waitS = Math.max(...during.map((r) => Number(r.headers['retry-after'])));
    expect(waitS).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, waitS * 1000 + 200));
    const after = await Promise.all([0, 1, 2].map(() => fresh('GET', '/v1/store/orders', key)));
    for (const reply of after) expect(reply.status, 'after the ban every instance admits').toBe(200);
  });

  test('DEPLOY an update answered by one instance is listed by every instance', async () => {
    const key = deployment.keys.business;
    const quantity = 1000 + Math.floor(Math.random() * 1000);
    const update = await fresh('PATCH', '/v1/inventory/9007199254740993', key, JSON.stringify({ quantity }));
    expect(update.status, update.text).toBe(200);
    const lists = await Promise.all([0, 1, 2, 3, 4, 5].map(() => fresh('GET', '/v1/inventory', key)));
    for (const list of lists) expect(list.text).toContain(`{"petId":9007199254740993,"quantity":${quantity},`);
  });

  test('DEPLOY with per-process limiters the same deployment admits a burst beyond the limit (the shared store is what holds it)', async () => {
    test.setTimeout(90_000);
    const perProcess = await startDeployment({
      instances: 3,
      redisUrl: redis.url,
      perProcessLimiter: true,
      server: { keysFile: keysFile.file, minuteWindowMs: WINDOW_MS },
    });
    try {
      await freshWindow(WINDOW_MS, 6_000);
      const burst = async (target: RunningDeployment, key: string) => {
        const replies = await Promise.all(
          Array.from({ length: 150 }, () => call(origin(target), 'GET', '/v1/store/orders', { headers: bearer(key) })),
        );
        return replies.filter((r) => r.status === 200).length;
      };
      const [shared, separate] = await Promise.all([burst(deployment, keysFile.keys.burst), burst(perProcess, keysFile.keys.perprocess)]);
      expect(shared, 'shared limiter: admitted of 150 (limit 60)').toBe(60);
      expect(separate, 'per-process limiters: admitted of 150 (limit 60)').toBeGreaterThan(60);
    } finally {
      await perProcess.close();
    }
  });
});
