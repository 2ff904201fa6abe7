import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import nock from 'nock';
import {
  test as suiteTest,
  expect,
  expectErrorBody,
  expectStatus,
  createApi,
  NotCertified,
  type Credential,
} from '../../suites/fixtures.ts';
import { probeCredential } from '../../suites/fixtures/api.ts';
import { readEnv } from '../../suites/lib/env.ts';
import { startPacerCoordinator } from '../../suites/pacing/coordinator.ts';
import { pacingClient, type PacingClient } from '../../suites/pacing/client.ts';

/**
 * Hostile responses through the suites' own client (`api` fixture of suites/fixtures.ts): each
 * ends in a clear, redacted failure naming the requirement, never a crash or a hang.
 */

const KEY = 'hostile-test-key-0123456789abcdef';
const ORIGIN = 'http://hostile.test';

/** A real server that accepts connections and never answers: `API_URL` points at it. */
async function silentServer() {
  const sockets = new Set<Socket>();
  const server = http.createServer(() => {
    /* never answers */
  });
  server.on('connection', (s) => sockets.add(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/quickstart`,
    /** Settles when the next request has arrived (and will never be answered). */
    nextRequest: () => new Promise<void>((r) => server.once('request', () => r())),
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

const test = suiteTest.extend<
  { pacing: PacingClient },
  { silent: { url: string; nextRequest(): Promise<void> }; conformance: ReturnType<typeof readEnv> }
>({
  // Each test has its own run-wide pacer: a 429 in one test must not hold the key in the next.
  pacing: async ({}, use) => {
    const coordinator = await startPacerCoordinator({ maxWaitMs: 5000 });
    await use(pacingClient(coordinator.url));
    await coordinator.close();
  },
  silent: [
    async ({}, use) => {
      const s = await silentServer();
      await use(s);
      await s.close();
    },
    { scope: 'worker' },
  ],
  conformance: [
    async ({ silent }, use) => {
      await use(
        readEnv({ BASE_URL: `${ORIGIN}/v1`, API_URL: silent.url, API_KEY: KEY, REQUEST_TIMEOUT_MS: '500', MAX_RETRY_AFTER_S: '5' }),
      );
    },
    { scope: 'worker' },
  ],
});

test.afterEach(() => {
  nock.cleanAll();
});

const RL = { 'X-RateLimit-Limit': '60', 'X-RateLimit-Remaining': '50', 'X-RateLimit-Reset': String(Math.floor(Date.now() / 1000) + 30) };

test('not JSON: an HTML page where the list should be fails INV naming the body, no crash', async ({ api }) => {
  nock(ORIGIN)
    .get('/v1/inventory')
    .reply(200, '<html><body>Service Unavailable</body></html>', { 'Content-Type': 'text/html', ...RL });
  const res = await api.listInventory();
  expect(res.json).toBeUndefined();
  expect(res.jsonError).toBeTruthy();
  nock(ORIGIN)
    .get('/v1/inventory')
    .reply(200, '<html><body>Service Unavailable</body></html>', { 'Content-Type': 'text/html', ...RL });
  await expect(api.inventory('INV-01')).rejects.toThrow(/INV-01 body of GET \/v1\/inventory → 200: expected a JSON array; observed <html>/);
});

test('ERR-01 not JSON: an error answered with plain text is reported as Error-body deviations naming the requirement of the test', async ({
  api,
}) => {
  nock(ORIGIN)
    .patch('/v1/inventory/1')
    .reply(400, 'Bad Request', { 'Content-Type': 'text/plain', ...RL });
  const res = await api.updateInventory(1, { quantity: 'x' });
  expectStatus(res, 400);
  expect(() => expectErrorBody(res)).toThrow(/ERR-01 Error body of PATCH \/v1\/inventory\/1 → 400: expected an Error body/);
  try {
    expectErrorBody(res);
  } catch (e) {
    const msg = (e as Error).message;
    expect(msg).toContain('Content-Type is "text/plain", expected application/json');
    expect(msg).toContain('body is not JSON');
  }
});

test('headers missing: no X-RateLimit-*, no Date, no Content-Type is reported, not a crash', async ({ api }) => {
  nock(ORIGIN).get('/v1/inventory').reply(200, '[]');
  const res = await api.listInventory();
  expect(res.status).toBe(200);
  expect(res.rateLimit.missing).toEqual(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']);
  expect(res.header('date')).toBeUndefined();
  // and the pacer keeps working without them
  nock(ORIGIN).get('/v1/inventory').reply(200, '[]');
  expect((await api.listInventory()).status).toBe(200);
});

test('a 429 without Retry-After leaves the check it interrupted not certified and fails RL-06 itself, naming what is missing', async ({
  conformance,
  pacing,
}) => {
  nock(ORIGIN)
    .get('/v1/inventory')
    .reply(429, '', {
      'X-RateLimit-Limit': '60',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(Math.floor(Date.now() / 1000) + 2),
    });
  const annotations: { type: string; description: string }[] = [];
  const client = createApi({ env: conformance, pacing, annotate: (a) => annotations.push(a) });
  const err = await client.listInventory().then(
    () => undefined,
    (e: Error) => e,
  );
  client.finish();
  expect(err).toBeInstanceOf(NotCertified);
  expect(err?.message).toMatch(/a 429 the check did not plan, on <API_KEY>.*Retry-After: missing.*the 429 itself fails RL-06/);
  expect(err?.message).not.toContain(KEY);
  const met = annotations.filter((a) => a.type === 'met-finding').map((a) => JSON.parse(a.description));
  expect(met.map((f) => f.id)).toContain('RL-06');
  expect(JSON.stringify(annotations)).not.toContain(KEY);
});

test('a Retry-After beyond MAX_RETRY_AFTER_S makes the next request not certified instead of waiting', async ({ conformance, pacing }) => {
  const api = createApi({ env: conformance, pacing, annotate: () => undefined, requirementId: 'RL-08' });
  nock(ORIGIN).get('/v1/inventory').reply(429, '', { 'Retry-After': '3600', Date: new Date().toUTCString() });
  const first = await api.listInventory(undefined, { expect429: true });
  expect(first.status).toBe(429);
  const t0 = Date.now();
  const err = await api.listInventory(undefined, { expect429: true }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(NotCertified);
  expect((err as Error).message).toMatch(
    /RL-08: GET \/v1\/inventory: a 429 on <API_KEY> asked to wait \(Retry-After: 3600\): 3600 s is longer than MAX_RETRY_AFTER_S=5 s.*nothing more is sent on <API_KEY> for the rest of the run/,
  );
  // At once: well under the 5 s of MAX_RETRY_AFTER_S, with room for a busy runner.
  expect(Date.now() - t0).toBeLessThan(2500);
});

/**
 * A request that never gets a complete answer (API_URL points at a server that accepts and never
 * answers) is judged by the list asked for right after it (BASE_URL): a hang of this request only
 * when that comes back at once, else not certified.
 */
const HANG_CASES: {
  name: string;
  /** How the list is answered right after the hang; `silent`: BASE_URL on the silent server too. */
  list: 'at once' | 'after 400 ms' | 'silent';
  /** REQUEST_TIMEOUT_MS: a list answered at once must stay under half of it however busy the runner. */
  timeoutMs: number;
  /** A failure (`fail`) or not certified, with this text. */
  judged: 'fail' | 'not certified';
  says: RegExp;
}[] = [
  {
    name: 'a hang fails within REQUEST_TIMEOUT_MS when the list comes back at once right after it',
    list: 'at once',
    timeoutMs: 2000,
    judged: 'fail',
    says: /MSG-01: POST \/quickstart\/messages: request failed: no complete response within 2000 ms \(REQUEST_TIMEOUT_MS\); the list, asked for right after it with the same key, came back at once \(GET \/v1\/inventory → 200 in \d+ ms\): the server answers other requests/,
  },
  {
    name: 'a hang is not certified when the list right after it takes more than half of REQUEST_TIMEOUT_MS',
    list: 'after 400 ms',
    timeoutMs: 500,
    judged: 'not certified',
    says: /MSG-01: POST \/quickstart\/messages: no complete response within 500 ms \(REQUEST_TIMEOUT_MS\), and the list, asked for right after it with the same key, took \d+ ms \(GET \/v1\/inventory → 200\), more than half of REQUEST_TIMEOUT_MS: the run cannot tell a hang of this request from a server too slow, too busy or down to answer any request/,
  },
  {
    name: 'a server that answers nothing is not certified, never failed',
    list: 'silent',
    timeoutMs: 500,
    judged: 'not certified',
    says: /MSG-01: POST \/quickstart\/messages: no complete response within 500 ms \(REQUEST_TIMEOUT_MS\), and the list, asked for right after it with the same key, got no answer either \(GET \/v1\/inventory: request failed: no complete response within 500 ms \(REQUEST_TIMEOUT_MS\)\): the run cannot tell/,
  },
];

test('the list after a hang goes with the key the request carried, in its plain form, or with none', () => {
  const rows: [Credential, Credential][] = [
    ['api', 'api'],
    ['rate-limit', 'rate-limit'],
    ['none', 'none'],
    [{ key: 'api', format: (k) => `bearer  ${k}` }, 'api'],
    [{ key: 'rate-limit', format: (k) => k }, 'rate-limit'],
    [{ authorization: 'Basic Zm9vOmJhcg==' }, 'none'],
  ];
  for (const [given, probe] of rows) expect(probeCredential(given), JSON.stringify(given)).toEqual(probe);
});

for (const c of HANG_CASES) {
  test(c.name, async ({ conformance, pacing, silent }) => {
    const base = { ...conformance, requestTimeoutMs: c.timeoutMs };
    const env = c.list === 'silent' ? { ...base, baseUrl: silent.url.replace(/\/quickstart$/, '/v1') } : base;
    const api = createApi({ env, pacing, annotate: () => undefined, requirementId: 'MSG-01' });
    if (c.list !== 'silent')
      nock(ORIGIN)
        .get('/v1/inventory')
        .delay(c.list === 'at once' ? 0 : 400)
        .reply(200, '[]', { 'Content-Type': 'application/json', ...RL });
    const t0 = Date.now();
    const err = await api.sendMessage({ message: 'hello' }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err, 'the request fails').toBeInstanceOf(Error);
    expect(err instanceof NotCertified ? 'not certified' : 'fail', err?.message).toBe(c.judged);
    expect(err?.message).toMatch(c.says);
    expect(Date.now() - t0, 'the hang and the list right after it, each within its deadline').toBeLessThan(2 * c.timeoutMs + 3000);
    expect(err?.message, 'no key').not.toContain(KEY);
  });
}

test('a hang judged by a process held a second or more while it waited is not certified, never failed', async ({
  conformance,
  pacing,
  silent,
}) => {
  const api = createApi({ env: { ...conformance, requestTimeoutMs: 1500 }, pacing, annotate: () => undefined, requirementId: 'MSG-01' });
  // Held once the request has reached the server, so the hold falls inside the wait, whatever came before.
  void silent.nextRequest().then(() => {
    const until = Date.now() + 1200;
    while (Date.now() < until) {
      /* a runner too busy to schedule this process */
    }
  });
  const err = await api.sendMessage({ message: 'hello' }).then(
    () => undefined,
    (e: Error) => e,
  );
  expect(err).toBeInstanceOf(NotCertified);
  expect(err?.message).toMatch(
    /MSG-01: POST \/quickstart\/messages: no complete response within 1500 ms \(REQUEST_TIMEOUT_MS\), but this process was held \d+ ms from running while it waited/,
  );
});

test('a huge body (20 MB) is read, reported abbreviated, and does not crash the client', async ({ conformance, pacing }) => {
  // Its own deadline: 20 MB through the mock on a busy runner can take longer than the hang's 500 ms.
  const api = createApi({ env: { ...conformance, requestTimeoutMs: 15_000 }, pacing, annotate: () => undefined, requirementId: 'INV-01' });
  const huge = 'x'.repeat(20 * 1024 * 1024);
  nock(ORIGIN)
    .get('/v1/inventory')
    .reply(200, huge, { 'Content-Type': 'application/json', ...RL });
  const err = await api.inventory('INV-01').then(
    () => undefined,
    (e: Error) => e,
  );
  expect(err?.message).toMatch(/INV-01 body of GET \/v1\/inventory → 200: expected a JSON array; observed /);
  expect(err!.message.length).toBeLessThan(2000);
  expect(err!.message).toContain(`(${huge.length} chars)`);
});

test('a connection reset mid-response is a clear "request failed", not a crash', async ({ api }) => {
  nock(ORIGIN).get('/v1/inventory').replyWithError('socket hang up');
  await expect(api.listInventory()).rejects.toThrow(/GET \/v1\/inventory: request failed: socket hang up/);
});

test('a key echoed back by a hostile server is redacted everywhere the suite writes it', async ({ api }, testInfo) => {
  nock(ORIGIN)
    .get('/v1/inventory')
    .reply(401, JSON.stringify({ code: 'bad', message: `key ${KEY} is unknown`, status: 401 }), {
      'Content-Type': 'application/json',
      'X-Echo': `Bearer ${KEY}`,
    });
  const res = await api.listInventory();
  expect(res.text).not.toContain(KEY);
  expect(res.text).toContain('<API_KEY>');
  expect(JSON.stringify(res.headers)).not.toContain(KEY);
  expect(JSON.stringify(testInfo.annotations)).not.toContain(KEY);
});
