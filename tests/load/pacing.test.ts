/**
 * The load checks send through the run-wide pacer (`suites/pacing/`, reached over loopback as the
 * workers reach it): the overload check's bursts of Remaining + 1 are granted whole, every
 * response is observed, nothing is granted while a 429 is pending, and a server that bans on the
 * first early request bans nothing; a check that meets a key already held by another sender's 429
 * waits for it.
 */
import { test, expect } from '../test.ts';
import { startReferenceServer } from '../../reference-server/app.ts';
import { startPacerCoordinator } from '../../suites/pacing/coordinator.ts';
import { pacingClient } from '../../suites/pacing/client.ts';
import { runOverloadCheck } from '../../suites/load/overload-check.ts';
import { runCapacityCheck } from '../../suites/load/capacity-check.ts';
import { capacityConfig, RecordingStore } from './helpers.ts';

test('through the run-wide coordinator: whole bursts granted, every response observed, no early grant, no ban', async () => {
  const coordinator = await startPacerCoordinator({ maxWaitMs: 20_000, reserve: 3 });
  const rec = new RecordingStore();
  const server = await startReferenceServer({ port: 0, minuteWindowMs: 3000, banMs: 600_000, banThreshold: 1, store: rec });
  try {
    const pacer = pacingClient(coordinator.url);
    const outcome = await runOverloadCheck({
      baseUrl: server.baseUrl,
      rateLimitKey: server.keys.free,
      otherKey: server.keys.pro,
      windows: 2,
      burstMax: 1001,
      burstConnections: 500,
      maxRetryAfterS: 20,
      timeoutS: 10,
      loopbackOnly: true,
      pacer,
      progress: () => undefined,
    });
    expect(outcome.findings.filter((f) => f.level !== 'note')).toEqual([]);
    const capacity = await runCapacityCheck(
      capacityConfig(pacer, {
        baseUrl: server.baseUrl,
        loadKey: server.keys.load,
        mode: 'mix',
        ratePerS: 50,
        connections: 8,
        maxRequests: 1000,
      }),
    );
    expect(capacity.findings).toEqual([]);
    const keys = Object.fromEntries(coordinator.report().keys.map((k) => [k.label, k]));
    const rl = keys['<RATE_LIMIT_KEY>'];
    const f = outcome.figures.requests;
    expect(rl.observed).toBe(f.probes + f.burst);
    // Every refusal the check met reached the coordinator. How many there are is not fixed: a burst
    // meets the one 429 past Remaining in the window its probe opened, but on a busy runner that
    // window can end before the burst or under it, and the burst is then admitted in the next one.
    // Never more than that one per burst, and never one outside the bursts.
    expect(outcome.figures.bursts).toHaveLength(2);
    expect(rl.refused).toBe(outcome.figures.refused);
    expect(outcome.figures.bursts.map((b) => b.refused).reduce((a, b) => a + b, 0)).toBe(outcome.figures.refused);
    for (const b of outcome.figures.bursts) expect(b.refused, 'refusals in one burst of Remaining + 1').toBeLessThanOrEqual(1);
    expect(rl.earlyGrants).toBe(0);
    expect(rl.suspectedBans).toBe(0);
    expect(keys['<LOAD_KEY>'].observed).toBe(capacity.figures.requests.total);
    expect(keys['<API_KEY>'].observed).toBe(1);
    expect(rec.early('key:free')).toBe(0);
    expect(rec.bans('key:free')).toBe(0);
  } finally {
    await server.close();
    await coordinator.close();
  }
});

test('a 429 another sender met on the key holds the overload check until its Retry-After has passed', async () => {
  const coordinator = await startPacerCoordinator({ maxWaitMs: 20_000, reserve: 3 });
  const rec = new RecordingStore();
  const server = await startReferenceServer({ port: 0, minuteWindowMs: 3000, banMs: 600_000, banThreshold: 1, store: rec });
  try {
    const client = pacingClient(coordinator.url);
    // Another sender (a worker of the 429 checks) drives the key to its 429 through the same pacer.
    const into = Date.now() % 3000;
    if (into > 1500) await new Promise((r) => setTimeout(r, 3000 - into + 50));
    for (;;) {
      const lease = await client.acquire('<RATE_LIMIT_KEY>', { mode: 'exhaust', count: 1 });
      const r = await fetch(`${server.baseUrl}/inventory`, { headers: { authorization: `Bearer ${server.keys.free}` } });
      await r.arrayBuffer();
      await lease.observe({ status: r.status, headers: Object.fromEntries(r.headers), receivedAtMs: Date.now() });
      await lease.release();
      if (r.status === 429) break;
    }
    const outcome = await runOverloadCheck({
      baseUrl: server.baseUrl,
      rateLimitKey: server.keys.free,
      windows: 1,
      burstMax: 1001,
      burstConnections: 500,
      maxRetryAfterS: 20,
      timeoutS: 10,
      loopbackOnly: true,
      pacer: client,
      progress: () => undefined,
    });
    expect(outcome.findings.filter((f) => f.level !== 'note')).toEqual([]);
    expect(rec.early('key:free')).toBe(0);
    expect(rec.bans('key:free')).toBe(0);
    expect(coordinator.report().keys.find((k) => k.label === '<RATE_LIMIT_KEY>')?.earlyGrants).toBe(0);
  } finally {
    await server.close();
    await coordinator.close();
  }
});
