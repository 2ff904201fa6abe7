/**
 * Repairing from the journal (suites/journal/repair.ts) against an in-memory store: each open entry
 * of this target is put back and closed only once the list shows it back; what cannot be undone
 * stays open and is named with what to do; another target's entries are left alone and named.
 */
import { test, expect } from '../certificate/scratch.ts';
import path from 'node:path';
import { appendRecord, newEntryId, readJournals, type ChangeRecord, type JournalRecord } from '../../core/journal.ts';
import { emptyRepair, repairDecision, repairJournals, repairLines } from '../../suites/journal/repair.ts';
import type { ApiClient } from '../../suites/fixtures.ts';

const TARGET = 'http://127.0.0.1:8080/v1';
const OTHER = 'https://staging.example.com/v1';

/** A store the fake client lists and patches; `refuse`: PATCH answers 503 and changes nothing; `fail`: the list throws (a 429 the pacer could not wait). */
function fakeApi(items: Map<string, number>, o: { refuse?: boolean; fail?: boolean } = {}) {
  const sent: string[] = [];
  const api = {
    async inventory() {
      sent.push('GET');
      if (o.fail) throw new Error('GET /v1/inventory: unplanned 429 on <API_KEY>. Nothing more is sent on this key for 900 s');
      return [...items].map(([id, quantity]) => ({ id, petId: Number(id), quantity, status: 'available' }));
    },
    async updateInventory(id: string, body: { quantity: number }) {
      sent.push(`PATCH ${id} ${body.quantity}`);
      if (o.refuse) return { status: 503 };
      items.set(String(id), body.quantity);
      return { status: 200 };
    },
    redact: (t: string) => t,
  };
  return { api: api as unknown as ApiClient, sent };
}

/** A change entry; `writes`: the counts the run declares it writes (null: an older journal, which recorded none). */
const change = (petId: string, original: string | null, target = TARGET, writes: string[] | null = ['77']): ChangeRecord => ({
  v: 1,
  kind: 'change',
  entry: newEntryId(),
  at: '2026-11-25T20:00:00.000Z',
  by: 'functional UPD-02',
  target,
  petId,
  original,
  ...(writes ? { writes } : {}),
});

/** A reports folder of the test's own (removed afterwards by the `scratch` fixture) with `records` journaled. */
function folder(scratch: (name: string) => string, records: JournalRecord[]): string {
  const dir = scratch('reports');
  for (const r of records) appendRecord(path.join(dir, 'journal', 'run.jsonl'), r);
  return dir;
}

test('JOURNAL repair: a changed count is written back, verified through the list and closed; one at its count is closed unchanged', async ({
  scratch,
}) => {
  const dir = folder(scratch, [change('1', '10'), change('2', '20'), change('1', '99')]);
  const { api, sent } = fakeApi(
    new Map([
      ['1', 77],
      ['2', 20],
    ]),
  );
  const out = await repairJournals({ api, reportsDir: dir, journals: readJournals(dir), target: TARGET, by: 'repair' });
  expect(sent).toEqual(['GET', 'PATCH 1 10', 'GET']);
  expect(out.restored.map((r) => [r.petId, r.original, r.how])).toEqual([
    ['2', '20', 'unchanged'],
    ['1', '10', 'restored'],
  ]);
  expect(out.left).toEqual([]);
  expect(readJournals(dir)[0]!.open, 'every entry closed, the later one of pet 1 too').toEqual([]);
});

test('JOURNAL repair: a pet not listed before a request on it and listed now was created (an upsert): named, delete by hand, its entry stays open; one still absent is closed', async ({
  scratch,
}) => {
  const dir = folder(scratch, [change('987654321', null), change('31337', null)]);
  const { api, sent } = fakeApi(
    new Map([
      ['1', 10],
      ['987654321', 1],
    ]),
  );
  const out = await repairJournals({ api, reportsDir: dir, journals: readJournals(dir), target: TARGET, by: 'repair' });
  expect(sent, 'nothing to write back').toEqual(['GET']);
  expect(out.left).toMatchObject([{ petId: '987654321', original: null, current: '1', created: true }]);
  expect(out.left[0]!.reason).toMatch(/created it \(an upsert\).*delete it by hand/);
  expect(out.restored).toMatchObject([{ petId: '31337', how: 'absent' }]);
  expect(readJournals(dir)[0]!.open.map((e) => (e as ChangeRecord).petId)).toEqual(['987654321']);
});

const cases: {
  name: string;
  api: { refuse?: boolean; fail?: boolean };
  readonly?: boolean;
  sent: string[];
  reason: RegExp;
  stopped?: RegExp;
}[] = [
  {
    name: 'a PATCH the server refuses',
    api: { refuse: true },
    sent: ['GET', 'PATCH 1 10'],
    reason: /PATCH back to quantity 10 got 503; set it by hand/,
  },
  { name: 'the readonly profile', api: {}, readonly: true, sent: ['GET'], reason: /readonly sends no state-changing request.*restore/ },
  {
    name: 'a list refused with 429 twice (sent again once, after its Retry-After)',
    api: { fail: true },
    sent: ['GET', 'GET'],
    reason: /not tried: the repair stopped/,
    stopped: /unplanned 429/,
  },
];
for (const c of cases) {
  test(`JOURNAL repair: ${c.name} leaves the entry open and names the pet with what to do`, async ({ scratch }) => {
    const dir = folder(scratch, [change('1', '10')]);
    const { api, sent } = fakeApi(new Map([['1', 77]]), c.api);
    const out = await repairJournals({
      api,
      reportsDir: dir,
      journals: readJournals(dir),
      target: TARGET,
      by: 'repair',
      readonly: c.readonly ?? false,
    });
    expect(sent).toEqual(c.sent);
    expect(out.left).toHaveLength(1);
    expect(out.left[0]!.reason).toMatch(c.reason);
    if (c.stopped) expect(out.stopped).toMatch(c.stopped);
    expect(readJournals(dir)[0]!.open).toHaveLength(1);
  });
}

test('JOURNAL repair: stopped before it could read the list, an id that was not a pet before its request is never named left changed (one no pet can have is closed at once)', async ({
  scratch,
}) => {
  const dir = folder(scratch, [change('1', '10'), change('abc', null)]);
  const { api } = fakeApi(new Map([['1', 77]]), { fail: true });
  const out = await repairJournals({ api, reportsDir: dir, journals: readJournals(dir), target: TARGET, by: 'repair' });
  expect(out.stopped).toMatch(/unplanned 429/);
  expect(out.left.map((l) => l.petId)).toEqual(['1']);
  expect(
    readJournals(dir)[0]!
      .open.map((e) => (e as ChangeRecord).petId)
      .sort(),
  ).toEqual(['1']);
});

test("JOURNAL repair: another target's entries are left alone and named; a message is named (it cannot be undone) and closed as reported", async ({
  scratch,
}) => {
  const message: JournalRecord = {
    v: 1,
    kind: 'message',
    entry: newEntryId(),
    at: '2026-11-25T20:00:00.000Z',
    by: 'functional MSG-01',
    target: TARGET,
    address: 'http://127.0.0.1:8080/quickstart',
  };
  const dir = folder(scratch, [change('1', '10', OTHER), change('2', '20', OTHER), message]);
  const { api, sent } = fakeApi(new Map([['1', 77]]));
  const out = await repairJournals({ api, reportsDir: dir, journals: readJournals(dir), target: TARGET, by: 'repair' });
  expect(sent, 'nothing sent: no change of this target is open').toEqual([]);
  expect(out.otherTargets).toEqual([{ file: path.join('journal', 'run.jsonl'), target: OTHER, open: 2 }]);
  expect(out.messages).toMatchObject([{ address: 'http://127.0.0.1:8080/quickstart', by: 'functional MSG-01' }]);
  expect(readJournals(dir)[0]!.open.map((e) => e.target)).toEqual([OTHER, OTHER]);
  const lines = repairLines(out, 'restore').join('\n');
  expect(lines).toMatch(/holds 2 open entries for another target, https:\/\/staging\.example\.com\/v1: left alone/);
  expect(lines).toMatch(
    /1 message\(s\) posted to http:\/\/127\.0\.0\.1:8080\/quickstart\/messages \(by functional MSG-01;.*delete them by hand/,
  );
});

test('repairLines: requests on pets that were not listed are named by a few shortened ids, the rest counted', () => {
  const long = '9'.repeat(2000);
  const absent = ['1.5', long, 'abc', 'null', 'true', '2.5', '-1.5'].map((petId) => ({
    petId,
    original: '0',
    how: 'absent' as const,
    by: 'generated GEN-01',
    file: 'journal/run.jsonl',
  }));
  const lines = repairLines({ ...emptyRepair(), restored: absent }, 'end of run');
  expect(lines).toEqual([
    `end of run: 7 request(s) on pets that were not listed created nothing: the list shows none of 1.5, ${'9'.repeat(20)}… (2000 characters), abc, null, true and 2 more (conformance.json, journal)`,
  ]);
});

test('JOURNAL repairDecision: the count found tells who wrote last', () => {
  const d = (found: string | null, written: string[] | null = ['3']) =>
    repairDecision({ original: '2', written: written ?? undefined, found }).kind;
  expect(d('2'), 'the original: nothing to do').toBe('unchanged');
  expect(d('2.0'), 'the original, however written').toBe('unchanged');
  expect(d('3'), "the run's own count: put back").toBe('put-back');
  expect(d('3', ['4', '3']), 'any count the run wrote').toBe('put-back');
  expect(d('4243'), 'another count: somebody else wrote since').toBe('left-alone');
  expect(d(null), 'the pet missing: left alone').toBe('left-alone');
  expect(d('3', []), 'the run wrote nothing: another writer').toBe('left-alone');
  expect(d('3', null), 'an older journal (no counts written): left alone').toBe('left-alone');
  expect(d('2', null), 'an older journal at the original: closed').toBe('unchanged');
});

test("JOURNAL repair: a count somebody else wrote since is left alone, named with the three counts, closed as left-alone; the run's own is put back", async ({
  scratch,
}) => {
  const theirs = change('1', '2', TARGET, ['3']);
  const ours = change('2', '20', TARGET, []);
  const back = { v: 1 as const, kind: 'write' as const, entry: ours.entry, at: ours.at, by: ours.by, count: '21' };
  const older = change('3', '30', TARGET, null);
  const dir = folder(scratch, [theirs, ours, back, older]);
  const { api, sent } = fakeApi(
    new Map([
      ['1', 4243],
      ['2', 21],
      ['3', 31],
    ]),
  );
  const out = await repairJournals({ api, reportsDir: dir, journals: readJournals(dir), target: TARGET, by: 'repair' });
  expect(sent, 'only the pet the run wrote last is written').toEqual(['GET', 'PATCH 2 20', 'GET']);
  expect(out.leftAlone).toMatchObject([
    { petId: '1', original: '2', written: ['3'], found: '4243' },
    { petId: '3', original: '30', written: null, found: '31' },
  ]);
  expect(out.leftAlone![0]!.reason).toMatch(/pet 1 left alone: somebody else wrote it.*original 2, the run wrote 3, found 4243/);
  expect(out.leftAlone![1]!.reason).toMatch(/does not say which counts the run wrote/);
  expect(out.restored).toMatchObject([{ petId: '2', how: 'restored' }]);
  expect(out.left).toEqual([]);
  expect(readJournals(dir)[0]!.open, 'every entry closed').toEqual([]);
  expect(readJournals(dir)[0]!.records.filter((r) => r.kind === 'done' && r.how === 'left-alone')).toHaveLength(2);
  expect(repairLines(out, 'restore').join('\n')).toMatch(/restore: pet 1 left alone: .*found 4243/);
});

test('JOURNAL repair: a dry run reads the list, says what it would do and why, and writes and closes nothing', async ({ scratch }) => {
  const dir = folder(scratch, [change('1', '2', TARGET, ['3']), change('2', '20'), change('3', '30')]);
  const { api, sent } = fakeApi(
    new Map([
      ['1', 4243],
      ['2', 77],
      ['3', 30],
    ]),
  );
  const out = await repairJournals({ api, reportsDir: dir, journals: readJournals(dir), target: TARGET, by: 'restore', dryRun: true });
  expect(sent).toEqual(['GET']);
  expect(out.planned?.map((p) => [p.petId, p.action])).toEqual([
    ['1', 'leave alone'],
    ['2', 'put back'],
    ['3', 'close'],
  ]);
  expect(readJournals(dir)[0]!.open).toHaveLength(3);
});
