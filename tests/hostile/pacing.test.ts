/**
 * Hostile targets of the pacing promise (spec, Limits rules 3-5; Errors, 429; RFC 9110 §10.2.3),
 * each a small deterministic server on 127.0.0.1 (`target.ts`) that counts early requests: a
 * request on a key before a 429's Retry-After on it has passed.
 *
 * - `Retry-After: 99999999999` and `1000000000` are seconds: beyond MAX_RETRY_AFTER_S, nothing more
 *   goes on the key for the rest of the run (the next phase's bare-key and lower-case checks
 *   included); the requirement is not certified with the reason, and no key reaches stdout or a file.
 * - A bare key sent right after a 429 (`Authorization: <key>`) waits its Retry-After like `Bearer`.
 * - One bucket shared by every key: a 429 a key's own Remaining did not predict holds every key.
 */
import { test, expect } from '../test.ts';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCertify } from '../../certify/run.ts';
import { describeFinding, listFiles, scanPaths } from '../../certify/secret-scan.ts';
import { findNeedle, secretNeedles } from '../../core/secrets.ts';
import { createApi } from '../../suites/fixtures/api.ts';
import { readEnv } from '../../suites/lib/env.ts';
import { pacingClient } from '../../suites/pacing/client.ts';
import { startPacerCoordinator, type PacerCoordinator } from '../../suites/pacing/coordinator.ts';
import { startHostileTarget, type HostileTarget } from './target.ts';
import { runLoad } from '../../suites/load/engine.ts';
import { observing } from '../../suites/load/http.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const KEYS = {
  API_KEY: 'ik_hostile_api_5f1c2a9e7b3d4c60',
  RATE_LIMIT_KEY: 'ik_hostile_rl_8a7b6c5d4e3f2a1b',
  LOAD_KEY: 'ik_hostile_load_0f9e8d7c6b5a4938',
};
const NEEDLES = secretNeedles(Object.entries(KEYS).map(([name, value]) => ({ name, value })));

/** Every occurrence of a key, in any encoding, in `text` (by variable and encoding; never the key). */
function keyOccurrences(text: string, where: string): string[] {
  return NEEDLES.flatMap((n) => findNeedle(text, n).map((e) => `${where}: ${n.name} (${e})`));
}

/** A Playwright config whose phases are the 429 sequence, then the bearer checks (bare key, lower-case scheme…) on the same key. */
function workspace(): { dir: string; config: string; reports: string } {
  fs.mkdirSync(path.join(ROOT, 'test-results'), { recursive: true });
  const dir = fs.mkdtempSync(path.join(ROOT, 'test-results', 'hostile-pacing-'));
  const config = path.join(dir, 'playwright.config.ts');
  fs.writeFileSync(
    config,
    `import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: ${JSON.stringify(path.join(ROOT, 'suites'))},
  reporter: [['list']],
  workers: 1,
  use: { trace: 'off' },
  projects: [
    { name: 'rate-limit', testMatch: 'rate-limit/retry-after.spec.ts' },
    { name: 'generated', testMatch: 'auth/bearer.spec.ts' },
  ],
});
`,
  );
  return { dir, config, reports: path.join(dir, 'reports') };
}

const HUGE: Array<{ retryAfter: string }> = [{ retryAfter: '99999999999' }, { retryAfter: '1000000000' }];

for (const c of HUGE) {
  test(`Retry-After ${c.retryAfter} is seconds: nothing more on the key for the rest of the run, RL-08 not certified, no key anywhere`, async () => {
    test.setTimeout(240_000);
    const limit = 3;
    const target = await startHostileTarget({ keys: { API_KEY: KEYS.API_KEY }, limit, windowMs: 3000, retryAfter: () => c.retryAfter });
    const ws = workspace();
    let output = '';
    try {
      const { exitCode: code } = await runCertify({
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          BASE_URL: target.baseUrl,
          API_URL: target.baseUrl.replace(/\/v1$/, '/quickstart'),
          API_KEY: KEYS.API_KEY,
          REPORTS_DIR: ws.reports,
          MAX_RETRY_AFTER_S: '3',
          WORKERS: '1',
        },
        write: (t) => (output += t),
        configFile: ws.config,
        onlyPhases: ['rate-limit', 'generated'],
        // The 429 stays pending for decades: kept in this test's folder, so that a later test's
        // server on the same free port is not taken for this target.
        lockDir: ws.dir,
      });
      const counts = target.counts();
      expect(code, output.split('\n').slice(-40).join('\n')).toBe(1);
      // Nothing after the 429 (it is pending for decades), not even a bare key or a lower-case
      // scheme: every request that reached the target after it would count as early.
      expect(counts.early, 'requests on a key before its Retry-After passed').toBe(0);
      // The limit, then the request past it (a window that rolls mid-way adds what it admitted).
      expect(counts.requests.API_KEY).toBeGreaterThanOrEqual(limit + 1);
      expect(counts.refusals.API_KEY).toBe(1);
      const report = JSON.parse(fs.readFileSync(path.join(ws.reports, 'conformance.json'), 'utf8'));
      const rl08 = report.notCertified.find((n: { id: string }) => n.id === 'RL-08');
      expect(rl08?.reason).toMatch(new RegExp(`Retry-After asks for ${c.retryAfter} s, longer than MAX_RETRY_AFTER_S=3`));
      const auth = report.notCertified.filter(
        (n: { id: string; reason: string }) => /^AUTH-/.test(n.id) && /nothing more is sent on <API_KEY>/.test(n.reason),
      );
      expect(auth.length, 'the bearer checks on the closed key are not certified, with the reason').toBeGreaterThan(0);
      const pacing = report.pacing.find((k: { key: string }) => k.key === '<API_KEY>');
      // No wait: the key is closed at once (the pacer's own record of its holds, not the wall clock,
      // which a busy runner stretches).
      expect(pacing).toMatchObject({ earlyRequests: 0, refused: 1, longestWaitS: 0 });
      expect(pacing.notes.join('\n')).toMatch(/nothing more is sent on <API_KEY> for the rest of the run/);
      // No key in any encoding on stdout or in any file (the HTML report included).
      const files = listFiles(ws.reports);
      expect(
        files.some((f) => f.includes(`${path.sep}html${path.sep}`)),
        `Playwright's html report is scanned`,
      ).toBe(true);
      // Every file, inside zips, gzip and the HTML report's embedded archive too.
      const scan = scanPaths(
        [ws.reports],
        Object.entries(KEYS).map(([name, value]) => ({ name, value })),
        ws.reports,
      );
      expect(scan.filesScanned).toBe(files.length);
      expect([
        ...keyOccurrences(output, 'stdout'),
        ...scan.findings.map(describeFinding),
        ...scan.unscannable.map(describeFinding),
      ]).toEqual([]);
    } finally {
      await target.close();
      fs.rmSync(ws.dir, { recursive: true, force: true });
    }
  });
}

/** A client of the suites (the `api` fixture's) on `target`, paced by `coordinator`. */
function suitesClient(target: HostileTarget, coordinator: PacerCoordinator, keys: { API_KEY: string; RATE_LIMIT_KEY?: string }) {
  const env = readEnv({ BASE_URL: target.baseUrl, ...keys, WORKERS: '1', MAX_RETRY_AFTER_S: '10' });
  return createApi({
    env,
    pacing: pacingClient(coordinator.url),
    annotate: () => undefined,
    notCertified: (reason) => {
      throw new Error(reason);
    },
  });
}

/** Every way a check sends the key besides `Bearer`: each must wait a pending Retry-After. */
const KEY_FORMS: Array<{ name: string; format: (k: string) => string }> = [
  { name: 'a bare key without a scheme', format: (k) => k },
  { name: 'a lower-case scheme', format: (k) => `bearer ${k}` },
  { name: 'an upper-case scheme', format: (k) => `BEARER ${k}` },
  { name: 'Basic with the key as user', format: (k) => `Basic ${Buffer.from(`${k}:`).toString('base64')}` },
];

test('a key sent in any form right after a 429 waits its Retry-After: 0 early requests', async () => {
  test.setTimeout(60_000);
  const target = await startHostileTarget({ keys: { API_KEY: KEYS.API_KEY }, limit: 2, windowMs: 2000, retryAfter: () => '2' });
  const coordinator = await startPacerCoordinator({ maxWaitMs: 10_000, reserve: 0 });
  try {
    const api = suitesClient(target, coordinator, { API_KEY: KEYS.API_KEY });
    for (let i = 0; i < 2; i++) await api.listInventory('api', { mode: 'exhaust', expect429: true });
    // Before the request that is refused: the 429 arrives after it, and the hold counts from that
    // arrival (a busy runner may return from the call long after it, while the pacer is told).
    const beforeRefusal = Date.now();
    await api.listInventory('api', { mode: 'exhaust', expect429: true });
    expect(target.counts().refusals.API_KEY).toBe(1);
    const sentAt = await Promise.all(
      KEY_FORMS.map(async (f) => {
        await api.listInventory({ key: 'api', format: f.format }, { expect429: true });
        return Date.now() - beforeRefusal;
      }),
    );
    // The server's own count first: no request reached it before the Retry-After had passed.
    expect(target.counts().early).toBe(0);
    for (const ms of sentAt) expect(ms, 'answered only after Retry-After').toBeGreaterThanOrEqual(1900);
    expect(coordinator.report().keys.find((k) => k.label === '<API_KEY>')).toMatchObject({ earlyGrants: 0 });
    expect(coordinator.report().keys.map((k) => k.label)).not.toContain('<anonymous>');
  } finally {
    await coordinator.close();
    await target.close();
  }
});

test("one bucket shared by every key: a 429 a key's Remaining did not predict holds every key; 0 early requests", async () => {
  test.setTimeout(60_000);
  const target = await startHostileTarget({ keys: KEYS, limit: 4, windowMs: 5000, shared: true, retryAfter: () => '2' });
  const coordinator = await startPacerCoordinator({ maxWaitMs: 10_000, reserve: 0 });
  try {
    const api = suitesClient(target, coordinator, { API_KEY: KEYS.API_KEY, RATE_LIMIT_KEY: KEYS.RATE_LIMIT_KEY });
    // API_KEY learns Remaining 3; RATE_LIMIT_KEY spends the rest of the shared bucket and takes a 429 it predicted.
    await api.listInventory('api');
    for (let i = 0; i < 4; i++) await api.listInventory('rate-limit', { mode: 'exhaust', expect429: true });
    await new Promise((r) => setTimeout(r, 500));
    // API_KEY's own Remaining said 3: its 429 says the key is not the unit of the limit. The wait is
    // timed from before it: the hold counts from its arrival, which a busy runner reports later.
    const t0 = Date.now();
    const refused = await api.listInventory('api', { mode: 'exhaust', expect429: true });
    expect(refused.status).toBe(429);
    // RATE_LIMIT_KEY's own Retry-After ends first; the run-wide hold keeps it (and every key) waiting.
    await Promise.all([
      api.listInventory('rate-limit', { expect429: true }),
      api.listInventory({ key: 'rate-limit', format: (k) => k }, { expect429: true }),
    ]);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1900);
    const counts = target.counts();
    expect(counts.early, 'early on the same key').toBe(0);
    expect(counts.earlyShared, 'early on any key while an unpredicted 429 was pending').toBe(0);
    const report = coordinator.report();
    expect(report.holds?.[0]).toMatchObject({
      label: '<API_KEY>',
      reason: expect.stringMatching(/Remaining \(3\) did not predict.*every key of the run waits/),
    });
  } finally {
    await coordinator.close();
    await target.close();
  }
});

test("one bucket shared by every caller, with a key or without: after a 429 a key's Remaining did not predict, nothing is sent to the origin, keyless or wrong-key requests included, until its Retry-After; 0 early requests", async () => {
  test.setTimeout(60_000);
  const target = await startHostileTarget({
    keys: KEYS,
    limit: 4,
    windowMs: 5000,
    shared: true,
    keylessShared: true,
    retryAfter: () => '2',
  });
  const coordinator = await startPacerCoordinator({ maxWaitMs: 10_000, reserve: 0 });
  try {
    const api = suitesClient(target, coordinator, { API_KEY: KEYS.API_KEY, RATE_LIMIT_KEY: KEYS.RATE_LIMIT_KEY });
    // API_KEY learns Remaining 3; RATE_LIMIT_KEY spends the rest of the shared bucket and takes a 429 it predicted.
    await api.listInventory('api');
    for (let i = 0; i < 4; i++) await api.listInventory('rate-limit', { mode: 'exhaust', expect429: true });
    await new Promise((r) => setTimeout(r, 500));
    // API_KEY's own Remaining said 3: its 429 says the key is not the unit of the limit. The wait is
    // timed from before it: the hold counts from its arrival, which a busy runner reports later.
    const t0 = Date.now();
    const refused = await api.listInventory('api', { mode: 'exhaust', expect429: true });
    expect(refused.status).toBe(429);
    // Every kind of request a check sends without a valid key: none, a token no server knows, a malformed header.
    const keyless = await Promise.all([
      api.listInventory('none', { expect429: true }),
      api.listInventory({ authorization: `Bearer ${api.unknownKey}` }, { expect429: true }),
      api.listInventory({ authorization: 'Bearer' }, { expect429: true }),
      api.updateInventory(1, { quantity: 5 }, { credential: 'none', expect429: true }),
      api.sendMessage({ message: 'x' }, { credential: 'none', expect429: true }).catch((e: Error) => e),
    ]);
    expect(keyless.length).toBe(5);
    expect(Date.now() - t0, 'the keyless requests waited the Retry-After').toBeGreaterThanOrEqual(1900);
    const counts = target.counts();
    expect(counts.earlyShared, 'early on any key while an unpredicted 429 was pending').toBe(0);
    expect(counts.earlyKeyless, 'early without a key while an unpredicted 429 was pending').toBe(0);
  } finally {
    await coordinator.close();
    await target.close();
  }
});

test("a load granted before a 429 another key's Remaining did not predict stops at the hold: nothing more goes to the origin before its Retry-After", async () => {
  test.setTimeout(60_000);
  const target = await startHostileTarget({ keys: KEYS, limit: 100_000, windowMs: 60_000, shared: true, keylessShared: true });
  const coordinator = await startPacerCoordinator({ maxWaitMs: 10_000, reserve: 0 });
  try {
    const pacing = pacingClient(coordinator.url);
    const date = () => new Date().toUTCString();
    const reset = String(Math.ceil(Date.now() / 1000) + 60);
    // API_KEY and LOAD_KEY learn Remaining 900 of a shared limit.
    for (const label of ['<API_KEY>', '<LOAD_KEY>']) {
      const first = await pacing.acquire(label);
      await first.observe({
        status: 200,
        headers: { 'X-RateLimit-Limit': '1000', 'X-RateLimit-Remaining': '900', 'X-RateLimit-Reset': reset, Date: date() },
        receivedAtMs: Date.now(),
      });
      await first.release();
    }
    // A capacity load on LOAD_KEY holds one grant of 300 requests (10 s at 30/s).
    const lease = observing(await pacing.acquire('<LOAD_KEY>', { mode: 'paced', count: 300 }), target.baseUrl);
    expect(lease.granted).toBe(300);
    let knownAt: number | undefined;
    const run = runLoad({
      label: 'held',
      url: target.baseUrl,
      steps: [{ name: 'GET /v1/inventory', path: '/v1/inventory' }],
      authorization: `Bearer ${KEYS.LOAD_KEY}`,
      model: { kind: 'open', ratePerS: 30, durationS: 10 },
      connections: 4,
      maxRequests: 300,
      maxDurationS: 20,
      timeoutS: 5,
      loopbackOnly: true,
      progress: () => undefined,
      onResponse: (r) => lease.observe(r),
      held: () => {
        const held = lease.held();
        // What the origin had received when the load first learned of the hold.
        if (held) knownAt ??= target.counts().requests.LOAD_KEY ?? 0;
        return held;
      },
    });
    await new Promise((r) => setTimeout(r, 1000));
    // Then a 429 on API_KEY that its own Remaining (900) did not predict: every request to the origin waits 3 s.
    const second = await pacing.acquire('<API_KEY>');
    const result = await second.observe({
      status: 429,
      headers: { 'Retry-After': '3', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': reset, Date: date() },
      receivedAtMs: Date.now(),
    });
    expect(result.holdAll, 'the 429 holds every key').toBeDefined();
    const heldAt = Date.now();
    // One response of the load, observed after the hold, tells it. Once the load knows, it sends
    // nothing: the origin receives at most the requests then in flight, one per connection.
    const { figures } = await run;
    expect(figures.stoppedBy).toBe('held');
    expect(Date.now() - heldAt, 'it stopped at the hold, not at its planned end').toBeLessThan(3000);
    expect(knownAt, 'the load asked whether it was held and learned it').toBeDefined();
    const atEnd = target.counts().requests.LOAD_KEY ?? 0;
    expect(atEnd - knownAt!, 'sent to the origin once the hold was known: at most the 4 then in flight').toBeLessThanOrEqual(4);
    // Stopped early: far fewer than the 300 of the grant.
    expect(atEnd).toBeLessThan(200);
    await lease.release();
  } finally {
    await coordinator.close();
    await target.close();
  }
});
