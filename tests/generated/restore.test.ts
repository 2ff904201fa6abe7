/**
 * Restoration after the generated cases of a state-changing operation (suites/generated/run-cases.ts)
 * on a broken server: a list that lags behind updates, quantities that do not read back as
 * integers, a store that does not keep the restore. The count is put back, or the run names the
 * pet and its original count as typed data ({petId, original, current}) and fails GEN-06.
 */
import { test, expect } from '../test.ts';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startPacerCoordinator } from '../../suites/pacing/coordinator.ts';
import { pacingClient } from '../../suites/pacing/client.ts';
import { createApi } from '../../suites/fixtures.ts';
import { readEnv } from '../../suites/lib/env.ts';
import { openapiDocument } from '../../schemas/index.ts';
import { operationsOf } from '../../suites/generated/document.ts';
import { coverageCases } from '../../suites/generated/coverage.ts';
import { runOperation } from '../../suites/generated/run-cases.ts';
import { createRunJournal } from '../../suites/journal/writer.ts';
import { readJournals } from '../../core/journal.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const KEY = 'restore-test-key-0123456789abcdef';
const OPS = operationsOf(openapiDocument());
const UPDATE = OPS.find((o) => o.id === 'updateInventory')!;
/** Two valid updates that change the pet: the coverage cases the test sends. */
const CASES = coverageCases(UPDATE, OPS).filter((c) => ['body /quantity: boundary 0', 'body /quantity: boundary -1'].includes(c.name));

interface Broken {
  /** After each update, this many list reads still show the list as it was before it. */
  lagReads?: number;
  /** How the list writes quantities. */
  quantityAs?: 'string' | 'fraction';
  /** The restore (a write of the original) is stored as 0. */
  dropRestore?: boolean;
  /** The restore (a write of the original) is answered 503 and not stored. */
  refuseRestore?: boolean;
  /** The first this many restores are answered 503 and not stored; the next are stored. */
  refuseRestoreTimes?: number;
  /** Another client writes the pet (4242, then 4243, …) right after each of this many restores. */
  foreignAfterRestore?: number;
  /** Conformant: items carry `updatedAt`, the time of their last update (it changes with the restore too). */
  stamped?: boolean;
  /** Another client writes 4243 right after this many updates (before the restore). */
  foreignAfterUpdates?: number;
}

async function startStore(broken: Broken) {
  let quantity = 11;
  let updates = 0;
  let foreign = 0;
  let refused = 0;
  const lag = { reads: 0, snapshot: '' };
  const written = () =>
    broken.quantityAs === 'string' ? `"${quantity}"` : broken.quantityAs === 'fraction' ? `${quantity}.0` : String(quantity);
  const stamp = () => (broken.stamped ? `,"updatedAt":"2026-01-01T00:00:${String(updates).padStart(2, '0')}Z"` : '');
  const list = () => `[{"petId":1,"quantity":${written()},"status":"available"${stamp()}}]`;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = {
        'content-type': 'application/json',
        'x-ratelimit-limit': '100000',
        'x-ratelimit-remaining': '99999',
        'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 60),
        date: new Date().toUTCString(),
      };
      if (req.method === 'GET' && req.url === '/v1/inventory') {
        res.writeHead(200, headers).end(lag.reads > 0 ? (lag.reads--, lag.snapshot) : list());
        return;
      }
      if (req.method === 'PATCH' && req.url === '/v1/inventory/1') {
        const q = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { quantity: unknown }).quantity;
        if (typeof q !== 'number' || !Number.isInteger(q)) {
          res.writeHead(400, headers).end('{"code":"invalid","message":"quantity","status":400}');
          return;
        }
        if (q === 11 && (broken.refuseRestore || refused++ < (broken.refuseRestoreTimes ?? 0))) {
          res.writeHead(503, headers).end('{"code":"unavailable","message":"later","status":503}');
          return;
        }
        if (broken.lagReads && lag.reads === 0) lag.snapshot = list();
        if (broken.lagReads) lag.reads = broken.lagReads;
        quantity = broken.dropRestore && q === 11 ? 0 : q;
        if (q === 11 && foreign < (broken.foreignAfterRestore ?? 0)) quantity = 4242 + foreign++;
        updates++;
        if (updates === broken.foreignAfterUpdates) setImmediate(() => (quantity = 4243));
        res.writeHead(200, headers).end(`{"petId":1,"quantity":${quantity},"status":"available"}`);
        return;
      }
      res.writeHead(404, headers).end('{"code":"not_found","message":"no","status":404}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    quantity: () => quantity,
    updates: () => updates,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function run(broken: Broken, journalFile?: string) {
  const store = await startStore(broken);
  const coordinator = await startPacerCoordinator();
  try {
    const env = readEnv({ BASE_URL: store.url, API_URL: store.url, API_KEY: KEY });
    const journal = journalFile ? createRunJournal({ file: journalFile, baseUrl: store.url, keys: { apiKey: KEY } }) : undefined;
    const api = createApi({ env, pacing: pacingClient(coordinator.url), annotate: () => undefined, ...(journal ? { journal } : {}) });
    const out = await runOperation(api, UPDATE, OPS, {
      seed: 1,
      share: 1 + CASES.length,
      safeMethodsOnly: false,
      coverage: { cases: CASES, leftOut: [] },
    });
    return { out, quantity: store.quantity(), updates: store.updates() };
  } finally {
    await coordinator.close();
    await store.close();
  }
}

test('two coverage cases change the pet; the run needs exactly them', () => {
  expect(CASES.map((c) => c.name)).toEqual(['body /quantity: boundary 0', 'body /quantity: boundary -1']);
});

const BROKEN: Array<{ name: string; broken: Broken }> = [
  { name: 'a list that lags two reads behind updates', broken: { lagReads: 2 } },
  { name: 'quantities listed as strings ("11")', broken: { quantityAs: 'string' } },
  { name: 'quantities listed as fractions (11.0)', broken: { quantityAs: 'fraction' } },
  { name: 'a lagging list with quantities as fractions', broken: { lagReads: 1, quantityAs: 'fraction' } },
  { name: 'items stamped with the time of their last update (a conformant extra member)', broken: { stamped: true } },
];

for (const { name, broken } of BROKEN) {
  test(`GEN-06 restoration on ${name}: the count is back at its original and nothing is reported unrestored`, async () => {
    const { out, quantity } = await run(broken);
    expect(quantity).toBe(11);
    expect(out.unrestored).toEqual([]);
    expect(out.findings).toEqual([]);
  });
}

test('GEN-06 a store that does not keep the restore: written back twice, the same count shows; the run names the pet, its original and its current count', async () => {
  const { out, quantity } = await run({ dropRestore: true });
  expect(quantity).toBe(0);
  expect(out.unrestored).toEqual([{ petId: '1', original: '11', current: '0' }]);
  expect(out.findings.map((f) => [f.id, f.message])).toEqual([
    ['GEN-06', 'updateInventory: pet 1 could not be restored: original quantity 11, now 0 (the write-back answered 200, twice)'],
  ]);
  expect(out.notCertified).toBeUndefined();
});

test('GEN-06 a store that refuses the restore: a GEN-06 finding names the pet, its original and current count and the answer', async () => {
  const { out } = await run({ refuseRestore: true });
  expect(out.unrestored.map((u) => u.petId)).toEqual(['1']);
  expect(out.findings.map((f) => [f.id, f.message])).toEqual([
    [
      'GEN-06',
      `updateInventory: pet 1 could not be restored: original quantity 11, now ${out.unrestored[0]!.current} (the write-back answered 503)`,
    ],
  ]);
  expect(out.notCertified).toBeUndefined();
});

test('GEN-06 a restore answered 503 once goes once more and puts the pet back: a warning, never a finding', async () => {
  const { out, quantity } = await run({ refuseRestoreTimes: 1 });
  expect(quantity).toBe(11);
  expect(out.unrestored).toEqual([]);
  expect(out.findings).toEqual([]);
  expect(out.warnings).toEqual([
    'updateInventory: restoring pet 1 to quantity 11 got 503, and 200 when sent once more: a valid request answered 5xx (HTTP rules: 2xx or 4xx)',
  ]);
});

test('GEN-06 another client writes the pet after the first write-back: the next write-back is seen, nothing is reported', async () => {
  const { out, quantity } = await run({ foreignAfterRestore: 1 });
  expect(quantity).toBe(11);
  expect(out.unrestored).toEqual([]);
  expect(out.findings).toEqual([]);
});

test('GEN-06 another client writes the pet after each write-back, another count each time: not certified, never a finding', async () => {
  const { out } = await run({ foreignAfterRestore: 2 });
  expect(out.findings).toEqual([]);
  expect(out.notCertified).toMatch(
    /^updateInventory: pet 1 showed quantity 4242 after one write-back and 4243 after the next \(original 11\): another client wrote it meanwhile$/,
  );
});

test("GEN-06 another client writes the pet after the cases, before the restore (the journal says which counts the run wrote): the restore leaves the other writer's count, names the three counts, not certified; the entry closed as left alone", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gen-restore-'));
  try {
    const { out, quantity, updates } = await run({ foreignAfterUpdates: CASES.length }, path.join(dir, 'journal', 'run.jsonl'));
    expect(quantity, "the other writer's count survives").toBe(4243);
    expect(updates, 'no write-back was sent').toBe(CASES.length);
    expect(out.findings).toEqual([]);
    expect(out.notCertified).toMatch(
      /^updateInventory: pet 1 left alone: somebody else wrote it since the run did \(original 11, the run wrote (0 or -1|-1 or 0), found 4243\)/,
    );
    const records = readJournals(dir).flatMap((j) => j.records);
    expect(records.some((r) => r.kind === 'done' && r.how === 'left-alone')).toBe(true);
    expect(readJournals(dir).flatMap((j) => j.open)).toEqual([]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
