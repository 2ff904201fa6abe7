/**
 * The journal's format (core/journal.ts): records read back as written, a torn line is skipped,
 * `done` closes its entry, the target is named without userinfo or query, and appends of several
 * processes at once never interleave.
 */
import { test, expect } from '../certificate/scratch.ts';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { prepareReportsDir } from '../../certify/steps/reports-dir.ts';
import { createRunJournal } from '../../suites/journal/writer.ts';
import { findNeedle, secretNeedles } from '../../core/secrets.ts';
import {
  appendRecord,
  decodeJournal,
  doneRecord,
  encodeRecord,
  newEntryId,
  newJournalName,
  openEntries,
  readJournals,
  recordOf,
  targetIdentity,
  writesOf,
  type ChangeRecord,
  type MessageRecord,
} from '../../core/journal.ts';

const run = promisify(execFile);
const TSX = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));
const APPENDER = fileURLToPath(new URL('./appender.ts', import.meta.url));

const change = (petId: string, original: string | null, entry = newEntryId()): ChangeRecord => ({
  v: 1,
  kind: 'change',
  entry,
  at: '2026-11-25T20:00:00.000Z',
  by: 'functional UPD-02',
  target: 'http://127.0.0.1:8080/v1',
  petId,
  original,
});
const message = (): MessageRecord => ({
  v: 1,
  kind: 'message',
  entry: newEntryId(),
  at: '2026-11-25T20:00:00.000Z',
  by: 'functional MSG-01',
  target: 'http://127.0.0.1:8080/v1',
  address: 'http://127.0.0.1:8080/quickstart',
});

/** A folder of the test's own (removed afterwards by the `scratch` fixture). */
function folderIn(scratch: (name: string) => string): string {
  const dir = scratch('journal-test');
  fs.mkdirSync(dir);
  return dir;
}

test('JOURNAL records read back exactly as written, one line each', () => {
  const records = [change('7', '5'), change('9223372036854775807', null), message()];
  const text = records.map(encodeRecord).join('');
  expect(text.split('\n').filter(Boolean)).toHaveLength(3);
  expect(decodeJournal(text)).toEqual({ records, unreadable: 0 });
});

test('JOURNAL a line torn by a crash and lines that are not records are counted and skipped', () => {
  const good = change('7', '5');
  const text = `${encodeRecord(good)}{"v":1,"kind":"change","entry":"ab`;
  expect(decodeJournal(text)).toEqual({ records: [good], unreadable: 1 });
  expect(decodeJournal(`{"v":2}\n[1]\nnull\n`).unreadable).toBe(3);
});

const bad: { name: string; value: unknown }[] = [
  { name: 'an unknown kind', value: { v: 1, kind: 'delete', entry: 'a', at: 't', by: 'b' } },
  { name: 'a count that is a number', value: { ...change('7', '5'), original: 5 } },
  { name: 'a text with a newline', value: { ...change('7', '5'), by: 'a\nb' } },
  { name: 'a done record with an unknown way', value: { v: 1, kind: 'done', entry: 'a', at: 't', by: 'b', how: 'erased' } },
  { name: 'another version', value: { ...change('7', '5'), v: 2 } },
];
for (const c of bad) {
  test(`JOURNAL ${c.name} is not a record and cannot be encoded`, () => {
    expect(recordOf(c.value)).toBeUndefined();
    expect(() => encodeRecord(c.value as ChangeRecord)).toThrow(/not a journal record/);
  });
}

test('JOURNAL an entry is open until a done record names it', () => {
  const a = change('1', '3');
  const b = change('2', '4');
  const m = message();
  expect(openEntries([a, b, m])).toEqual([a, b, m]);
  expect(openEntries([a, b, m, doneRecord(a.entry, 'restored', 'repair'), doneRecord(m.entry, 'reported', 'certify')])).toEqual([b]);
});

test('JOURNAL the target is its origin and path: never userinfo, query or fragment', () => {
  expect(targetIdentity('https://user:secret@staging.example.com:8443/v1/?key=secret#x')).toBe('https://staging.example.com:8443/v1');
  expect(targetIdentity('http://127.0.0.1:8080/v1')).toBe('http://127.0.0.1:8080/v1');
});

test('JOURNAL files are found under journal/, oldest name first, each folded on its own', ({ scratch }) => {
  const dir = folderIn(scratch);
  const older = newJournalName(new Date('2026-11-25T10:00:00Z'));
  const newer = newJournalName(new Date('2026-11-25T11:00:00Z'));
  const a = change('1', '3');
  appendRecord(path.join(dir, newer), a);
  appendRecord(path.join(dir, older), change('2', '4'));
  appendRecord(path.join(dir, older), doneRecord(readJournals(dir)[0]!.records[0]!.entry, 'restored', 'repair'));
  fs.writeFileSync(path.join(dir, 'journal', 'notes.txt'), 'not a journal');
  const files = readJournals(dir);
  expect(files.map((f) => f.file)).toEqual([older, newer]);
  expect(files.map((f) => f.open.length)).toEqual([0, 1]);
  expect(readJournals(path.join(dir, 'none'))).toEqual([]);
});

test('JOURNAL appends of four processes at once never interleave: every line reads back', async ({ scratch }) => {
  const dir = folderIn(scratch);
  const file = path.join(dir, 'journal', 'concurrent.jsonl');
  const per = 150;
  await Promise.all([0, 1, 2, 3].map((p) => run(TSX, [APPENDER, file, String(p), String(per)])));
  const { records, unreadable } = decodeJournal(fs.readFileSync(file, 'utf8'));
  expect(unreadable).toBe(0);
  expect(records).toHaveLength(4 * per);
  for (const p of [0, 1, 2, 3]) expect(records.filter((r) => r.by === `process ${p}`)).toHaveLength(per);
});

test("JOURNAL the reports folder keeps a journal with an open entry through the next run's cleanup (the next run's input); a closed one goes like any report", ({
  scratch,
}) => {
  const dir = folderIn(scratch);
  const reports = path.join(dir, 'reports');
  const first = prepareReportsDir(reports, { home: dir, repoRoot: path.join(dir, 'repo') });
  expect(first.ok).toBe(true);
  const open = newJournalName(new Date('2026-11-25T10:00:00Z'));
  const closed = newJournalName(new Date('2026-11-25T11:00:00Z'));
  const a = change('1', '3');
  appendRecord(path.join(reports, open), a);
  const b = change('2', '4');
  appendRecord(path.join(reports, closed), b);
  appendRecord(path.join(reports, closed), doneRecord(b.entry, 'restored', 'functional UPD-02 (restore)'));
  fs.writeFileSync(path.join(reports, 'conformance.json'), '{}');
  if (first.ok) first.finish();
  const second = prepareReportsDir(reports, { home: dir, repoRoot: path.join(dir, 'repo') });
  expect(second.ok).toBe(true);
  expect(fs.existsSync(path.join(reports, open)), 'the open journal survives').toBe(true);
  expect(fs.existsSync(path.join(reports, closed)), 'the closed journal is deleted').toBe(false);
  expect(fs.existsSync(path.join(reports, 'conformance.json'))).toBe(false);
  // A run killed before it recorded its files: its manifest lists the run's entries, journal/ among them.
  appendRecord(path.join(reports, newJournalName()), change('3', '5'));
  const third = prepareReportsDir(reports, { home: dir, repoRoot: path.join(dir, 'repo') });
  expect(third.ok, "the journal is the run's own file, not a user's").toBe(true);
  expect(readJournals(reports).filter((j) => j.open.length)).toHaveLength(2);
});

test("JOURNAL the next run's cleanup keeps a journal holding only a 429 whose Retry-After has not passed (the next run's hold); one whose Retry-After has passed goes", ({
  scratch,
}) => {
  const dir = folderIn(scratch);
  const reports = path.join(dir, 'reports');
  const first = prepareReportsDir(reports, { home: dir, repoRoot: path.join(dir, 'repo') });
  expect(first.ok).toBe(true);
  const limit = (untilMs: number) => ({
    v: 1 as const,
    kind: 'limit' as const,
    entry: newEntryId(),
    at: new Date().toISOString(),
    by: 'pacer (certify)',
    target: 'http://127.0.0.1:8080/v1',
    label: '<RATE_LIMIT_KEY>',
    retryAfter: '10',
    date: new Date().toUTCString(),
    untilMs,
  });
  const pending = newJournalName(new Date('2026-11-25T10:00:00Z'));
  const passed = newJournalName(new Date('2026-11-25T11:00:00Z'));
  appendRecord(path.join(reports, pending), limit(Date.now() + 60_000));
  appendRecord(path.join(reports, passed), limit(Date.now() - 1_000));
  if (first.ok) first.finish();
  expect(prepareReportsDir(reports, { home: dir, repoRoot: path.join(dir, 'repo') }).ok).toBe(true);
  expect(fs.existsSync(path.join(reports, pending)), 'the pending 429 survives').toBe(true);
  expect(fs.existsSync(path.join(reports, passed)), 'a 429 that has passed is deleted').toBe(false);
});

test('JOURNAL a writer never writes a key in any encoding, even when a check name carries one; the target is written without userinfo or query', ({
  scratch,
}) => {
  const key = 'ik_journal_key_4b2e9c7a1f3d5e60';
  const dir = folderIn(scratch);
  const file = path.join(dir, 'journal', 'run.jsonl');
  const journal = createRunJournal({
    file,
    baseUrl: 'http://127.0.0.1:8080/v1/',
    apiUrl: 'http://127.0.0.1:8080/quickstart',
    phase: 'functional',
    keys: { apiKey: key },
  });
  const forms = [key, ` ${key}\n`, encodeURIComponent(key), Buffer.from(key).toString('base64'), JSON.stringify(key)];
  for (const [i, form] of forms.entries()) {
    const entry = journal.change(String(i + 1), '5', `UPD-02 ${form}`);
    journal.done([entry], 'restored', `UPD-02 (restore) ${form}`);
  }
  journal.message(`MSG-01 Bearer ${key}`);
  const text = fs.readFileSync(file, 'utf8');
  expect(
    secretNeedles([{ name: 'API_KEY', value: key }]).flatMap((n) => findNeedle(text, n)),
    'no key in the journal',
  ).toEqual([]);
  const { records, unreadable } = decodeJournal(text);
  expect(unreadable).toBe(0);
  expect(records.filter((r) => r.kind === 'change').map((r) => (r as ChangeRecord).target)).toEqual(
    Array(forms.length).fill('http://127.0.0.1:8080/v1'),
  );
  expect(records.every((r) => r.by.startsWith('functional '))).toBe(true);
  expect(openEntries(records).map((r) => r.kind)).toEqual(['message']);
});

test('JOURNAL a writer keeps one open entry per pet (the oldest count stands) and opens a new one after the pet was put back', ({
  scratch,
}) => {
  const dir = folderIn(scratch);
  const file = path.join(dir, 'journal', 'run.jsonl');
  const journal = createRunJournal({ file, baseUrl: 'http://127.0.0.1:8080/v1', keys: {} });
  const first = journal.change('7', '5', 'UPD-01');
  expect(journal.change('7', '99', 'UPD-02'), 'the open entry stands').toBe(first);
  expect(journal.openFor('7')).toBe(first);
  journal.done([first], 'restored', 'UPD-01 (restore)');
  expect(journal.openFor('7')).toBeUndefined();
  expect(journal.change('7', '5', 'UPD-03')).not.toBe(first);
  // A request on a pet not listed journals no count; a later claim of it journals its count beside.
  const countless = journal.change('8', null, 'UPD-04');
  expect(journal.change('8', null, 'UPD-05')).toBe(countless);
  const counted = journal.change('8', '3', 'UPD-02');
  expect(counted).not.toBe(countless);
  expect(journal.change('8', '4', 'UPD-02')).toBe(counted);
  journal.done([counted], 'restored', 'UPD-02 (restore)');
  const { records } = decodeJournal(fs.readFileSync(file, 'utf8'));
  expect(records.map((r) => r.kind)).toEqual(['change', 'done', 'change', 'change', 'change', 'done', 'done']);
  expect(
    openEntries(records).map((r) => (r as ChangeRecord).petId),
    'the pet listed with a count was not created: both closed',
  ).toEqual(['7']);
});

test("JOURNAL pendingHolds: the latest 429 per key of this target still pending, with its reason; a passed one, another target's, are not; one beyond MAX_RETRY_AFTER_S is named banned with when the key may be used again", async () => {
  const { pendingHolds } = await import('../../certify/steps/holds.ts');
  const now = Date.parse('2026-12-01T00:00:00Z');
  const limit = (label: string, untilMs: number, target = 'http://127.0.0.1:8080/v1', extra = {}) => ({
    v: 1 as const,
    kind: 'limit' as const,
    entry: newEntryId(),
    at: new Date(untilMs - 10_000).toISOString(),
    by: 'pacer (certify)',
    target,
    label,
    retryAfter: '10',
    date: new Date(untilMs - 10_000).toUTCString(),
    untilMs,
    ...extra,
  });
  const records = [
    limit('<RATE_LIMIT_KEY>', now + 4000),
    limit('<API_KEY>', now - 1),
    limit('<LOAD_KEY>', now + 595_000, 'http://127.0.0.1:8080/v1', { banned: true }),
    limit('<API_KEY>', now + 9000, 'https://other.example.com/v1'),
  ];
  for (const r of records) expect(recordOf(JSON.parse(encodeRecord(r))), 'a limit record reads back').toEqual(r);
  const holds = pendingHolds([{ file: 'j', records, open: [], limits: records, unreadable: 0 }], 'http://127.0.0.1:8080/v1', now, 120);
  expect(holds.map((h) => [h.label, h.waitS, h.overMax, h.banned ?? false])).toEqual([
    ['<RATE_LIMIT_KEY>', 4, false, false],
    ['<LOAD_KEY>', 595, true, true],
  ]);
  expect(holds[0]!.reason).toMatch(/Retry-After: 10.*this run waits 4 s/);
  expect(holds[1]!.reason).toMatch(
    /<LOAD_KEY> looks banned: it may be used again at 2026-12-01T00:09:55.000Z.*longer than MAX_RETRY_AFTER_S=120 s/,
  );
});

test('JOURNAL writer: each count written is journaled once before it is sent, never the original; an entry from an older journal (no `writes`) reads back without them', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'journal-writes-'));
  try {
    const file = path.join(dir, 'j.jsonl');
    const journal = createRunJournal({ file, baseUrl: 'http://127.0.0.1:8080/v1', keys: {} });
    const entry = journal.change('7', '5', 'UPD-02', ['6']);
    journal.writing('7', '6', 'UPD-02');
    journal.writing('7', '8', 'UPD-02');
    journal.writing('7', '8', 'UPD-02');
    journal.writing('7', '5', 'UPD-02');
    const { records } = decodeJournal(fs.readFileSync(file, 'utf8'));
    expect(records.map((r) => r.kind)).toEqual(['change', 'write']);
    const change = records[0] as ChangeRecord;
    expect(change.entry).toBe(entry);
    expect(writesOf(records, change)).toEqual(['6', '8']);
    const { writes: _, ...older } = change;
    expect(writesOf(records, recordOf(older) as ChangeRecord), 'an older journal recorded no counts written').toBeUndefined();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
