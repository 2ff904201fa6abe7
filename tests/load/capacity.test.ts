/**
 * The capacity check (`suites/load/capacity-check.ts`): passes the reference server, and each
 * must-level rule or threshold fails against a server that breaks it, with a line naming it.
 * Runs are 1 s on 127.0.0.1.
 */
import { test, expect } from '@playwright/test';
import { MemoryRateLimitStore, startReferenceServer, type RateDecision, type RatePolicy } from '../../reference-server/app.ts';
import { runCapacityCheck, type CapacityConfig } from '../../suites/load/capacity-check.ts';
import { fakeApi, inventoryHandler } from './helpers.ts';

const KEY = 'test-load-key-0123456789';

function config(baseUrl: string, extra: Partial<CapacityConfig> = {}): CapacityConfig {
  return {
    baseUrl,
    loadKey: KEY,
    mode: 'list',
    durationS: 1,
    connections: 4,
    maxRequests: 20_000,
    timeoutS: 5,
    p99Ms: 1000,
    maxErrorRate: 0.01,
    loopbackOnly: true,
    progress: () => undefined,
    ...extra,
  };
}

test('the reference server passes both capacity runs, and the mix restores the pet it changed', async () => {
  const server = await startReferenceServer({ port: 0 });
  try {
    for (const mode of ['list', 'mix'] as const) {
      const outcome = await runCapacityCheck(config(server.baseUrl, { loadKey: server.keys.load, mode }));
      expect(outcome.failures, mode).toEqual([]);
      expect(outcome.figures.load!.requests).toBeGreaterThan(100);
      expect(outcome.figures.sampled).toBe(100);
      expect(outcome.figures.invalidSamples).toBe(0);
      if (mode === 'mix') {
        expect(outcome.figures.pet?.restored).toBe(true);
        expect(outcome.figures.load!.steps.some((s) => s.startsWith('PATCH '))).toBe(true);
      }
      expect(outcome.evidence.join('\n')).not.toContain(server.keys.load);
    }
  } finally {
    await server.close();
  }
});

test('a breached p99 threshold fails with a line naming LOAD_P99_MS, its limit and the observed value', async () => {
  const api = await fakeApi(inventoryHandler({ delayMs: 40 }));
  try {
    const outcome = await runCapacityCheck(config(api.baseUrl, { p99Ms: 20, connections: 10 }));
    expect(outcome.failures).toHaveLength(1);
    expect(outcome.failures[0]).toMatch(/^LOAD-01 \(thresholds\) threshold LOAD_P99_MS breached: p99 latency (\d+(\.\d+)?) ms, must be < 20 ms$/);
    const observed = Number(/p99 latency ([\d.]+) ms/.exec(outcome.failures[0])![1]);
    expect(observed).toBeGreaterThanOrEqual(40);
    expect(observed).toBe(outcome.figures.load!.latencyMs.p99);
  } finally {
    await api.close();
  }
});

test('too few responses to judge p99 (slow requests still in flight at the end) fail the thresholds, naming LOAD_P99_MS', async () => {
  const api = await fakeApi(inventoryHandler({ delayMs: 600 }));
  try {
    const outcome = await runCapacityCheck(config(api.baseUrl));
    expect(outcome.figures.load!.latencyMs.p99).toBeLessThan(1000); // the p99 of what finished looks fine
    expect(outcome.failures).toContainEqual(expect.stringMatching(/^LOAD-01 \(thresholds\) only \d+ responses in .* at least 100 are needed to judge LOAD_P99_MS/));
  } finally {
    await api.close();
  }
});

test('5xx under load fails, and so does the error-rate threshold', async () => {
  const api = await fakeApi(inventoryHandler({ status: 503 }));
  try {
    const outcome = await runCapacityCheck(config(api.baseUrl));
    expect(outcome.failures).toContainEqual(expect.stringMatching(/^LOAD-01 \(no errors\) \d+ responses under load were 5xx \(503 ×\d+\); expected none$/));
    expect(outcome.failures).toContainEqual('LOAD-01 (thresholds) threshold LOAD_MAX_ERROR_RATE breached: error rate 1, must be <= 0.01');
  } finally {
    await api.close();
  }
});

test('sampled responses that break the schema fail, naming the field', async () => {
  const api = await fakeApi(inventoryHandler({ badItem: true }));
  try {
    const outcome = await runCapacityCheck(config(api.baseUrl));
    expect(outcome.failures).toHaveLength(1);
    expect(outcome.failures[0]).toMatch(/^LOAD-01 \(schemas\) 100 of 100 sampled responses are invalid: GET \/v1\/inventory → 200: Inventory \/0\/quantity: must be integer/);
  } finally {
    await api.close();
  }
});

test('an update the server does not apply as sent leaves the stock changed: the mix fails on restoration', async () => {
  const api = await fakeApi(inventoryHandler({ brokenUpdate: true }));
  try {
    const outcome = await runCapacityCheck(config(api.baseUrl, { mode: 'mix' }));
    expect(outcome.figures.pet?.restored).toBe(false);
    expect(outcome.failures).toContainEqual(
      expect.stringMatching(/^LOAD-01 \(restored\) the stock changed under load was not restored: pet 1: quantity 12 before, restore PATCH → 200, listed afterwards: 13$/),
    );
  } finally {
    await api.close();
  }
});

test('connections dropped with a request outstanding fail the check', async () => {
  let n = 0;
  const handler = inventoryHandler();
  const api = await fakeApi((req, body, res) => (++n % 5 === 0 ? res.socket?.destroy() : handler(req, body, res)));
  try {
    const outcome = await runCapacityCheck(config(api.baseUrl));
    const f = outcome.figures.load!;
    expect(f.socketErrors + f.unanswered).toBeGreaterThan(f.connections);
    expect(outcome.failures).toContainEqual(
      expect.stringMatching(/^LOAD-01 \(no errors\) (\d+ socket errors under load; expected none|\d+ requests got no response and no error .*)$/),
    );
  } finally {
    await api.close();
  }
});

test('a LOAD_KEY that meets its limit stops the load at the first 429, fails naming the prerequisite, and the stock is restored after Retry-After', async () => {
  const log: Array<{ identity: string; now: number; decision: RateDecision }> = [];
  const inner = new MemoryRateLimitStore();
  const store = {
    hit(identity: string, policy: RatePolicy, now: number) {
      const decision = inner.hit(identity, policy, now);
      log.push({ identity, now, decision });
      return decision;
    },
  };
  const server = await startReferenceServer({ port: 0, minuteWindowMs: 3000, banMs: 3000, store });
  try {
    const outcome = await runCapacityCheck(config(server.baseUrl, { loadKey: server.keys.free, mode: 'mix', durationS: 3, maxRetryAfterS: 10 }));
    expect(outcome.failures).toContainEqual(
      expect.stringMatching(/^LOAD-01 \(prerequisite\) LOAD_KEY met its rate limit after \d+ requests \(429, Retry-After \d+ s\); the load stopped at once/),
    );
    expect(outcome.figures.load!.stoppedBy).toBe('status');
    expect(outcome.figures.pet?.restored).toBe(true);
    const free = log.filter((e) => e.identity === 'key:free');
    const first429 = free.findIndex((e) => e.decision.outcome !== 'admitted');
    const deadline = free[first429].now + free[first429].decision.retryAfterSeconds * 1000;
    // Only requests already in flight (one per connection) reach the server before Retry-After has passed.
    const early = free.slice(first429 + 1).filter((e) => e.now < deadline);
    expect(early.length).toBeLessThan(4);
    expect(free.at(-2)!.now).toBeGreaterThanOrEqual(deadline);
  } finally {
    await server.close();
  }
});
