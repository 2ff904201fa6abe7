/**
 * The journal's one rule (suites/journal/decision.ts) holds for the checks' own write-backs too:
 * a pet showing somebody else's count (neither its original nor one the run wrote) is never
 * written over, its entry is closed as left alone and it is named with the three counts. An id
 * that never was a pet (answered 404 or 400, or one no pet can have: `abc`, `1.5`, 2^63) is
 * nothing to restore: never named "left changed" by the repair, the settle step or restore.
 */
import { test, expect } from '../certificate/scratch.ts';
import path from 'node:path';
import { appendRecord, newEntryId, readJournals, type ChangeRecord, type DoneRecord } from '../../core/journal.ts';
import { canBeAPet, writeBackLeftAlone } from '../../suites/journal/decision.ts';
import { repairJournals } from '../../suites/journal/repair.ts';
import { createRunJournal } from '../../suites/journal/writer.ts';
import { startPacerCoordinator } from '../../suites/pacing/coordinator.ts';
import { pacingClient } from '../../suites/pacing/client.ts';
import { createApi, type ApiClient } from '../../suites/fixtures.ts';
import { createStock } from '../../suites/fixtures/stock.ts';
import { readEnv } from '../../suites/lib/env.ts';
import { startReferenceServer } from '../../reference-server/app.ts';
import { serializeItem, type InventoryItem, type InventoryStore } from '../../reference-server/inventory/store.ts';

test('JOURNAL write-back rule: the original or a count the run wrote is written back; another count is left alone and named with the three counts; a pet not listed, or no journal, leaves the check as it was', () => {
  expect(writeBackLeftAlone('7', '5', ['9'], '5')).toBeUndefined();
  expect(writeBackLeftAlone('7', '5', ['9'], '9')).toBeUndefined();
  expect(writeBackLeftAlone('7', '5', ['9'], '9.0'), 'compared by value').toBeUndefined();
  expect(writeBackLeftAlone('7', '5', ['9'], '4243')).toMatch(
    /pet 7 left alone: somebody else wrote it since the run did \(original 5, the run wrote 9, found 4243\); nothing was written over it/,
  );
  expect(writeBackLeftAlone('7', '5', [], '4243'), 'the run wrote nothing: any other count is another writer’s').toMatch(/found 4243/);
  expect(writeBackLeftAlone('7', '5', ['9'], null)).toBeUndefined();
  expect(writeBackLeftAlone('7', '5', undefined, '4243')).toBeUndefined();
});

test('JOURNAL an id no pet can have: abc, 1.5, 2^63, an empty or signed-out-of-range one; every int64 can', () => {
  for (const id of ['abc', '1.5', '9223372036854775808', '-9223372036854775809', '', '1e3', '0x10']) expect(canBeAPet(id), id).toBe(false);
  for (const id of ['987654321', '0', '-1', '9223372036854775807', '-9223372036854775808']) expect(canBeAPet(id), id).toBe(true);
});

/** Four pets; counts each setQuantity (the writes that reach the store). */
function store(): InventoryStore & { writes: { id: bigint; quantity: number }[] } {
  const items = new Map<bigint, InventoryItem>(
    [1n, 2n, 3n, 4n].map((id) => [id, { petId: id, quantity: Number(id) * 10, status: 'available' }]),
  );
  const writes: { id: bigint; quantity: number }[] = [];
  return {
    writes,
    listJson: () => Buffer.from(`[${[...items.values()].map(serializeItem).join(',')}]`),
    get: (id) => items.get(id),
    setQuantity(id, quantity) {
      const item = items.get(id);
      if (!item) return undefined;
      writes.push({ id, quantity });
      item.quantity = quantity;
      return item;
    },
  };
}

/** The reference server on `store()`, a pacer, and a client that journals into `file`. */
async function setup(file: string) {
  const s = store();
  const server = await startReferenceServer({ port: 0, inventory: s, minuteWindowMs: 60_000 });
  const coordinator = await startPacerCoordinator();
  const env = readEnv({
    BASE_URL: server.baseUrl,
    API_URL: server.baseUrl.replace(/\/v1$/, '/quickstart'),
    API_KEY: server.keys.pro,
    API_PLAN: 'pro',
  });
  const journal = createRunJournal({ file, baseUrl: server.baseUrl, keys: { apiKey: server.keys.pro } });
  const api = createApi({ env, pacing: pacingClient(coordinator.url), annotate: () => undefined, journal });
  return {
    s,
    server,
    api,
    journal,
    /** Another client (another key) writes `quantity` on pet `id`. */
    otherWriter: (id: string, quantity: number) =>
      fetch(`${server.baseUrl}/inventory/${id}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${server.keys.business}`, 'content-type': 'application/json' },
        body: JSON.stringify({ quantity }),
      }).then((r) => r.arrayBuffer()),
    close: async () => {
      await coordinator.close();
      await server.close();
    },
  };
}

const doneHows = (reportsDir: string) =>
  readJournals(reportsDir)
    .flatMap((j) => j.records)
    .filter((r): r is DoneRecord => r.kind === 'done')
    .map((r) => r.how);

test("JOURNAL stock: another writer sets the test's pet to 4243 after the test changed it: the restore leaves 4243, names the pet with its original, the test's count and the count found, and closes the entry as left alone", async ({
  scratch,
}) => {
  const dir = scratch('reports');
  const t = await setup(path.join(dir, 'journal', 'run.jsonl'));
  try {
    const warnings: string[] = [];
    const recorded: unknown[] = [];
    const stock = createStock(
      t.api,
      'UPD-02 test',
      60_000,
      'UPD-02',
      (u) => recorded.push(u),
      (w) => warnings.push(w),
    );
    const pet = await stock.claim();
    expect((await t.api.updateInventory(pet.id, { quantity: 777 })).status).toBe(200);
    await t.otherWriter(pet.id, 4243);
    const before = t.s.writes.length;
    await stock.end();
    expect((t.s.get(BigInt(pet.id)) as InventoryItem | undefined)?.quantity, "the other writer's count survives").toBe(4243);
    expect(t.s.writes.slice(before), 'nothing written over it').toEqual([]);
    expect(warnings.join('\n')).toMatch(
      new RegExp(`UPD-02: pet ${pet.id} left alone: somebody else wrote it .*original ${pet.quantity}, the run wrote 777, found 4243`),
    );
    expect(recorded, 'not a pet the run left changed').toEqual([]);
    expect(readJournals(dir).flatMap((j) => j.open)).toEqual([]);
    expect(doneHows(dir)).toContain('left-alone');
  } finally {
    await t.close();
  }
});

test('JOURNAL stock: the count found is the test’s own: it is put back as before; every other pet ends as it started', async ({
  scratch,
}) => {
  const dir = scratch('reports');
  const t = await setup(path.join(dir, 'journal', 'run.jsonl'));
  try {
    const stock = createStock(t.api, 'UPD-02 test', 60_000, 'UPD-02');
    const pet = await stock.claim();
    await t.api.updateInventory(pet.id, { quantity: 777 });
    await stock.end();
    for (const id of [1n, 2n, 3n, 4n]) expect((t.s.get(id) as InventoryItem | undefined)?.quantity, `pet ${id}`).toBe(Number(id) * 10);
    expect(readJournals(dir).flatMap((j) => j.open)).toEqual([]);
    expect(doneHows(dir)).not.toContain('left-alone');
  } finally {
    await t.close();
  }
});

test('JOURNAL ids that never were pets: PATCHes of 987654321 (404), abc, 1.5 and 2^63 (400) close their entries at once; a repair, even one that cannot read the list, names none of them left changed', async ({
  scratch,
}) => {
  const dir = scratch('reports');
  const file = path.join(dir, 'journal', 'run.jsonl');
  const t = await setup(file);
  try {
    for (const id of ['987654321', 'abc', '1.5', '9223372036854775808']) {
      const res = await t.api.updateInventory(id, { quantity: 3 });
      expect([400, 404], id).toContain(res.status);
    }
    expect(
      readJournals(dir).flatMap((j) => j.open),
      'every entry closed at its 4xx',
    ).toEqual([]);
    // Entries a run left open on such ids (it died before the answer): a repair whose list read fails.
    const open = (petId: string): ChangeRecord => ({
      v: 1,
      kind: 'change',
      entry: newEntryId(),
      at: new Date().toISOString(),
      by: 'generated GEN-06',
      target: t.server.baseUrl,
      petId,
      original: null,
      writes: [],
    });
    for (const id of ['abc', '1.5', '9223372036854775808']) appendRecord(file, open(id));
    const failing = {
      inventory: async () => {
        throw new Error('GET /v1/inventory: unplanned 429 on <API_KEY>');
      },
      updateInventory: async () => ({ status: 200 }),
      redact: (x: string) => x,
    } as unknown as ApiClient;
    for (const dryRun of [true, false]) {
      const out = await repairJournals({
        api: failing,
        reportsDir: dir,
        journals: readJournals(dir),
        target: t.server.baseUrl,
        by: 'restore',
        dryRun,
      });
      expect(out.left, `dry run ${dryRun}`).toEqual([]);
      if (dryRun) expect(out.planned?.map((p) => p.action)).toEqual(['close', 'close', 'close']);
      else
        expect(out.restored.map((p) => [p.petId, p.how])).toEqual([
          ['abc', 'absent'],
          ['1.5', 'absent'],
          ['9223372036854775808', 'absent'],
        ]);
    }
    expect(readJournals(dir).flatMap((j) => j.open)).toEqual([]);
  } finally {
    await t.close();
  }
});
