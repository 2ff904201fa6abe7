/**
 * The capacity check (`suites/load/capacity-check.ts`): passes the reference server and
 * conformant servers that choose differently (Connection: close on every response, pretty JSON,
 * 300 pets, 40 ms of latency), and each LOAD-01 rule fails against a server that breaks it, as a
 * finding naming the requirement, expected and observed. A user threshold (LOAD-04) fails only
 * when set, as that threshold. Runs are about 1 s on 127.0.0.1.
 */
import { test, expect } from '../test.ts';
import { startReferenceServer } from '../../reference-server/app.ts';
import { formatFinding } from '../../core/finding.ts';
import { judgeThreshold, runCapacityCheck, type CapacityConfig } from '../../suites/load/capacity-check.ts';
import { capacityConfig, fakeApi, inventoryHandler, pacerPerTest, RecordingStore } from './helpers.ts';
import { createRunJournal } from '../../suites/journal/writer.ts';
import { readJournals } from '../../core/journal.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const KEY = 'test-load-key-0123456789';
const pacer = pacerPerTest();

function config(baseUrl: string, extra: Partial<CapacityConfig> = {}): CapacityConfig {
  return capacityConfig(pacer(), { baseUrl, loadKey: KEY, ...extra });
}

const fails = (o: { findings: Array<{ level: string }> }) => o.findings.filter((f) => f.level === 'fail' || f.level === 'gate');

test('the reference server passes both runs, the mix restores its pet, and the record states what was spent', async () => {
  const server = await startReferenceServer({ port: 0 });
  try {
    for (const mode of ['list', 'mix'] as const) {
      const outcome = await runCapacityCheck(config(server.baseUrl, { loadKey: server.keys.load, mode }));
      expect(outcome.findings, mode).toEqual([]);
      const f = outcome.figures.load!;
      expect(f.model).toBe('open');
      expect(f.sent + f.dropped).toBeGreaterThanOrEqual(140);
      expect(f.sent + f.dropped).toBeLessThanOrEqual(151);
      // A reservoir of 100 over the complete responses (fewer when a busy runner answered fewer).
      expect(outcome.figures.sampled).toBe(Math.min(100, f.requests));
      expect(outcome.figures.sampled).toBeGreaterThan(0);
      expect(outcome.figures.invalidSamples).toBe(0);
      if (mode === 'mix') expect(outcome.figures.pet?.restored).toBe(true);
      expect(outcome.figures.requests.total).toBe(f.sent + outcome.figures.requests.setup);
      expect(outcome.evidence.at(-1)).toMatch(
        new RegExp(
          `^spent by the capacity check \\(${mode}\\): \\d+ requests on <LOAD_KEY> \\(load \\d+, set-up and restore \\d+\\), [\\d.]+ s$`,
        ),
      );
      expect(outcome.evidence.join('\n')).toContain('user thresholds: none set');
      expect(outcome.evidence.join('\n')).not.toContain(server.keys.load);
    }
  } finally {
    await server.close();
  }
});

const CONFORMANT = [
  { name: 'Connection: close on every response, pretty-printed JSON, 300 pets', options: { close: true, pretty: true, pets: 300 } },
  { name: '40 ms of latency on every answer (the spec sets no latency)', options: { delayMs: 40 } },
];
for (const { name, options } of CONFORMANT) {
  test(`a conformant server passes both runs: ${name}`, async () => {
    const api = await fakeApi(inventoryHandler(options));
    try {
      for (const mode of ['list', 'mix'] as const) {
        const outcome = await runCapacityCheck(config(api.baseUrl, { mode }));
        expect(outcome.findings.map(formatFinding), mode).toEqual([]);
        const f = outcome.figures.load!;
        expect(f.requests).toBe(f.sent);
        expect(outcome.figures.invalidSamples).toBe(0);
        if (options.close) expect(f.connectionsOpened).toBe(f.requests);
        if (mode === 'mix') expect(outcome.figures.pet?.restored).toBe(true);
      }
    } finally {
      await api.close();
    }
  });
}

const BROKEN: Array<{
  name: string;
  options: Parameters<typeof inventoryHandler>[0];
  mode?: 'list' | 'mix';
  extra?: Partial<CapacityConfig>;
  expected: RegExp;
}> = [
  {
    name: '5xx under load',
    options: { status: 503 },
    expected: /^LOAD-01 \(answered\) responses under load were 5xx: expected no 5xx; observed 503 ×\d+$/,
  },
  {
    name: 'requests not answered within LOAD_TIMEOUT_S',
    options: { delayMs: 1500 },
    extra: { timeoutS: 1, ratePerS: 20 },
    expected:
      /^LOAD-01 \(answered\) requests under load got no complete answer within the request timeout \(LOAD_TIMEOUT_S=1\): expected every request answered; observed \d+ of \d+ without an answer \(timeouts \d+/,
  },
  {
    name: 'list bodies that break the schema',
    options: { badItem: true },
    expected:
      /^LOAD-01 \(schemas\) \d+ of \d+ sampled responses do not match the schema of their own request: expected every sampled response valid; observed GET \/v1\/inventory → 200: Inventory \/0\/quantity: must be integer/,
  },
  {
    name: 'an update answered with the list instead of the item',
    options: { patchAnswersList: true },
    mode: 'mix',
    expected: /^LOAD-01 \(schemas\) .*observed PATCH \/v1\/inventory\/\{petId\} → 200: InventoryItem/,
  },
  {
    name: 'an update not applied as sent (stock not restored)',
    options: { brokenUpdate: true },
    mode: 'mix',
    expected:
      /^LOAD-01 \(restored\) the stock changed under load was not restored \(pet 1\): expected quantity 12; observed pet 1: quantity 12 before, restore PATCH → 200, listed afterwards: 13$/,
  },
];
for (const b of BROKEN) {
  test(`LOAD-01 fails against a server with ${b.name}`, async () => {
    const api = await fakeApi(inventoryHandler(b.options));
    try {
      const outcome = await runCapacityCheck(config(api.baseUrl, { mode: b.mode ?? 'list', ...b.extra }));
      const lines = fails(outcome).map((f) => formatFinding(f as never));
      expect(
        lines.some((l) => b.expected.test(l)),
        lines.join('\n'),
      ).toBe(true);
      expect(outcome.findings.filter((f) => f.level === 'gate')).toEqual([]);
    } finally {
      await api.close();
    }
  });
}

test('connections dropped with a request outstanding fail LOAD-01', async () => {
  let n = 0;
  const handler = inventoryHandler();
  const api = await fakeApi((req, body, res) => (++n % 5 === 0 ? res.socket?.destroy() : handler(req, body, res)));
  try {
    const outcome = await runCapacityCheck(config(api.baseUrl));
    expect(outcome.figures.load!.socketErrors).toBeGreaterThan(0);
    expect(fails(outcome).map((f) => formatFinding(f as never))).toEqual([
      expect.stringMatching(
        /^LOAD-01 \(answered\) requests under load got no complete answer .*connection errors \d+: .*(ECONNRESET|socket hang up)/,
      ),
    ]);
  } finally {
    await api.close();
  }
});

test('a threshold the user set fails as that threshold (LOAD-04), apart from LOAD-01; unset, it is not judged', async () => {
  const api = await fakeApi(inventoryHandler({ delayMs: 40 }));
  try {
    const gated = await runCapacityCheck(config(api.baseUrl, { p99Ms: 20, maxErrorRate: 0 }));
    expect(gated.findings.map(formatFinding)).toEqual([
      expect.stringMatching(
        /^\[gate\] LOAD-04 \(thresholds\) threshold LOAD_P99_MS \(set by the user\) breached: p99 latency: expected < 20 ms; observed (\d+(\.\d+)?) ms$/,
      ),
    ]);
    expect(Number(gated.findings[0].observed.replace(' ms', ''))).toBe(gated.figures.load!.latencyMs.p99);
    expect(gated.figures.thresholds).toEqual({ LOAD_P99_MS: 20, LOAD_MAX_ERROR_RATE: 0 });
    const free = await runCapacityCheck(config(api.baseUrl));
    expect(free.findings).toEqual([]);
    expect(free.figures.thresholds).toEqual({ LOAD_P99_MS: null, LOAD_MAX_ERROR_RATE: null });
  } finally {
    await api.close();
  }
});

test('LOAD-04: a p99 over LOAD_P99_MS is a gate failure, unless the latencies with the holds of this process taken out stay under it: then not certified', () => {
  const p99 = (observed: number) => ({ name: 'LOAD_P99_MS', what: 'p99 latency', observed, limit: 100, op: '<' as const, unit: 'ms' });
  const floor = (ms: number) => ({ latencyFloorMs: { p50: 0, p90: 0, p99: ms, max: ms, mean: 0 } });
  const rows: [
    string,
    ReturnType<typeof p99> | { name: string; what: string; observed: number; limit: number; op: '<=' },
    number,
    string | undefined,
  ][] = [
    ['held', p99(50), 50, undefined],
    ['breached by the server', p99(450), 420, 'gate'],
    ['breached by this process only', p99(450), 60, 'not-certified'],
    ['error rate: no floor', { name: 'LOAD_MAX_ERROR_RATE', what: 'error rate', observed: 0.2, limit: 0.1, op: '<=' }, 0, 'gate'],
  ];
  for (const [what, t, floorMs, level] of rows) expect(judgeThreshold(t, floor(floorMs))?.level, what).toBe(level);
  expect(judgeThreshold(p99(450), floor(60))?.message).toBe(
    'threshold LOAD_P99_MS (set by the user) breached: p99 latency, but 60 ms with the time this process was held from running taken out: the run cannot tell a slow server from its own delay',
  );
});

test('LOAD-01 on a shared deployment: another client writing the pet after each write-back leaves the restore not certified, never failed', async () => {
  const api = await fakeApi(inventoryHandler({ anotherClientWrites: true }));
  try {
    const outcome = await runCapacityCheck(config(api.baseUrl, { mode: 'mix' }));
    expect(fails(outcome)).toEqual([]);
    expect(outcome.findings).toContainEqual(
      expect.objectContaining({ id: 'LOAD-01', part: 'restored', level: 'not-certified', expected: 'quantity 12' }),
    );
    expect(outcome.figures.pet?.restored).toBe(false);
  } finally {
    await api.close();
  }
});

test('a LOAD_KEY that meets its limit stops the load at the first 429 (not certified), sends nothing early, and the stock is restored after Retry-After', async () => {
  const store = new RecordingStore();
  const server = await startReferenceServer({ port: 0, minuteWindowMs: 3000, banMs: 3000, store });
  try {
    // The pacer keeps within X-RateLimit-Remaining, so the limit is met only when another client
    // spends the key: once the load holds its grant (Remaining as it was then), one does, one
    // request at a time, down to Remaining 1.
    const base = pacer();
    let granted = false;
    const watched: typeof base = Object.assign(Object.create(base), {
      acquire: async (...args: Parameters<typeof base.acquire>) => {
        const lease = await base.acquire(...args);
        if ((args[1]?.count ?? 1) > 1) granted = true;
        return lease;
      },
    });
    const running = runCapacityCheck(
      config(server.baseUrl, {
        loadKey: server.keys.free,
        mode: 'mix',
        durationS: 2,
        ratePerS: 60,
        connections: 1,
        maxRetryAfterS: 10,
        pacer: watched,
      }),
    );
    let finished = false;
    void running.finally(() => (finished = true));
    while (!finished && !granted) await new Promise((r) => setTimeout(r, 5));
    for (let remaining = Infinity; !finished && remaining > 1; ) {
      const r = await fetch(`${server.baseUrl}/inventory`, { headers: { authorization: `Bearer ${server.keys.free}` } });
      await r.arrayBuffer();
      remaining = r.status === 200 ? Number(r.headers.get('x-ratelimit-remaining')) : 0;
    }
    const outcome = await running;
    expect(outcome.findings).toContainEqual(
      expect.objectContaining({ id: 'LOAD-01', part: 'prerequisite', level: 'not-certified', expected: 'no 429 on LOAD_KEY' }),
    );
    expect(fails(outcome)).toEqual([]);
    expect(outcome.figures.load!.stoppedBy).toBe('status');
    expect(outcome.figures.pet?.restored).toBe(true);
    expect(store.early('key:free')).toBe(0);
  } finally {
    await server.close();
  }
});

test("LOAD-01 with the run's journal: another client's count found before the mix's write-back is left alone (never written over), named with the three counts, not certified; the entry closed as left alone", async () => {
  const api = await fakeApi(inventoryHandler({ anotherClientWrites: true }));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capacity-journal-'));
  try {
    const journal = createRunJournal({ file: path.join(dir, 'journal', 'run.jsonl'), baseUrl: api.baseUrl, keys: { loadKey: KEY } });
    const outcome = await runCapacityCheck(config(api.baseUrl, { mode: 'mix', journal }));
    expect(fails(outcome)).toEqual([]);
    const alone = outcome.findings.find((f) => f.part === 'restored');
    expect(alone).toMatchObject({ id: 'LOAD-01', level: 'not-certified', expected: 'quantity 12' });
    expect(alone?.message).toMatch(
      /^pet 1 left alone: somebody else wrote it since the run did \(original 12, the run wrote 13, found (42[4-9]\d|4[3-9]\d\d|[1-9]\d{4,})\)/,
    );
    expect(
      outcome.evidence.some((l) => /restore PATCH/.test(l)),
      'no write-back was sent',
    ).toBe(false);
    expect(
      readJournals(dir)
        .flatMap((j) => j.records)
        .some((r) => r.kind === 'done' && r.how === 'left-alone'),
    ).toBe(true);
    expect(readJournals(dir).flatMap((j) => j.open)).toEqual([]);
  } finally {
    await api.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
