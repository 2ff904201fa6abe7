/**
 * The autocannon wrapper (`suites/lib/load.ts`): bounded in count and time, loopback-only when
 * asked, progress lines, figures and samples, and the key only ever in the request header.
 */
import { test, expect } from '@playwright/test';
import { assertBounded, breachedThresholds, runLoad, type LoadRunOptions } from '../../suites/lib/load.ts';
import { fakeApi, inventoryHandler } from './helpers.ts';

const KEY = 'wrapper-secret-key-5f3a9c';

function options(url: string, extra: Partial<LoadRunOptions> = {}): LoadRunOptions {
  return {
    label: 'wrapper test',
    url,
    steps: [{ name: 'GET /v1/inventory', path: '/v1/inventory' }],
    authorization: `Bearer ${KEY}`,
    connections: 4,
    durationS: 1,
    maxRequests: 50_000,
    maxDurationS: 10,
    progress: () => undefined,
    ...extra,
  };
}

test('amount: exactly that many requests, every response recorded, the key sent as the Authorization header only', async () => {
  const seen: string[] = [];
  const handler = inventoryHandler();
  const api = await fakeApi((req, body, res) => {
    seen.push(req.headers.authorization ?? '');
    handler(req, body, res);
  });
  const lines: string[] = [];
  try {
    const r = await runLoad(options(api.baseUrl, { durationS: undefined, amount: 300, maxRequests: 300, connections: 300, recordAll: true, sampleSize: 10, progress: (l) => lines.push(l) }));
    expect(r.figures.requests).toBe(300);
    expect(r.figures.sent).toBe(300);
    expect(r.figures.stoppedBy).toBe('amount');
    expect(r.figures.statusCodes).toEqual({ 200: 300 });
    expect(r.responses).toHaveLength(300);
    expect(r.samples).toHaveLength(10);
    expect(r.samples[0].body).toContain('petId');
    expect(r.responses[0].headers['x-ratelimit-limit']).toBe('1000000');
    expect(api.counts.GET).toBe(300);
    expect(new Set(seen)).toEqual(new Set([`Bearer ${KEY}`]));
    expect(JSON.stringify(r)).not.toContain(KEY);
    expect(lines.join('\n')).not.toContain(KEY);
    expect(lines[0]).toBe('[load] start wrapper test: GET /v1/inventory on 300 connection(s), 300 requests (caps: 300 requests, 10 s)');
  } finally {
    await api.close();
  }
});

test('a time-bounded run stops at maxRequests, and prints progress with the time left', async () => {
  const api = await fakeApi(inventoryHandler({ delayMs: 5 }));
  const lines: string[] = [];
  try {
    const r = await runLoad(options(api.baseUrl, { durationS: 3, maxRequests: 200, progressEveryS: 0.5, progress: (l) => lines.push(l) }));
    expect(r.figures.sent).toBeLessThanOrEqual(200);
    expect(api.counts.GET).toBeLessThanOrEqual(200);
    expect(r.figures.stoppedBy).toBe('max-requests');
    const slow = await runLoad(options(api.baseUrl, { durationS: 1.5, progressEveryS: 0.5, progress: (l) => lines.push(l) }));
    expect(slow.figures.stoppedBy).toBe('duration');
    expect(lines.some((l) => /^\[load\] wrapper test: \d+ s, \d+ responses, \d+ s left$/.test(l))).toBe(true);
    expect(lines.at(-1)).toMatch(/^\[load\] done wrapper test: \d+ responses in [\d.]+ s \([\d.]+ req\/s\), p99 [\d.]+ ms, 5xx 0/);
  } finally {
    await api.close();
  }
});

test('a server that never answers cannot hold a run past maxDurationS', async () => {
  const api = await fakeApi(() => undefined);
  try {
    const started = Date.now();
    const r = await runLoad(options(api.baseUrl, { durationS: undefined, amount: 20, maxRequests: 20, maxDurationS: 1.5, timeoutS: 30 }));
    expect(Date.now() - started).toBeLessThan(5000);
    expect(r.figures.stoppedBy).toBe('max-duration');
    expect(r.figures.requests).toBe(0);
    expect(r.figures.unanswered).toBeGreaterThan(0);
  } finally {
    await api.close();
  }
});

test('unbounded or unsafe options are refused before anything is sent', async () => {
  const base = options('http://127.0.0.1:9/v1');
  expect(() => assertBounded({ ...base, durationS: undefined })).toThrow(/exactly one of durationS and amount/);
  expect(() => assertBounded({ ...base, amount: 10 })).toThrow(/exactly one of durationS and amount/);
  expect(() => assertBounded({ ...base, durationS: 20, maxDurationS: 10 })).toThrow(/maxDurationS/);
  expect(() => assertBounded({ ...base, durationS: undefined, amount: 100, maxRequests: 50 })).toThrow(/maxRequests/);
  expect(() => assertBounded({ ...base, maxRequests: Infinity })).toThrow(/maxRequests/);
  await expect(runLoad({ ...base, url: 'http://192.0.2.1/v1', loopbackOnly: true })).rejects.toThrow(/only ever sent to loopback here, not to 192\.0\.2\.1/);
  expect(() => assertBounded({ ...base, url: 'http://[::1]:8080/v1', loopbackOnly: true })).not.toThrow();
});

test('breached thresholds name the variable, the limit and the observed value', () => {
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
