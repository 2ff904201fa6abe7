/**
 * The run-wide pacer (suites/pacing): one coordinator owns each key's state for every process.
 * A 429 seen by one process holds every other; a process that died and restarted does not
 * forget it; malformed headers still pace; `count` grants are bounded by Remaining minus what is
 * in flight, so a key can be driven to its limit over a slow link with nothing in flight at the
 * limit; a wait beyond the maximum is "not certified"; pets and once-per-run values are leased.
 */
import { test, expect } from '../test.ts';
import { execFile } from 'node:child_process';
import http from 'node:http';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { startPacerCoordinator, type PacerCoordinator } from '../../suites/pacing/coordinator.ts';
import { pacingClient, PacingNotCertified } from '../../suites/pacing/client.ts';

const run = promisify(execFile);
const CHILD = fileURLToPath(new URL('./child.ts', import.meta.url));
const TSX = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

async function child(url: string, label: string, action: string): Promise<{ askedAt: number; grantedAt: number; doneAt: number }> {
  const { stdout } = await run(TSX, [CHILD, label, action], { env: { ...process.env, CONFORMANCE_PACER_URL: url } });
  return JSON.parse(stdout.trim().split('\n').pop()!);
}

let coordinators: PacerCoordinator[] = [];
async function coordinator(options: Parameters<typeof startPacerCoordinator>[0] = {}) {
  const c = await startPacerCoordinator({ maxWaitMs: 10_000, reserve: 2, ...options });
  coordinators.push(c);
  return c;
}
test.afterEach(async () => {
  await Promise.all(coordinators.map((c) => c.close()));
  coordinators = [];
});

const usable = (remaining: number, resetInS = 30, extra: Record<string, string> = {}) => ({
  'X-RateLimit-Limit': '60',
  'X-RateLimit-Remaining': String(remaining),
  'X-RateLimit-Reset': String(Math.floor(Date.now() / 1000) + resetInS),
  Date: new Date().toUTCString(),
  ...extra,
});

test('a 429 seen by one process holds another process, even after the first one died', async () => {
  const c = await coordinator();
  // Process A takes a 429 (Retry-After 2) and exits; process B, started afterwards, must wait it out.
  const a = await child(c.url, '<RATE_LIMIT_KEY>', 'observe429:2');
  const b = await child(c.url, '<RATE_LIMIT_KEY>', 'acquire');
  expect(b.grantedAt - a.grantedAt).toBeGreaterThanOrEqual(2000);
  // A fresh client in this process (a restarted worker) is held too, and another key is not.
  const other = pacingClient(c.url);
  const t0 = Date.now();
  await (await other.acquire('<API_KEY>')).release();
  // Unheld: well under the 2 s a hold would take, with room for a busy runner.
  expect(Date.now() - t0).toBeLessThan(1500);
  const report = c.report().keys.find((k) => k.label === '<RATE_LIMIT_KEY>')!;
  expect(report).toMatchObject({ refused: 1, earlyGrants: 0, unplanned429: 1 });
});

test('nothing is granted while a 429 is pending, whichever client asks', async () => {
  const c = await coordinator();
  const p1 = pacingClient(c.url);
  const p2 = pacingClient(c.url);
  const lease = await p1.acquire('<API_KEY>');
  const got429At = Date.now();
  await lease.observe({ status: 429, headers: { 'Retry-After': '1', ...usable(0) }, receivedAtMs: got429At });
  const granted = await Promise.all(
    [p1, p2, p2].map(async (p) => {
      const l = await p.acquire('<API_KEY>', { mode: 'exhaust' });
      const at = Date.now();
      await l.observe({ status: 200, headers: usable(59), receivedAtMs: Date.now() });
      return at;
    }),
  );
  for (const at of granted) expect(at - got429At).toBeGreaterThanOrEqual(1000);
});

/**
 * The earliest times the coordinator can have granted each lease (in grant order, the first asked
 * for at `askedAt`), from what this process saw. Each grant comes `intervalMs` or more after the
 * one before it (the pace), and only once the lease before it was observed (one at a time), so
 * also `intervalMs` or more after the observation before that one. A grant seen late on a busy
 * runner moves what the client saw, never these bounds.
 */
function earliestGrants(askedAt: number, observedAt: readonly number[], intervalMs: number): number[] {
  const bounds = [askedAt];
  for (let k = 1; k < observedAt.length; k++) {
    const previous = k >= 2 ? Math.max(bounds[k - 1], observedAt[k - 2]) : bounds[k - 1];
    bounds.push(previous + intervalMs);
  }
  return bounds;
}

test('malformed headers still pace: one request at a time at the nominal rate', async () => {
  const c = await coordinator();
  const p = pacingClient(c.url);
  // Reset in milliseconds and no Remaining: the pacer cannot count, so it spaces requests at
  // X-RateLimit-Limit (600) per minute = one per 100 ms, one at a time.
  const bad = { 'X-RateLimit-Limit': '600', 'X-RateLimit-Reset': String(Date.now() + 30_000) };
  const askedAt = Date.now();
  const first = await p.acquire('<API_KEY>');
  const leases = [{ seenAt: Date.now(), observedAt: Date.now() }];
  await first.observe({ status: 200, headers: bad, receivedAtMs: Date.now() });
  let inFlight = 0;
  let most = 0;
  await Promise.all(
    Array.from({ length: 5 }, async () => {
      const l = await p.acquire('<API_KEY>', { count: 5 });
      expect(l.granted).toBe(1);
      const seenAt = Date.now();
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      leases.push({ seenAt, observedAt: Date.now() });
      await l.observe({ status: 200, headers: bad, receivedAtMs: Date.now() });
    }),
  );
  expect(most).toBe(1);
  leases.sort((x, y) => x.seenAt - y.seenAt);
  const bounds = earliestGrants(
    askedAt,
    leases.map((l) => l.observedAt),
    100,
  );
  for (const [k, l] of leases.entries()) {
    expect(l.seenAt - bounds[k], `lease ${k}: ms after the earliest grant one at a time at 100 ms apart allows`).toBeGreaterThanOrEqual(0);
  }
  expect(c.report().keys[0].fallbackResponses).toBe(6);
});

test('no headers at all and no plan: paced at the smallest plan rate, never unpaced', async () => {
  const c = await coordinator();
  const p = pacingClient(c.url);
  // 120 per minute: grants 500 ms apart (counted at the coordinator, from the previous grant).
  const t0 = Date.now();
  const l1 = await p.acquire('<API_KEY>', { nominalPerMinute: 120 });
  await l1.observe({ status: 200, headers: {}, receivedAtMs: Date.now() });
  const l2 = await p.acquire('<API_KEY>', { nominalPerMinute: 120 });
  await l2.observe({ status: 200, headers: {}, receivedAtMs: Date.now() });
  const l3 = await p.acquire('<API_KEY>', { nominalPerMinute: 120 });
  expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
  await l3.release();
});

test('a key is driven to its limit over a 100 ms link with bounded concurrency, nothing in flight at the limit', async () => {
  const c = await coordinator();
  const p = pacingClient(c.url);
  // A fixed-window limiter of 300 per minute behind 100 ms of latency.
  const limit = 300;
  let used = 0;
  let inFlight = 0;
  let inFlightAtRefusal = -1;
  const reset = Math.floor(Date.now() / 1000) + 60;
  const server = async () => {
    inFlight++;
    await new Promise((r) => setTimeout(r, 50));
    const status = used < limit ? 200 : 429;
    if (status === 200) used++;
    else inFlightAtRefusal = inFlight - 1;
    await new Promise((r) => setTimeout(r, 50));
    inFlight--;
    return {
      status,
      headers: {
        'X-RateLimit-Limit': String(limit),
        'X-RateLimit-Remaining': String(limit - used),
        'X-RateLimit-Reset': String(reset),
        Date: new Date().toUTCString(),
        ...(status === 429 ? { 'Retry-After': '30' } : {}),
      },
      receivedAtMs: Date.now(),
    };
  };
  const t0 = Date.now();
  let refused = false;
  let sent = 0;
  let remaining = Infinity;
  while (!refused) {
    // At most 50 at once, never more than Remaining: the request past the limit goes alone.
    const lease = await p.acquire('<RATE_LIMIT_KEY>', { mode: 'exhaust', count: Math.max(1, Math.min(50, remaining)) });
    expect(lease.granted).toBeLessThanOrEqual(50);
    sent += lease.granted;
    const results = await Promise.all(
      Array.from({ length: lease.granted }, async () => {
        const r = await server();
        await lease.observe(r);
        remaining = Math.min(remaining, Number(r.headers['X-RateLimit-Remaining']));
        return r.status;
      }),
    );
    if (results.includes(429)) refused = true;
  }
  expect(used).toBe(limit);
  expect(sent).toBe(limit + 1);
  expect(inFlightAtRefusal).toBe(0);
  expect(Date.now() - t0).toBeLessThan(15_000); // one at a time would take 30 s
  const report = c.report().keys[0];
  expect(report).toMatchObject({ refused: 1, inFlightAt429: 0, unplanned429: 0 });
});

test('an exhaust grant asked beyond Remaining, with nothing in flight, is the burst of Remaining + 1', async () => {
  const c = await coordinator();
  const p = pacingClient(c.url);
  const l = await p.acquire('<RATE_LIMIT_KEY>', { mode: 'exhaust' });
  await l.observe({ status: 200, headers: usable(9), receivedAtMs: Date.now() });
  const burst = await p.acquire('<RATE_LIMIT_KEY>', { mode: 'exhaust', count: 100 });
  expect(burst.granted).toBe(10);
  await burst.release();
});

test('paced grants keep the reserve and wait for the reset', async () => {
  const c = await coordinator({ reserve: 2 });
  const p = pacingClient(c.url);
  const l = await p.acquire('<API_KEY>');
  await l.observe({ status: 200, headers: usable(3, 2), receivedAtMs: Date.now() });
  // Remaining 3 with a reserve of 2: one more is granted, the next waits for the reset (~2 s + margin).
  const l2 = await p.acquire('<API_KEY>', { count: 5 });
  expect(l2.granted).toBe(1);
  const t0 = Date.now();
  const pending = p.acquire('<API_KEY>');
  await l2.observe({ status: 200, headers: usable(2, 2), receivedAtMs: Date.now() });
  await (await pending).release();
  expect(Date.now() - t0).toBeGreaterThanOrEqual(1500);
});

test('a wait beyond the maximum is answered "not certified" with the reason, at once', async () => {
  const c = await coordinator({ maxWaitMs: 5000 });
  const p = pacingClient(c.url);
  const l = await p.acquire('<RATE_LIMIT_KEY>');
  await l.observe({ status: 429, headers: { 'Retry-After': '3600' }, receivedAtMs: Date.now() });
  const t0 = Date.now();
  const err = await p.acquire('<RATE_LIMIT_KEY>').then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PacingNotCertified);
  expect((err as Error).message).toMatch(/3600 s is longer than MAX_RETRY_AFTER_S=5 s/);
  // At once: well under the 5 s of MAX_RETRY_AFTER_S, with room for a busy runner.
  expect(Date.now() - t0).toBeLessThan(2500);
  expect(c.report().keys[0].notCertified).toHaveLength(1);
});

test('a lease whose holder died ends by itself and frees the key', async () => {
  const c = await coordinator();
  const p = pacingClient(c.url);
  await p.acquire('<API_KEY>', { leaseTtlMs: 300 }); // never observed: its process "died"
  const t0 = Date.now();
  await (await p.acquire('<API_KEY>')).release();
  expect(Date.now() - t0).toBeLessThan(2500);
});

test('pets: with one pet and three tests, each waits its turn; a pet not restored is retired', async () => {
  const c = await coordinator();
  const p = pacingClient(c.url);
  const order: string[] = [];
  await Promise.all(
    ['a', 'b', 'c'].map(async (holder) => {
      const pet = await p.acquirePet(['7'], holder);
      order.push(`${holder}+`);
      await new Promise((r) => setTimeout(r, 30));
      order.push(`${holder}-`);
      await pet.release();
    }),
  );
  for (let i = 0; i < order.length; i += 2) expect(order[i + 1]).toBe(order[i].replace('+', '-'));
  const two = await Promise.all([p.acquirePet(['1', '2'], 'x'), p.acquirePet(['1', '2'], 'y')]);
  expect(new Set(two.map((l) => l.id)).size).toBe(2);
  expect(two.every((l) => l.freedAtMs === 0)).toBe(true);
  await two[0].release(true);
  await two[1].release();
  const again = await p.acquirePet(['1', '2'], 'z');
  expect(again.id).toBe(two[1].id);
  expect(again.freedAtMs).toBeGreaterThan(0);
  await again.release();
  expect(c.report().pets).toMatchObject({ heldAtEnd: 0, retired: 1 });
});

test("pets: a wait ended by its signal rejects with the signal's reason, and the coordinator drops the claim", async () => {
  const c = await coordinator();
  const p = pacingClient(c.url);
  const held = await p.acquirePet(['7'], 'holder');
  const started = Date.now();
  const waited = p.acquirePet(['7'], 'impatient', undefined, AbortSignal.timeout(200));
  await expect(waited).rejects.toMatchObject({ name: 'TimeoutError' });
  expect(Date.now() - started).toBeLessThan(2000);
  await held.release();
  // The dropped claim took nothing: the next one gets the pet at once.
  const next = await p.acquirePet(['7'], 'next');
  expect(next.id).toBe('7');
  await next.release();
  expect(c.report().pets).toMatchObject({ heldAtEnd: 0 });
});

test('once per run: the first caller computes, the others read its value; a failure lets the next try', async () => {
  const c = await coordinator();
  let computed = 0;
  const compute = async () => {
    computed++;
    await new Promise((r) => setTimeout(r, 50));
    return { sent: 42 };
  };
  const values = await Promise.all([1, 2, 3].map(() => pacingClient(c.url).once('seq', compute)));
  expect(values).toEqual([{ sent: 42 }, { sent: 42 }, { sent: 42 }]);
  expect(computed).toBe(1);
  await expect(
    pacingClient(c.url).once('bad', async () => {
      throw new Error('boom');
    }),
  ).rejects.toThrow('boom');
  expect(await pacingClient(c.url).once('bad', async () => 'ok')).toBe('ok');
});

test('a lease whose every granted request was answered has ended at the coordinator: its release sends nothing; one with a request unanswered is released', async () => {
  const c = await coordinator();
  const client = pacingClient(c.url);
  const paths: string[] = [];
  const request = http.request;
  http.request = ((...args: Parameters<typeof http.request>) => {
    paths.push(new URL(String(args[0])).pathname);
    return request(...args);
  }) as typeof http.request;
  try {
    const one = await client.acquire('<API_KEY>');
    await one.observe({ status: 200, headers: usable(50), receivedAtMs: Date.now() });
    await one.release();
    // The key's Remaining known, a grant of two.
    const first = await client.acquire('<LOAD_KEY>');
    await first.observe({ status: 200, headers: usable(50), receivedAtMs: Date.now() });
    const two = await client.acquire('<LOAD_KEY>', { count: 2, mode: 'exhaust' });
    expect(two.granted).toBe(2);
    await two.observe({ status: 200, headers: usable(50), receivedAtMs: Date.now() });
    await two.release();
  } finally {
    http.request = request;
  }
  expect(paths).toEqual(['/acquire', '/observe', '/acquire', '/observe', '/acquire', '/observe', '/release']);
  // The unanswered request of the second lease went back to its key.
  const report = (label: string) => c.report().keys.find((k) => k.label === label);
  expect(report('<API_KEY>')).toMatchObject({ granted: 1, observed: 1, released: 0 });
  expect(report('<LOAD_KEY>')).toMatchObject({ granted: 3, observed: 2, released: 1 });
});

test('without CONFORMANCE_PACER_URL the client refuses to run, naming the fix', () => {
  expect(() => pacingClient('')).toThrow(/CONFORMANCE_PACER_URL is not set/);
});

test("a 429 the key's Remaining did not predict holds every key of the run, keys first asked later too; the report says why", async () => {
  const c = await coordinator();
  const p = pacingClient(c.url);
  await (await p.acquire('<API_KEY>')).release();
  const l = await p.acquire('<RATE_LIMIT_KEY>');
  await l.observe({ status: 200, headers: usable(40), receivedAtMs: Date.now() });
  const l2 = await p.acquire('<RATE_LIMIT_KEY>');
  // The hold counts from the 429's arrival: the waits are timed from it.
  const t0 = Date.now();
  const r = await l2.observe({ status: 429, headers: usable(0, 30, { 'Retry-After': '2' }), receivedAtMs: t0 });
  expect(r.holdAll?.reason).toMatch(/X-RateLimit-Remaining \(40\) did not predict/);
  const waited = await Promise.all(
    ['<API_KEY>', '<LOAD_KEY>', '<anonymous>'].map(async (label) => {
      await (await p.acquire(label)).release();
      return Date.now() - t0;
    }),
  );
  for (const ms of waited) expect(ms).toBeGreaterThanOrEqual(1800);
  const report = c.report();
  expect(report.holds).toHaveLength(1);
  expect(report.holds![0]).toMatchObject({ label: '<RATE_LIMIT_KEY>', reason: expect.stringMatching(/shared by several keys/) });
  expect(report.keys.every((k) => k.earlyGrants === 0)).toBe(true);
});

test("a 429 the key's Remaining predicted holds that key alone", async () => {
  const c = await coordinator();
  const p = pacingClient(c.url);
  const l = await p.acquire('<RATE_LIMIT_KEY>', { mode: 'exhaust' });
  await l.observe({ status: 200, headers: usable(0), receivedAtMs: Date.now() });
  const l2 = await p.acquire('<RATE_LIMIT_KEY>', { mode: 'exhaust' });
  const r = await l2.observe({ status: 429, headers: usable(0, 30, { 'Retry-After': '3' }), receivedAtMs: Date.now() });
  expect(r.holdAll).toBeUndefined();
  const t0 = Date.now();
  await (await p.acquire('<API_KEY>')).release();
  // Unheld: well under the 3 s of the Retry-After, with room for a busy runner.
  expect(Date.now() - t0).toBeLessThan(1500);
  expect(c.report().holds).toEqual([]);
});

test('initial holds (a 429 an earlier run journaled): nothing is granted on that key before it passes, other keys go at once; one beyond the longest wait closes the key, not certified', async () => {
  const c = await coordinator({
    maxWaitMs: 5000,
    initialHolds: [
      { label: '<RATE_LIMIT_KEY>', untilMs: Date.now() + 1500, reason: 'a 429 an earlier run met on <RATE_LIMIT_KEY>' },
      { label: '<LOAD_KEY>', untilMs: Date.now() + 600_000, reason: 'a 429 an earlier run met on <LOAD_KEY> (Retry-After: 600)' },
    ],
  });
  const p = pacingClient(c.url);
  const t0 = Date.now();
  await (await p.acquire('<API_KEY>')).release();
  expect(Date.now() - t0, 'another key is not held').toBeLessThan(1000);
  await (await p.acquire('<RATE_LIMIT_KEY>')).release();
  expect(Date.now() - t0).toBeGreaterThanOrEqual(1400);
  const refused = await p.acquire('<LOAD_KEY>').then(
    () => undefined,
    (e: Error) => e,
  );
  expect(refused?.message).toMatch(/Retry-After: 600/);
  expect(c.report().keys.find((k) => k.label === '<RATE_LIMIT_KEY>')).toMatchObject({ earlyGrants: 0 });
});

test('onRefusal is told of every 429 before its sender is answered: the label (never a key), Retry-After, Date and until when; a 429 on the first request after the wait is flagged (a ban)', async () => {
  const seen: Parameters<NonNullable<Parameters<typeof startPacerCoordinator>[0]>['onRefusal'] & {}>[0][] = [];
  const c = await coordinator({ onRefusal: (r) => seen.push(r) });
  const p = pacingClient(c.url);
  const at = Date.now();
  const lease = await p.acquire('<RATE_LIMIT_KEY>', { mode: 'exhaust' });
  await lease.observe({ status: 429, headers: { 'Retry-After': '1', ...usable(0) }, receivedAtMs: at });
  expect(seen).toHaveLength(1);
  expect(seen[0]).toMatchObject({ label: '<RATE_LIMIT_KEY>', retryAfter: '1', afterWait: false });
  // Remaining was not known before it, so it did not predict it: the 429 holds every key, and says so.
  expect(seen[0]!.all).toBe(true);
  expect(seen[0]!.date).not.toBeNull();
  expect(seen[0]!.untilMs).toBeGreaterThanOrEqual(at + 1000);
  const again = await p.acquire('<RATE_LIMIT_KEY>', { mode: 'exhaust' });
  await again.observe({ status: 429, headers: { 'Retry-After': '1', ...usable(0) }, receivedAtMs: Date.now() });
  expect(seen[1]).toMatchObject({ label: '<RATE_LIMIT_KEY>', afterWait: true });
});
