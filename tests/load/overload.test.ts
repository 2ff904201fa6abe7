/**
 * The overload check (`suites/load/overload-check.ts`) against the reference server: it catches a
 * racy limiter, passes the exact one (which admits exactly the limit under a burst of 500
 * concurrent requests), waits for a fresh window, and never sends before a Retry-After has passed.
 * Every server is on 127.0.0.1, port 0, with short windows.
 */
import { test, expect } from '@playwright/test';
import {
  decide,
  MemoryRateLimitStore,
  newRateState,
  startReferenceServer,
  type RateDecision,
  type RateLimitStore,
  type RatePolicy,
  type RateState,
} from '../../reference-server/app.ts';
import { judgeBurst, runOverloadCheck, type OverloadConfig } from '../../suites/load/overload-check.ts';
import { runLoad } from '../../suites/lib/load.ts';

/**
 * A limiter store with the classic race: it reads the counters, awaits (a round trip to a shared
 * store), then writes back what it computed from the stale read.
 */
class RacyRateLimitStore implements RateLimitStore {
  private readonly states = new Map<string, RateState>();

  async hit(identity: string, policy: RatePolicy, now: number): Promise<RateDecision> {
    const stored = this.states.get(identity) ?? newRateState(policy);
    const copy: RateState = structuredClone(stored);
    await new Promise((resolve) => setTimeout(resolve, 2));
    const decision = decide(copy, policy, now);
    this.states.set(identity, copy);
    return decision;
  }
}

/** The exact in-memory store, recording what it decided and when (server clock, epoch ms). */
class RecordingStore implements RateLimitStore {
  readonly inner = new MemoryRateLimitStore();
  readonly log: Array<{ identity: string; now: number; decision: RateDecision }> = [];

  hit(identity: string, policy: RatePolicy, now: number): RateDecision {
    const decision = this.inner.hit(identity, policy, now);
    this.log.push({ identity, now, decision });
    return decision;
  }
}

const quiet = () => undefined;

function config(baseUrl: string, keys: { free: string; pro: string }, extra: Partial<OverloadConfig> = {}): OverloadConfig {
  return {
    baseUrl,
    rateLimitKey: keys.free,
    otherKey: keys.pro,
    burstMax: 3000,
    burstConnections: 500,
    maxRetryAfterS: 20,
    otherKeyThresholdMs: 5000,
    timeoutS: 10,
    loopbackOnly: true,
    progress: quiet,
    ...extra,
  };
}

test('a racy limiter (read, await, write) fails the over-admission check', async () => {
  const server = await startReferenceServer({ port: 0, minuteWindowMs: 3000, banMs: 3000, store: new RacyRateLimitStore() });
  try {
    const outcome = await runOverloadCheck(config(server.baseUrl, server.keys));
    const admission = outcome.failures.filter((l) => l.startsWith('LOAD-02 (admission) over-admission'));
    expect(admission.length, outcome.failures.join('\n')).toBeGreaterThan(0);
    expect(admission[0]).toMatch(/\d+ requests succeeded in the window whose X-RateLimit-Reset is \d+, more than its X-RateLimit-Limit 60/);
    const worst = Math.max(...outcome.figures.windows.map((w) => w.successes));
    expect(worst).toBeGreaterThan(60);
  } finally {
    await server.close();
  }
});

/*
 * The reference server counts afresh when a ban ends, without starting a new window: a ban shorter
 * than the window, ending while the burst still runs, admits a second limit's worth under the same
 * X-RateLimit-Reset (the check rightly reports it). The exact-limiter tests use a ban at least as
 * long as the window, so it always ends in a later window.
 */
test('the exact in-memory limiter passes the whole overload check, other key included', async () => {
  const server = await startReferenceServer({ port: 0, minuteWindowMs: 3000, banMs: 3000 });
  try {
    const outcome = await runOverloadCheck(config(server.baseUrl, server.keys));
    expect(outcome.failures).toEqual([]);
    expect(outcome.figures.burstSize).toBe(500);
    expect(outcome.figures.connections).toBe(500);
    expect(outcome.figures.recovered).toBe(true);
    for (const w of outcome.figures.windows) expect(w.successes).toBeLessThanOrEqual(60);
    expect(outcome.figures.refusedByStatus['429']).toBeGreaterThan(0);
    expect(outcome.figures.otherKey?.statuses.every((s) => s === 200)).toBe(true);
    expect(outcome.figures.requests.total).toBe(outcome.figures.requests.probes + outcome.figures.requests.burst + outcome.figures.requests.otherKey);
    expect(outcome.evidence.join('\n')).not.toContain(server.keys.free);
    expect(outcome.evidence.join('\n')).not.toContain(server.keys.pro);
  } finally {
    await server.close();
  }
});

test('the exact limiter admits exactly the limit to a burst of 500 concurrent requests (through the load wrapper)', async () => {
  // A 20 s window (epoch-aligned), entered at least 5 s before its end, so the burst cannot straddle a boundary.
  const into = Date.now() % 20_000;
  if (into > 15_000) await new Promise((r) => setTimeout(r, 20_000 - into + 50));
  const server = await startReferenceServer({ port: 0, minuteWindowMs: 20_000, banMs: 60_000 });
  try {
    const run = await runLoad({
      label: 'exactness burst',
      url: server.baseUrl,
      steps: [{ name: 'GET /v1/inventory', path: '/v1/inventory' }],
      authorization: `Bearer ${server.keys.free}`,
      connections: 500,
      amount: 500,
      maxRequests: 500,
      maxDurationS: 30,
      recordAll: true,
      sampleSize: 0,
      loopbackOnly: true,
      progress: quiet,
    });
    expect(run.figures.requests).toBe(500);
    expect(run.figures.socketErrors + run.figures.timeouts).toBe(0);
    const judgement = judgeBurst(run.responses, { limitHint: 60 });
    expect(judgement.failures).toEqual([]);
    expect(judgement.windows).toHaveLength(1);
    expect(judgement.windows[0].successes).toBe(60);
    expect(judgement.refusedByStatus).toEqual({ 429: 440 });
  } finally {
    await server.close();
  }
});

test('a partly used window is waited out before the burst, and nothing is sent before a Retry-After has passed', async () => {
  const store = new RecordingStore();
  const server = await startReferenceServer({ port: 0, minuteWindowMs: 3000, banMs: 3000, banThreshold: 5, store });
  try {
    // Use part of the current 3 s window first, well before its end.
    const into = Date.now() % 3000;
    if (into > 1000) await new Promise((r) => setTimeout(r, 3000 - into + 50));
    for (let i = 0; i < 10; i++) {
      const r = await fetch(`${server.baseUrl}/inventory`, { headers: { authorization: `Bearer ${server.keys.free}` } });
      expect(r.status).toBe(200);
      await r.arrayBuffer();
    }
    const outcome = await runOverloadCheck(config(server.baseUrl, server.keys, { otherKey: undefined }));
    expect(outcome.failures).toEqual([]);
    expect(outcome.figures.waitedBeforeS).toBeGreaterThan(0);

    const free = store.log.filter((e) => e.identity === 'key:free');
    const probe = free[10];
    const windowEnd = probe.decision.resetSeconds * 1000;
    const burst = free.slice(11, 11 + outcome.figures.burstSize);
    // The burst started in a fresh window: after the probe's X-RateLimit-Reset.
    expect(probe.decision.remaining).toBe(49);
    expect(Math.min(...burst.map((e) => e.now))).toBeGreaterThanOrEqual(windowEnd);
    // The confirming request came after every Retry-After of the burst had passed.
    const confirm = free[free.length - 1];
    expect(free.length).toBe(11 + outcome.figures.burstSize + 1);
    const deadline = Math.max(...burst.filter((e) => e.decision.outcome !== 'admitted').map((e) => e.now + e.decision.retryAfterSeconds * 1000));
    expect(confirm.now).toBeGreaterThanOrEqual(deadline);
    expect(confirm.decision.outcome).toBe('admitted');
    // The burst was banned part-way (a burst counts as repeated requests after a 429).
    expect(burst.some((e) => e.decision.outcome === 'banned')).toBe(true);
  } finally {
    await server.close();
  }
});

test('a Retry-After larger than MAX_RETRY_AFTER_S fails clearly and the key is not tried again', async () => {
  const store = new RecordingStore();
  const server = await startReferenceServer({ port: 0, minuteWindowMs: 3000, banMs: 600_000, banThreshold: 5, store });
  try {
    const outcome = await runOverloadCheck(config(server.baseUrl, server.keys, { otherKey: undefined, maxRetryAfterS: 5 }));
    const recovery = outcome.failures.filter((l) => l.startsWith('LOAD-02 (recovery)'));
    expect(recovery).toHaveLength(1);
    expect(recovery[0]).toMatch(/more than MAX_RETRY_AFTER_S=5; <RATE_LIMIT_KEY> was not tried again/);
    expect(outcome.figures.recovered).toBeNull();
    const free = store.log.filter((e) => e.identity === 'key:free');
    expect(free.length).toBe(1 + outcome.figures.burstSize);
    expect(outcome.failures.filter((l) => !l.startsWith('LOAD-02 (recovery)'))).toEqual([]);
  } finally {
    await server.close();
  }
});

test('an invalid RATE_LIMIT_KEY stops the check before any burst, naming the prerequisite', async () => {
  const server = await startReferenceServer({ port: 0 });
  try {
    const outcome = await runOverloadCheck(config(server.baseUrl, { free: 'not-a-key', pro: server.keys.pro }));
    expect(outcome.failures).toEqual([expect.stringMatching(/^LOAD-02 \(admission\) prerequisite: RATE_LIMIT_KEY must be a valid key; GET \/v1\/inventory with it answered 401/)]);
    expect(outcome.figures.burst).toBeNull();
    expect(outcome.figures.requests.total).toBe(1);
  } finally {
    await server.close();
  }
});

test('a 429 already pending on the key when the check starts is waited out before the burst', async () => {
  const store = new RecordingStore();
  const server = await startReferenceServer({ port: 0, minuteWindowMs: 3000, banMs: 3000, store });
  try {
    // Another client exhausts the key: its 61st request gets a 429. The check cannot know of it,
    // so its first probe meets that 429 (one early request); it must then wait, not burst.
    const into = Date.now() % 3000;
    if (into > 1000) await new Promise((r) => setTimeout(r, 3000 - into + 50));
    for (let i = 0; i < 61; i++) {
      const r = await fetch(`${server.baseUrl}/inventory`, { headers: { authorization: `Bearer ${server.keys.free}` } });
      await r.arrayBuffer();
      expect(r.status).toBe(i < 60 ? 200 : 429);
    }
    const outcome = await runOverloadCheck(config(server.baseUrl, server.keys, { otherKey: undefined }));
    expect(outcome.failures).toEqual([]);
    expect(outcome.evidence[0]).toMatch(/^before the burst: GET \/v1\/inventory \(<RATE_LIMIT_KEY>\) → 429, .*Retry-After: \d/);
    expect(outcome.evidence[1]).toMatch(/^after Retry-After: GET \/v1\/inventory \(<RATE_LIMIT_KEY>\) → 200/);
    const free = store.log.filter((e) => e.identity === 'key:free');
    const firstProbe = free[61];
    expect(firstProbe.decision.outcome).toBe('limited');
    const secondProbe = free[62];
    expect(secondProbe.now).toBeGreaterThanOrEqual(firstProbe.now + firstProbe.decision.retryAfterSeconds * 1000);
    expect(secondProbe.decision.outcome).toBe('admitted');
    expect(Math.min(...free.slice(63, 63 + outcome.figures.burstSize).map((e) => e.now))).toBeGreaterThan(secondProbe.now);
  } finally {
    await server.close();
  }
});
