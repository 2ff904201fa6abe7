/**
 * The load engine (`suites/load/engine.ts`): bounded in count and time, an open model that offers a
 * fixed rate and drops what finds every slot busy, loopback-only when asked, each response
 * attributed to its own request, `Connection: close` answered normally, and the key only ever in
 * the request header.
 */
import { test, expect } from '../test.ts';
import { assertBounded, breachedThresholds, percentile, runLoad, type LoadRunOptions } from '../../suites/load/engine.ts';
import { fakeApi, inventoryHandler } from './helpers.ts';
import { heldFinding } from '../../suites/load/http.ts';

const KEY = 'wrapper-secret-key-5f3a9c';

function options(url: string, extra: Partial<LoadRunOptions> = {}): LoadRunOptions {
  return {
    label: 'wrapper test',
    url,
    steps: [{ name: 'GET /v1/inventory', path: '/v1/inventory' }],
    authorization: `Bearer ${KEY}`,
    model: { kind: 'open', ratePerS: 200, durationS: 1 },
    connections: 8,
    maxRequests: 50_000,
    maxDurationS: 10,
    progress: () => undefined,
    ...extra,
  };
}

test('a burst sends exactly its count, records every response, and the key only as the Authorization header', async () => {
  const handler = inventoryHandler();
  const api = await fakeApi(handler);
  const lines: string[] = [];
  try {
    const r = await runLoad(
      options(api.baseUrl, {
        model: { kind: 'burst', count: 300 },
        maxRequests: 300,
        connections: 300,
        recordAll: true,
        sampleSize: 10,
        progress: (l) => lines.push(l),
      }),
    );
    expect(r.figures.requests).toBe(300);
    expect(r.figures.sent).toBe(300);
    expect(r.figures.stoppedBy).toBe('amount');
    expect(r.figures.statusCodes).toEqual({ 200: 300 });
    expect(r.responses).toHaveLength(300);
    expect(r.samples).toHaveLength(10);
    expect(r.samples[0].body).toContain('petId');
    expect(api.counts.GET).toBe(300);
    expect(new Set(api.authorizations)).toEqual(new Set([`Bearer ${KEY}`]));
    expect(JSON.stringify(r)).not.toContain(KEY);
    expect(lines.join('\n')).not.toContain(KEY);
    expect(lines[0]).toBe(
      '[load] start wrapper test: GET /v1/inventory, a burst of 300 requests on up to 300 connection(s) (caps: 300 requests, 10 s)',
    );
  } finally {
    await api.close();
  }
});

test('a burst stops sending at the first stopping status; requests already sent complete', async () => {
  let n = 0;
  const handler = inventoryHandler();
  const api = await fakeApi((req, body, res) => (++n === 5 ? res.writeHead(429, { 'Retry-After': '1' }).end() : handler(req, body, res)));
  try {
    const r = await runLoad(
      options(api.baseUrl, { model: { kind: 'burst', count: 50 }, maxRequests: 50, connections: 2, stopOnStatus: [429], recordAll: true }),
    );
    expect(r.figures.stoppedBy).toBe('status');
    expect(r.stoppers).toHaveLength(1);
    // Two in flight at most: after the 429 only the one already sent is answered.
    expect(r.figures.sent).toBeLessThanOrEqual(6);
    expect(api.counts.GET).toBe(r.figures.sent);
  } finally {
    await api.close();
  }
});

test('a burst larger than its connections goes in waves: nothing of it leaves while an answer of it is unread, so a 429 in its middle stops it before anything follows', async () => {
  // The server answers the 3rd request with a 429 after 300 ms and the others at once; it logs
  // each arrival with the number of requests of the burst still unanswered at that moment.
  const handler = inventoryHandler();
  const arrivals: number[] = [];
  let n = 0;
  let open = 0;
  const api = await fakeApi((req, body, res) => {
    const i = ++n;
    arrivals.push(open);
    open++;
    res.on('finish', () => open--);
    if (i === 3) setTimeout(() => res.writeHead(429, { 'Retry-After': '1' }).end(), 300);
    else handler(req, body, res);
  });
  try {
    const r = await runLoad(
      options(api.baseUrl, { model: { kind: 'burst', count: 12 }, maxRequests: 12, connections: 4, stopOnStatus: [429], recordAll: true }),
    );
    // The first wave: 4 at once, the 429 among them; nothing after it.
    expect(r.figures.stoppedBy).toBe('status');
    expect(r.figures.sent).toBe(4);
    expect(api.counts.GET).toBe(4);
    expect(r.figures.statusCodes).toEqual({ 200: 3, 429: 1 });
    // Without a 429, the waves of 4 each start on a server with nothing of the burst unanswered.
    n = 100;
    arrivals.length = 0;
    const whole = await runLoad(options(api.baseUrl, { model: { kind: 'burst', count: 12 }, maxRequests: 12, connections: 4 }));
    expect(whole.figures.sent).toBe(12);
    expect(whole.figures.connectionsOpened, 'each request of a burst on a connection of its own').toBe(12);
    expect([arrivals[0], arrivals[4], arrivals[8]], 'requests unanswered when each wave began').toEqual([0, 0, 0]);
  } finally {
    await api.close();
  }
});

test('the open model offers its rate for its duration whatever the answers, and drops arrivals that find every slot busy', async () => {
  const fast = await fakeApi(inventoryHandler());
  const slow = await fakeApi(inventoryHandler({ delayMs: 300 }));
  try {
    const r = await runLoad(options(fast.baseUrl, { model: { kind: 'open', ratePerS: 100, durationS: 1 }, connections: 64 }));
    expect(r.figures.sent + r.figures.dropped).toBeGreaterThanOrEqual(95);
    expect(r.figures.sent + r.figures.dropped).toBeLessThanOrEqual(101);
    expect(r.figures.requests).toBe(r.figures.sent);
    expect(r.figures.unanswered).toBe(0);
    // 100 req/s of 300 ms requests need 30 slots; with 4, most arrivals are dropped, none queued.
    const s = await runLoad(options(slow.baseUrl, { model: { kind: 'open', ratePerS: 100, durationS: 1 }, connections: 4 }));
    expect(s.figures.sent).toBeLessThanOrEqual(20);
    expect(s.figures.dropped).toBeGreaterThan(70);
    expect(s.figures.requests).toBe(s.figures.sent);
    expect(s.figures.latencyMs.p50).toBeGreaterThanOrEqual(300);
  } finally {
    await fast.close();
    await slow.close();
  }
});

test('saturation (closed model) stops at maxRequests; progress lines show the time left', async () => {
  const api = await fakeApi(inventoryHandler({ delayMs: 5 }));
  const lines: string[] = [];
  try {
    const r = await runLoad(
      options(api.baseUrl, {
        model: { kind: 'closed', durationS: 3 },
        maxRequests: 200,
        progressEveryS: 0.5,
        progress: (l) => lines.push(l),
      }),
    );
    expect(r.figures.sent).toBe(200);
    expect(api.counts.GET).toBe(200);
    expect(r.figures.stoppedBy).toBe('max-requests');
    const d = await runLoad(
      options(api.baseUrl, { model: { kind: 'closed', durationS: 1.2 }, progressEveryS: 0.5, progress: (l) => lines.push(l) }),
    );
    expect(d.figures.stoppedBy).toBe('duration');
    expect(lines.some((l) => /^\[load\] wrapper test: \d+ s, \d+ responses, \d+ s left$/.test(l))).toBe(true);
    expect(lines.at(-1)).toMatch(/^\[load\] done wrapper test: \d+ responses in [\d.]+ s \([\d.]+ req\/s\), p99 [\d.]+ ms, 5xx 0/);
  } finally {
    await api.close();
  }
});

test('a server that closes the connection after every complete response: every request answered, one connection each', async () => {
  const api = await fakeApi(inventoryHandler({ close: true }));
  try {
    const r = await runLoad(options(api.baseUrl, { model: { kind: 'open', ratePerS: 300, durationS: 1 }, connections: 64 }));
    expect(r.figures.sent + r.figures.dropped).toBeGreaterThan(250);
    expect(r.figures.sent).toBeGreaterThan(100);
    expect(r.figures.requests).toBe(r.figures.sent);
    expect(r.figures.socketErrors + r.figures.timeouts + r.figures.unanswered).toBe(0);
    expect(r.figures.connectionsOpened).toBe(r.figures.requests);
  } finally {
    await api.close();
  }
});

test('a kept-alive connection is reused while fresh and closed by the client once idle, never reused as the server closes it', async () => {
  const api = await fakeApi(inventoryHandler());
  try {
    const fresh = await runLoad(options(api.baseUrl, { model: { kind: 'open', ratePerS: 4, durationS: 1 } }));
    expect(fresh.figures.requests).toBe(4);
    // Reused: one connection, unless a busy runner fired an arrival before the answer before it
    // was read; a client without keep-alive opens 4.
    expect(fresh.figures.connectionsOpened).toBeLessThan(4);
    // Arrivals 2.5 s apart: the idle connection was closed (FREE_SOCKET_IDLE_MS), the next opens a new one.
    const idle = await runLoad(options(api.baseUrl, { model: { kind: 'open', ratePerS: 0.4, durationS: 2.6 } }));
    expect(idle.figures.requests).toBe(2);
    expect(idle.figures.connectionsOpened).toBe(2);
    expect(idle.figures.socketErrors).toBe(0);
  } finally {
    await api.close();
  }
});

test('each response is attributed to the request that caused it', async () => {
  const api = await fakeApi(inventoryHandler());
  try {
    const steps = [
      { name: 'GET list', path: '/v1/inventory' },
      { name: 'PATCH pet', method: 'PATCH' as const, path: '/v1/inventory/1', body: '{"quantity":3}', contentType: 'application/json' },
      { name: 'GET missing', path: '/v1/nothing' },
    ];
    const r = await runLoad(options(api.baseUrl, { steps, model: { kind: 'open', ratePerS: 300, durationS: 1 }, sampleSize: 200 }));
    for (const s of r.samples) {
      const body = JSON.parse(s.body);
      if (s.step === 'GET list') expect(Array.isArray(body), s.body).toBe(true);
      if (s.step === 'PATCH pet') expect(body).toEqual({ petId: 1, quantity: 3, status: 'available' });
      if (s.step === 'GET missing') expect(s.status).toBe(404);
    }
    expect(new Set(r.samples.map((s) => s.step))).toEqual(new Set(steps.map((s) => s.name)));
    expect(r.figures.bySteps['GET missing'].statusCodes).toEqual({ 404: expect.any(Number) });
  } finally {
    await api.close();
  }
});

test('a server that never answers: every request is a timeout, and the run ends', async () => {
  const api = await fakeApi(() => undefined);
  try {
    const started = Date.now();
    const r = await runLoad(
      options(api.baseUrl, { model: { kind: 'burst', count: 20 }, maxRequests: 20, connections: 20, timeoutS: 1, maxDurationS: 5 }),
    );
    expect(Date.now() - started).toBeLessThan(4000);
    expect(r.figures.timeouts).toBe(20);
    expect(r.figures.requests).toBe(0);
    const hard = await runLoad(
      options(api.baseUrl, { model: { kind: 'burst', count: 5 }, maxRequests: 5, connections: 5, timeoutS: 30, maxDurationS: 1 }),
    );
    expect(hard.figures.stoppedBy).toBe('max-duration');
    expect(hard.figures.unanswered).toBe(5);
  } finally {
    await api.close();
  }
});

test('a server that never answers, judged by a process held 1.2 s while it waited: every timeout is held, none counts as an error', async () => {
  const api = await fakeApi(() => undefined);
  try {
    const hold = setTimeout(() => {
      const until = Date.now() + 1200;
      while (Date.now() < until) {
        /* a runner too busy to schedule this process */
      }
    }, 100);
    const r = await runLoad(
      options(api.baseUrl, { model: { kind: 'burst', count: 5 }, maxRequests: 5, connections: 5, timeoutS: 1.5, maxDurationS: 6 }),
    );
    clearTimeout(hold);
    expect(r.figures.timeouts).toBe(5);
    expect(r.figures.heldTimeouts, 'timeouts judged by a held process').toBe(5);
    expect(r.figures.longestHoldMs).toBeGreaterThanOrEqual(1000);
    expect(r.figures.errorRate, 'held timeouts are not errors of the server').toBe(0);
    const kept = await runLoad(
      options(api.baseUrl, { model: { kind: 'burst', count: 5 }, maxRequests: 5, connections: 5, timeoutS: 1, maxDurationS: 5 }),
    );
    expect([kept.figures.timeouts, kept.figures.heldTimeouts, kept.figures.errorRate], 'a process that kept running').toEqual([5, 0, 1]);
    expect(heldFinding('LOAD-01', 'answered', 5, 1234)).toMatchObject({
      level: 'not-certified',
      message: expect.stringContaining('this process was held up to 1234 ms from running while they waited'),
    });
  } finally {
    await api.close();
  }
});

test("latencies measured while this process was held keep a floor with the hold taken out, a lower bound of the server's own", async () => {
  const api = await fakeApi(inventoryHandler({ delayMs: 30 }));
  try {
    const hold = setTimeout(() => {
      const until = Date.now() + 400;
      while (Date.now() < until) {
        /* a runner too busy to schedule this process */
      }
    }, 10);
    const r = await runLoad(options(api.baseUrl, { model: { kind: 'burst', count: 5 }, maxRequests: 5, connections: 5, timeoutS: 5 }));
    clearTimeout(hold);
    expect(r.figures.requests).toBe(5);
    expect(r.figures.latencyMs.p99, 'as measured: the hold included').toBeGreaterThanOrEqual(400);
    // The 400 ms hold, as the process's 100 ms ticks see it (at least 300 ms late), is taken out;
    // a runner that delays the answers further adds to both figures alike.
    expect(r.figures.latencyMs.p99 - r.figures.latencyFloorMs.p99, 'the hold taken out').toBeGreaterThanOrEqual(290);
    expect(r.figures.latencyFloorMs.p99, 'never below what the server took').toBeGreaterThanOrEqual(25);
  } finally {
    await api.close();
  }
});

test('unbounded or unsafe options are refused before anything is sent', async () => {
  const base = options('http://127.0.0.1:9/v1');
  expect(() => assertBounded({ ...base, model: { kind: 'open', ratePerS: 10, durationS: 20 }, maxDurationS: 10 })).toThrow(/maxDurationS/);
  expect(() => assertBounded({ ...base, model: { kind: 'burst', count: 100 }, maxRequests: 50 })).toThrow(/maxRequests/);
  expect(() => assertBounded({ ...base, maxRequests: Infinity })).toThrow(/maxRequests/);
  expect(() => assertBounded({ ...base, model: { kind: 'open', ratePerS: 0, durationS: 1 } })).toThrow(/ratePerS/);
  await expect(runLoad({ ...base, url: 'http://192.0.2.1/v1', loopbackOnly: true })).rejects.toThrow(
    /only ever sent to loopback here, not to 192\.0\.2\.1/,
  );
  expect(() => assertBounded({ ...base, url: 'http://[::1]:8080/v1', loopbackOnly: true })).not.toThrow();
});

test('percentiles are nearest-rank, and breached thresholds name the variable, the limit and the observed value', () => {
  const values = Array.from({ length: 100 }, (_, i) => i + 1);
  expect([percentile(values, 50), percentile(values, 99), percentile(values, 100), percentile([], 99)]).toEqual([50, 99, 100, 0]);
  expect(
    breachedThresholds([
      { name: 'LOAD_P99_MS', what: 'p99 latency', observed: 812, limit: 500, op: '<', unit: 'ms' },
      { name: 'LOAD_MAX_ERROR_RATE', what: 'error rate', observed: 0.01, limit: 0.01, op: '<=' },
      { name: 'LOAD_MAX_ERROR_RATE', what: 'error rate', observed: 0.02, limit: 0.01, op: '<=' },
    ]),
  ).toEqual([
    'threshold LOAD_P99_MS breached: p99 latency 812 ms, must be < 500 ms',
    'threshold LOAD_MAX_ERROR_RATE breached: error rate 0.02, must be <= 0.01',
  ]);
});
