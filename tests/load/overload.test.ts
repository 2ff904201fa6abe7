/**
 * The overload check (`suites/load/overload-check.ts`) against limiters on the reference server
 * (3 s windows, 127.0.0.1): it catches a racy limiter and one that admits Limit + 1 with
 * self-consistent headers; it passes the exact fixed window, a sliding window and a token bucket;
 * against a server that bans on the first early request it sends nothing early and earns no ban;
 * it waits for a fresh window and for a pending Retry-After; the harness's own limits (a wait
 * beyond MAX_RETRY_AFTER_S, an unusable key) make it not certified, never failed; beside another
 * key's traffic it names a limiter that shares one bucket between keys and passes one per key.
 */
import { test, expect } from '../test.ts';
import { startReferenceServer, type RateLimitStore } from '../../reference-server/app.ts';
import { decide, newRateState, type RatePolicy, type RateState } from '../../reference-server/rate-limit/policy.ts';
import { lateByOneStore, racyStore, sharedBucketStore, slidingWindowStore, tokenBucketStore } from '../../faults/stores.ts';
import { zooStore } from '../../faults/limiters/index.ts';
import { formatFinding, type Finding } from '../../core/finding.ts';
import { runOverloadCheck, type OverloadConfig } from '../../suites/load/overload-check.ts';
import { pacerPerTest, RecordingStore } from './helpers.ts';
import { startFaultProxy, type FaultHooks } from '../../faults/proxy.ts';
import { tokenOf } from '../../faults/lib.ts';

const FREE = 'key:free';
const quiet = () => undefined;
const pacer = pacerPerTest();
const failing = (findings: Finding[]) => findings.filter((f) => f.level === 'fail').map(formatFinding);

function config(baseUrl: string, keys: { free: string; pro: string }, extra: Partial<OverloadConfig> = {}): OverloadConfig {
  return {
    baseUrl,
    rateLimitKey: keys.free,
    otherKey: keys.pro,
    windows: 2,
    burstMax: 1001,
    burstConnections: 500,
    maxRetryAfterS: 20,
    timeoutS: 10,
    loopbackOnly: true,
    pacer: pacer(),
    progress: quiet,
    ...extra,
  };
}

async function withServer<T>(
  store: RateLimitStore,
  options: { banThreshold?: number; banMs?: number },
  fn: (s: Awaited<ReturnType<typeof startReferenceServer>>, rec: RecordingStore) => Promise<T>,
): Promise<T> {
  const rec = new RecordingStore(store);
  const server = await startReferenceServer({
    port: 0,
    minuteWindowMs: 3000,
    banMs: options.banMs ?? 600_000,
    banThreshold: options.banThreshold ?? 1,
    store: rec,
  });
  try {
    return await fn(server, rec);
  } finally {
    await server.close();
  }
}

const CAUGHT = [
  { name: 'a racy limiter (counter read and written in separate steps)', store: () => racyStore() },
  { name: 'a limiter that admits Limit + 1 per window with self-consistent headers', store: () => lateByOneStore() },
];
for (const c of CAUGHT) {
  test(`LOAD-02 admission fails against ${c.name}`, async () => {
    await withServer(c.store(), {}, async (server) => {
      // Three bursts: over-admission shows in a window that holds a whole burst, and on a busy runner
      // a 3 s window can end under one of them.
      const outcome = await runOverloadCheck(config(server.baseUrl, server.keys, { otherKey: undefined, windows: 3 }));
      const admission = failing(outcome.findings).filter((l) => l.startsWith('LOAD-02 (admission) over-admission'));
      expect(admission.length, outcome.findings.map(formatFinding).join('\n')).toBeGreaterThan(0);
      expect(admission[0]).toMatch(
        /expected at most X-RateLimit-Limit 60 requests admitted; observed (6[1-9]|[7-9]\d|\d{3}) requests admitted$/,
      );
      expect(Math.max(...outcome.figures.windows.map((w) => w.successes))).toBeGreaterThan(60);
    });
  });
}

const CONFORMANT = [
  { name: 'the exact fixed window, which bans on the first early request', store: () => new RecordingStore() },
  { name: 'a sliding window', store: () => slidingWindowStore() },
  { name: 'a token bucket', store: () => tokenBucketStore() },
  { name: 'a sliding log whose Reset is when its oldest request leaves', store: () => zooStore('sliding-log') },
  { name: 'a sliding-window counter weighing the previous window', store: () => zooStore('sliding-counter') },
  { name: 'GCRA', store: () => zooStore('gcra') },
];
for (const c of CONFORMANT) {
  test(`LOAD-02 passes ${c.name}: Remaining + 1 per burst, nothing sent early, no ban`, async () => {
    await withServer(c.store(), { banThreshold: 1 }, async (server, rec) => {
      const outcome = await runOverloadCheck(config(server.baseUrl, server.keys));
      expect(outcome.findings.filter((f) => f.level !== 'note').map(formatFinding)).toEqual([]);
      expect(outcome.figures.recovered).toBe(true);
      expect(outcome.figures.bursts).toHaveLength(2);
      for (const b of outcome.figures.bursts) {
        expect(b.size).toBe(b.remainingAtProbe + 1);
        expect(b.admitted + b.refused).toBe(b.size);
        expect(b.lost).toBe(0);
      }
      expect(rec.early(FREE)).toBe(0);
      expect(rec.bans(FREE)).toBe(0);
      expect(outcome.figures.otherKey?.statuses.every((s) => s === 200)).toBe(true);
      const f = outcome.figures.requests;
      expect(rec.of(FREE)).toHaveLength(f.probes + f.burst);
      expect(outcome.evidence.at(-1)).toMatch(
        /^spent by the overload check: \d+ requests on <RATE_LIMIT_KEY> \(probes \d+, bursts \d+\), 1 on <API_KEY>, [\d.]+ s/,
      );
      expect(outcome.evidence.join('\n')).not.toContain(server.keys.free);
    });
  });
}

test('a partly used window and a pending 429 are waited out: each burst starts in a fresh window, after every Retry-After', async () => {
  await withServer(new RecordingStore(), { banThreshold: 5 }, async (server, rec) => {
    // Another client spends the current window and meets a 429 (an early request the check cannot know of).
    for (let into = Date.now() % 3000; into > 1000; into = Date.now() % 3000) await new Promise((r) => setTimeout(r, 3000 - into + 50));
    // At once, so that a busy runner cannot stretch them past the window's end.
    const statuses = await Promise.all(
      Array.from({ length: 61 }, async () => {
        const r = await fetch(`${server.baseUrl}/inventory`, { headers: { authorization: `Bearer ${server.keys.free}` } });
        await r.arrayBuffer();
        return r.status;
      }),
    );
    expect(statuses.sort()).toEqual([...Array(60).fill(200), 429]);
    const before = rec.of(FREE).length;
    const outcome = await runOverloadCheck(config(server.baseUrl, server.keys, { otherKey: undefined, windows: 1 }));
    expect(failing(outcome.findings)).toEqual([]);
    expect(outcome.evidence[0]).toMatch(/^window 1, probe: GET \/v1\/inventory \(<RATE_LIMIT_KEY>\) → 429, .*Retry-After: \d/);
    const mine = rec.of(FREE).slice(before);
    const [probe429, fresh] = mine;
    expect(probe429.decision.outcome).toBe('limited');
    expect(fresh.now).toBeGreaterThanOrEqual(probe429.now + probe429.decision.retryAfterSeconds * 1000);
    expect(fresh.decision.remaining).toBe(59);
    const burst = mine.slice(2, 2 + outcome.figures.bursts[0].size);
    expect(burst.filter((e) => e.decision.outcome === 'admitted')).toHaveLength(59);
    expect(Math.min(...burst.map((e) => e.now))).toBeGreaterThanOrEqual(fresh.now);
    // Its first probe came inside the other client's Retry-After, which it could not know of; after
    // it, nothing of the check's came before the end of a Retry-After the check was given; no ban.
    // The other client's Retry-After is not the check's measure: rounded up to whole seconds, it may
    // end a second after the probe's, when the two straddle a second before the window's end.
    const [other429] = rec
      .of(FREE)
      .slice(0, before)
      .filter((e) => e.decision.outcome !== 'admitted');
    expect(probe429.now).toBeLessThan(other429.now + other429.decision.retryAfterSeconds * 1000);
    expect(rec.early(FREE, before)).toBe(0);
    expect(rec.bans(FREE)).toBe(0);
  });
});

test('a burst larger than LOAD_BURST_CONNECTIONS goes in waves, each with a request timeout of its own: slow answers within the timeout pass', async () => {
  // 61 requests on 2 connections, each answered 250 ms late (a slow link): 31 waves, about 8 s,
  // more than one request timeout (1 s) plus 5 s. A 16 s window holds the burst, even slowed down by half.
  const rec = new RecordingStore();
  const server = await startReferenceServer({ port: 0, minuteWindowMs: 16_000, banMs: 600_000, banThreshold: 1, store: rec });
  const proxy = await startFaultProxy({
    upstream: server.baseUrl.replace(/\/v1\/?$/, ''),
    fault: { delayMs: () => 250 },
    env: { RATE_LIMIT_KEY: server.keys.free, API_KEY: server.keys.pro },
  });
  try {
    const outcome = await runOverloadCheck(
      config(`${proxy.url.replace(/\/$/, '')}/v1`, server.keys, { otherKey: undefined, windows: 1, burstConnections: 2, timeoutS: 1 }),
    );
    expect(outcome.findings.filter((f) => f.level !== 'note').map(formatFinding)).toEqual([]);
    const [burst] = outcome.figures.bursts;
    expect(burst.size).toBe(burst.remainingAtProbe + 1);
    expect(burst.admitted + burst.refused).toBe(burst.size);
    expect(burst.lost).toBe(0);
    expect(rec.early(FREE)).toBe(0);
    expect(rec.bans(FREE)).toBe(0);
  } finally {
    await proxy.close();
    await server.close();
  }
});

/** Runs the overload check on the free key through a proxy with `hooks` (2 s LOAD_TIMEOUT_S, one burst window, no other key). */
async function throughHooks(
  hooks: (key: string, other: string) => FaultHooks,
  extra: (keys: { pro: string }) => Partial<OverloadConfig> = () => ({}),
) {
  // No ban: an answer that never comes may be a 429 whose Retry-After the check could not see.
  const server = await startReferenceServer({
    port: 0,
    minuteWindowMs: 3000,
    banMs: 600_000,
    banThreshold: 1000,
    store: new RecordingStore(),
  });
  const proxy = await startFaultProxy({
    upstream: server.baseUrl.replace(/\/v1\/?$/, ''),
    fault: hooks(server.keys.free, server.keys.pro),
  });
  try {
    return await runOverloadCheck(
      config(`${proxy.url.replace(/\/$/, '')}/v1`, server.keys, { otherKey: undefined, windows: 1, timeoutS: 2, ...extra(server.keys) }),
    );
  } finally {
    await proxy.close();
    await server.close();
  }
}

test('LOAD-02 fails a server that leaves a request of a burst unanswered while it answers the rest at once', async () => {
  const outcome = await throughHooks(
    (key) => {
      // The twentieth request of the key within a second (a burst's, never a probe's: one a window)
      // gets no answer, once a second.
      let arrivals: number[] = [];
      let swallowedAt = 0;
      return {
        request: (req) => {
          if (tokenOf(req) !== key) return req;
          const now = Date.now();
          arrivals = [...arrivals.filter((t) => now - t < 1000), now];
          if (arrivals.length < 20 || now - swallowedAt < 1000) return req;
          swallowedAt = now;
          return 'swallow';
        },
      };
    },
    // A 4 s LOAD_TIMEOUT_S: the rest of the burst is answered within half of it on a busy runner too.
    () => ({ timeoutS: 4 }),
  );
  const lost = failing(outcome.findings).filter((l) => l.startsWith('LOAD-02 (refusals) requests of the bursts got no answer'));
  expect(lost, outcome.findings.map(formatFinding).join('\n')).toHaveLength(1);
  const shape =
    /^LOAD-02 \(refusals\) requests of the bursts got no answer within the request timeout: expected every request answered \(a refusal with 429\); observed (\d+) requests? unanswered \(timeouts \d+, connection errors 0, abandoned \d+; the slowest answer of those bursts (\d+) ms\)$/;
  expect(lost[0]).toMatch(shape);
  const [, count, slowest] = lost[0]!.match(shape)!;
  expect(Number(count)).toBeGreaterThanOrEqual(1);
  expect(Number(slowest), 'the rest of the burst was answered within half of LOAD_TIMEOUT_S').toBeLessThanOrEqual(2000);
});

test('a server that answers a burst so slowly that some answers miss LOAD_TIMEOUT_S leaves LOAD-02 not certified, never failed', async () => {
  const outcome = await throughHooks((key) => {
    // Each answer on the key waits 60 ms more than the one before it while they queue: a burst of
    // about 60 takes 3.6 s to answer, past the 2 s timeout, and its answers in time take over 1 s.
    let queued = 0;
    return {
      response: async (res, req) => {
        if (tokenOf(req) !== key) return res;
        await new Promise((resolve) => setTimeout(resolve, queued++ * 60));
        queued--;
        return res;
      },
    };
  });
  expect(failing(outcome.findings)).toEqual([]);
  const unclear = outcome.findings.filter((f) => f.level === 'not-certified').map(formatFinding);
  // (A runner that held this process a second or more beside it adds the held requests' own note.)
  expect(
    unclear.every((l) => l.startsWith('[not-certified] LOAD-02 (refusals) ')),
    unclear.join('\n'),
  ).toBe(true);
  expect(unclear.join('\n')).toMatch(
    /\d+ requests of the bursts got no answer within LOAD_TIMEOUT_S=2, while the answers the bursts did get took up to \d+ ms, more than half of it: the run cannot tell/,
  );
});

/**
 * A proxy that leaves the key's probe after its burst unanswered and holds each answer on the other
 * key `otherDelayMs`. Counted, not timed: the window's probe is the key's request 1, its Remaining R
 * sizes the burst (R + 1 requests), so the probe after the burst is request R + 3.
 */
function probeHangs(otherDelayMs: number) {
  return (key: string, other: string): FaultHooks => {
    let seen = 0;
    let probeAfterBurst: number | undefined;
    return {
      request: (req) => {
        if (tokenOf(req) !== key) return req;
        return ++seen === probeAfterBurst ? 'swallow' : req;
      },
      response: async (res, req) => {
        if (tokenOf(req) === key && probeAfterBurst === undefined) {
          const remaining = res.headers.find(([name]) => name.toLowerCase() === 'x-ratelimit-remaining')?.[1];
          if (remaining !== undefined) probeAfterBurst = Number(remaining) + 3;
        }
        if (tokenOf(req) === other) await new Promise((resolve) => setTimeout(resolve, otherDelayMs));
        return res;
      },
    };
  };
}

for (const c of [
  { otherDelayMs: 0, verdict: 'fails: the list on API_KEY came back at once' },
  { otherDelayMs: 1500, verdict: 'is not certified when the list on API_KEY took more than half of LOAD_TIMEOUT_S' },
]) {
  test(`a probe on RATE_LIMIT_KEY without an answer in time ${c.verdict}`, async () => {
    const outcome = await throughHooks(probeHangs(c.otherDelayMs), (keys) => ({ otherKey: keys.pro }));
    const probe = outcome.findings.filter((f) => f.message.startsWith('the probe got no answer')).map(formatFinding);
    expect(probe, outcome.findings.map(formatFinding).join('\n')).toHaveLength(1);
    if (c.otherDelayMs === 0)
      expect(probe[0]).toMatch(
        /^LOAD-02 \(refusals\) the probe got no answer: .*; the list on <API_KEY>, asked for right after it, came back in \d+ ms$/,
      );
    else {
      expect(failing(outcome.findings)).toEqual([]);
      expect(probe[0]).toMatch(
        /^\[not-certified\] LOAD-02 \(refusals\) the probe got no answer \(.*\), and the list on <API_KEY>, asked for right after it, took \d+ ms, more than half of LOAD_TIMEOUT_S: the run cannot tell/,
      );
    }
  });
}

test('a Retry-After beyond MAX_RETRY_AFTER_S makes LOAD-02 not certified, and the key is not tried again', async () => {
  // A 20 s window: after the burst, its 429 asks for more than MAX_RETRY_AFTER_S=5.
  const rec = new RecordingStore();
  // Started at most 12 s in: server, probe and burst have 3 s before the 429's Retry-After falls to 5.
  for (let into = Date.now() % 20_000; into > 12_000; into = Date.now() % 20_000)
    await new Promise((r) => setTimeout(r, 20_000 - into + 50));
  const server = await startReferenceServer({ port: 0, minuteWindowMs: 20_000, banMs: 600_000, store: rec });
  try {
    const outcome = await runOverloadCheck(config(server.baseUrl, server.keys, { otherKey: undefined, maxRetryAfterS: 5 }));
    expect(failing(outcome.findings)).toEqual([]);
    expect(outcome.findings).toContainEqual(
      expect.objectContaining({
        id: 'LOAD-02',
        part: 'recovery',
        level: 'not-certified',
        expected: 'a wait of at most MAX_RETRY_AFTER_S=5 s',
      }),
    );
    expect(outcome.figures.recovered).toBeNull();
    expect(outcome.figures.bursts).toHaveLength(1);
    expect(rec.of(FREE)).toHaveLength(1 + outcome.figures.bursts[0].size);
    expect(rec.early(FREE)).toBe(0);
  } finally {
    await server.close();
  }
});

test('a key whose day quota earlier runs nearly spent makes LOAD-02 not certified, naming the quota, never failed', async () => {
  // The free plan's 1,000 a day: earlier runs on the same deployment left 40, so the headers
  // describe the day (Limit 1000, Remaining 39, Reset at the end of the day).
  const seeded: RateLimitStore = (() => {
    const states = new Map<string, RateState>();
    return {
      hit(identity: string, policy: RatePolicy, now: number) {
        let state = states.get(identity);
        if (!state) {
          state = newRateState(policy);
          if (identity === FREE) {
            state.starts[1] = now - (now % policy.windows[1].ms);
            state.counts[1] = policy.windows[1].limit - 40;
          }
          states.set(identity, state);
        }
        return decide(state, policy, now);
      },
    };
  })();
  await withServer(seeded, {}, async (server, rec) => {
    const outcome = await runOverloadCheck(config(server.baseUrl, server.keys, { otherKey: undefined }));
    expect(failing(outcome.findings)).toEqual([]);
    const stop = outcome.findings.find((f) => f.level === 'not-certified');
    expect(stop, outcome.findings.map(formatFinding).join('\n')).toMatchObject({
      id: 'LOAD-02',
      part: 'recovery',
      expected: 'a wait of at most MAX_RETRY_AFTER_S=20 s',
    });
    expect(stop!.message).toMatch(
      /Remaining 39 of 1000, a quota the key has partly spent that resets only in \d+ s \(for example the plan's day quota/,
    );
    expect(outcome.figures.bursts).toEqual([]);
    expect(rec.of(FREE)).toHaveLength(1);
  });
});

test('an unusable RATE_LIMIT_KEY makes LOAD-02 not certified before any burst', async () => {
  const server = await startReferenceServer({ port: 0 });
  try {
    const outcome = await runOverloadCheck(config(server.baseUrl, { free: 'not-a-key', pro: server.keys.pro }, { otherKey: undefined }));
    expect(outcome.findings.filter((f) => f.level !== 'note')).toEqual([
      expect.objectContaining({
        id: 'LOAD-02',
        part: 'admission',
        level: 'not-certified',
        message: 'RATE_LIMIT_KEY must be a valid key; the burst was not sent',
        observed: '401',
      }),
    ]);
    expect(outcome.figures.bursts).toEqual([]);
    expect(outcome.figures.requests.total).toBe(1);
  } finally {
    await server.close();
  }
});

const BESIDE_ANOTHER_KEY = [
  { name: 'one bucket shared by every key is named as that, never taken for a fresh window', store: sharedBucketStore, shared: true },
  { name: 'one bucket per key passes', store: () => new RecordingStore(), shared: false },
];
for (const c of BESIDE_ANOTHER_KEY) {
  test(`while another key is in use, a limiter with ${c.name}`, async () => {
    await withServer(c.store(), { banThreshold: 5 }, async (server) => {
      // Another key at 20 requests per second meanwhile (as the capacity load on LOAD_KEY runs beside the bursts).
      let running = true;
      let sent = 0;
      const other = (async () => {
        while (running) {
          const r = await fetch(`${server.baseUrl}/inventory`, { headers: { authorization: `Bearer ${server.keys.load}` } });
          await r.arrayBuffer();
          sent++;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })();
      try {
        // The check starts where the other key has already spent part of the window: a probe that
        // opened a window alone would see nothing of it yet.
        let current = { window: -1, sentBefore: 0 };
        for (;;) {
          const now = Date.now();
          const into = now % 3000;
          if (now - into !== current.window) current = { window: now - into, sentBefore: sent };
          if (into >= 300 && into <= 1500 && sent - current.sentBefore >= 2) break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        const outcome = await runOverloadCheck(config(server.baseUrl, server.keys, { otherKey: undefined, windows: 1 }));
        if (c.shared) {
          // Another consumer of the limit is named, and the check stops: not certified, never failed.
          expect(failing(outcome.findings), outcome.findings.map(formatFinding).join('\n')).toEqual([]);
          expect(outcome.findings).toContainEqual(
            expect.objectContaining({
              id: 'LOAD-02',
              part: 'admission',
              level: 'not-certified',
              message: expect.stringMatching(
                /is used by another client, or its limit is shared with other keys .*: its X-RateLimit-Remaining fell by \d+ more than this run sent on it; nothing more is sent on it$/,
              ),
            }),
          );
          expect(outcome.figures.foreign).toHaveLength(1);
          expect(outcome.figures.bursts).toEqual([]);
        } else {
          expect(failing(outcome.findings)).toEqual([]);
          expect(outcome.figures.bursts).toHaveLength(1);
        }
      } finally {
        running = false;
        await other;
      }
    });
  });
}

/**
 * The run's own earlier requests on the key (the 429 sequence, spread over part of the window)
 * still count in a sliding log when the bursts begin: they are the run's own, accounted by time,
 * never taken for another client's.
 */
test("LOAD-02 passes a sliding log still counting the 429 sequence's own requests when the first burst is aimed: no failure, nothing not certified", async () => {
  await withServer(zooStore('sliding-log'), { banThreshold: 1 }, async (server, rec) => {
    const answeredAtMs: number[] = [];
    const get = async () => {
      const r = await fetch(`${server.baseUrl}/inventory`, { headers: { authorization: `Bearer ${server.keys.free}` } });
      await r.arrayBuffer();
      answeredAtMs.push(Date.now());
      return r;
    };
    // The sequence: requests spread over part of the 3 s window until the 429 (60 of them when the
    // machine keeps up; more when a busy runner stretches them past the oldest one's slide), its
    // Retry-After, one more.
    let refused = await get();
    for (let i = 0; refused.status === 200 && i < 400; i++) {
      await new Promise((r) => setTimeout(r, 10));
      refused = await get();
    }
    expect(refused.status).toBe(429);
    await new Promise((r) => setTimeout(r, Number(refused.headers.get('retry-after')) * 1000 + 50));
    const after = await get();
    expect(after.status).toBe(200);
    const opening = {
      step: '429 sequence',
      status: after.status,
      headers: Object.fromEntries(after.headers),
      receivedAt: answeredAtMs.at(-1)!,
    };
    const outcome = await runOverloadCheck(
      config(server.baseUrl, server.keys, { otherKey: undefined, opening, earlier: { answeredAtMs, longestResetS: 3 } }),
    );
    expect(outcome.findings.filter((f) => f.level !== 'note').map(formatFinding)).toEqual([]);
    expect(outcome.figures.foreign).toEqual([]);
    expect(outcome.figures.bursts).toHaveLength(2);
    expect(rec.early(FREE)).toBe(0);
    expect(rec.bans(FREE)).toBe(0);
  });
});
