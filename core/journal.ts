/**
 * The journal of changes a run makes to its target (`<REPORTS_DIR>/journal/`): a write-ahead log, one JSON
 * record a line, appended and fsynced before the change it names; never a key (docs/journal.md).
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

/** The journal's folder inside the reports folder. */
export const JOURNAL_DIR = 'journal';

/** Extension of a journal file. */
export const JOURNAL_EXT = '.jsonl';

/** What each record shares: the entry it belongs to, when it was written, by whom (`phase check`). */
interface RecordBase {
  v: 1;
  /** The entry's id (random hex), the same in the record that opens it and the one that closes it. */
  entry: string;
  /** ISO 8601 UTC. */
  at: string;
  /** The phase and check that wrote it, e.g. `functional UPD-02`, or `repair`. */
  by: string;
}

/** A pet whose stock count the run may change. */
export interface ChangeRecord extends RecordBase {
  kind: 'change';
  /** The inventory base address (`BASE_URL`) as `targetIdentity` writes it. */
  target: string;
  /** The pet id, exact (int64 as decimal digits, or the path segment as sent). */
  petId: string;
  /** The count as first read (exact text), or null when the pet was not in the list: a change may create it. */
  original: string | null;
  /**
   * Counts the run declares it will write (exact text), beside those of its `write` records.
   * Absent in a journal of an older version, which recorded no count it wrote.
   */
  writes?: string[];
}

/** The count the run is about to write on an entry's pet: appended before each request that writes a new one. */
export interface WriteRecord extends RecordBase {
  kind: 'write';
  /** The count as sent (exact text, e.g. `11`). */
  count: string;
}

/**
 * A 429 the run met (spec, Errors: "the client must wait for the time given in the Retry-After
 * header"): the next run, or `restore`, sends nothing on that key before it has passed. `entry`
 * is an id of its own; no `done` record closes it (its time closes it).
 */
export interface LimitRecord extends RecordBase {
  kind: 'limit';
  /** The inventory base address of the run. */
  target: string;
  /** The key's label (`<RATE_LIMIT_KEY>`), never the key. */
  label: string;
  /** The answer's `Retry-After` as sent, or null when it had none. */
  retryAfter: string | null;
  /** The answer's `Date` as sent (the server's clock), or null. */
  date: string | null;
  /** Until when (local clock, ms since the epoch) the run's pacer held the key after it. */
  untilMs: number;
  /** The 429 held every key of the run (its key's Remaining did not predict it). */
  all?: boolean;
  /** It answered the first request on the key once an earlier 429's wait had passed: the key looks banned. */
  banned?: boolean;
}

/** A message the run is about to post: the API cannot take it back. */
export interface MessageRecord extends RecordBase {
  kind: 'message';
  /** The inventory base address of the run (the target it belongs to). */
  target: string;
  /** The quickstart address (`API_URL`) as `targetIdentity` writes it. */
  address: string;
}

/**
 * How an entry was closed:
 * - `restored`: written back and seen at its original count in the list;
 * - `unchanged`: seen at its original count in the list (nothing to write back);
 * - `left-alone`: the list showed a count the run did not write: somebody else wrote since, and
 *   the repair left it (named with the three counts);
 * - `forgotten`: a person closed it by hand (`restore --forget`);
 * - `absent`: a pet that was not listed before is not listed now (nothing was created);
 * - `refused`: the server answered the request with a status other than 2xx (nothing was posted);
 * - `reported`: a change the API cannot undo (a message) was named at run level with what to do by hand.
 */
export type ClosedAs = 'restored' | 'unchanged' | 'absent' | 'refused' | 'reported' | 'left-alone' | 'forgotten';

/** Closes an entry. */
export interface DoneRecord extends RecordBase {
  kind: 'done';
  how: ClosedAs;
}

export type JournalRecord = ChangeRecord | MessageRecord | DoneRecord | WriteRecord | LimitRecord;

/** An entry no `done` record closes. */
export type OpenEntry = ChangeRecord | MessageRecord;

const CLOSED_AS: readonly ClosedAs[] = ['restored', 'unchanged', 'absent', 'refused', 'reported', 'left-alone', 'forgotten'];

/**
 * The identity of a target in the journal: origin and path of its base address, trailing slashes
 * removed. Userinfo, query and fragment (where a key could hide) are never part of it.
 */
export function targetIdentity(baseUrl: string): string {
  const u = new URL(baseUrl);
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`;
}

/** A fresh entry id. */
export function newEntryId(): string {
  return randomBytes(8).toString('hex');
}

const isText = (v: unknown): v is string => typeof v === 'string' && !/[\r\n]/.test(v);

/** The record `value` denotes, or undefined when it is not one (an unknown kind, a missing field). */
export function recordOf(value: unknown): JournalRecord | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const r = value as Record<string, unknown>;
  if (r.v !== 1 || !isText(r.entry) || !isText(r.at) || !isText(r.by)) return undefined;
  const base = { v: 1 as const, entry: r.entry, at: r.at, by: r.by };
  if (r.kind === 'change' && isText(r.target) && isText(r.petId) && (r.original === null || isText(r.original))) {
    const change: ChangeRecord = { ...base, kind: 'change', target: r.target, petId: r.petId, original: r.original };
    if (r.writes === undefined) return change;
    return Array.isArray(r.writes) && r.writes.every(isText) ? { ...change, writes: [...r.writes] } : undefined;
  }
  if (r.kind === 'write' && isText(r.count)) return { ...base, kind: 'write', count: r.count };
  if (
    r.kind === 'limit' &&
    isText(r.target) &&
    typeof r.label === 'string' &&
    /^<[A-Z_a-z]{1,40}>$/.test(r.label) &&
    (r.retryAfter === null || isText(r.retryAfter)) &&
    (r.date === null || isText(r.date)) &&
    typeof r.untilMs === 'number' &&
    Number.isFinite(r.untilMs)
  ) {
    const limit: LimitRecord = {
      ...base,
      kind: 'limit',
      target: r.target,
      label: r.label,
      retryAfter: r.retryAfter,
      date: r.date,
      untilMs: r.untilMs,
    };
    return { ...limit, ...(r.all === true ? { all: true } : {}), ...(r.banned === true ? { banned: true } : {}) };
  }
  if (r.kind === 'message' && isText(r.target) && isText(r.address))
    return { ...base, kind: 'message', target: r.target, address: r.address };
  if (r.kind === 'done' && CLOSED_AS.includes(r.how as ClosedAs)) return { ...base, kind: 'done', how: r.how as ClosedAs };
  return undefined;
}

/** One record as one line (JSON, ending in a newline). Throws on a record that would not read back. */
export function encodeRecord(record: JournalRecord): string {
  const line = JSON.stringify(record);
  if (!recordOf(JSON.parse(line))) throw new Error(`not a journal record: ${line.slice(0, 200)}`);
  return `${line}\n`;
}

/** The records of a journal's text, in order; lines that are not records (a line torn by a crash) are counted, not read. */
export function decodeJournal(text: string): { records: JournalRecord[]; unreadable: number } {
  const records: JournalRecord[] = [];
  let unreadable = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let record: JournalRecord | undefined;
    try {
      record = recordOf(JSON.parse(line));
    } catch {
      record = undefined;
    }
    if (record) records.push(record);
    else unreadable++;
  }
  return { records, unreadable };
}

/** The entries no `done` record closes, in the order they were opened. */
export function openEntries(records: readonly JournalRecord[]): OpenEntry[] {
  const closed = new Set(records.filter((r) => r.kind === 'done').map((r) => r.entry));
  return records.filter((r): r is OpenEntry => (r.kind === 'change' || r.kind === 'message') && !closed.has(r.entry));
}

/**
 * The counts the run wrote (or was about to write) on the pet of change entry `entry`: those its
 * record declares and those of its `write` records; undefined for a record of an older version,
 * which recorded none (the repair then cannot tell its own write from somebody else's).
 */
export function writesOf(records: readonly JournalRecord[], entry: ChangeRecord): string[] | undefined {
  if (entry.writes === undefined) return undefined;
  const counts = [...entry.writes];
  for (const r of records) if (r.kind === 'write' && r.entry === entry.entry && !counts.includes(r.count)) counts.push(r.count);
  return counts;
}

/** The 429s a journal holds. */
export function limitsOf(records: readonly JournalRecord[]): LimitRecord[] {
  return records.filter((r): r is LimitRecord => r.kind === 'limit');
}

/**
 * Appends one record and flushes it to disk before returning: one `write` on a descriptor opened
 * with O_APPEND (so appends of several processes never interleave), then fsync; a new file's
 * folder is flushed too, so the file itself survives a crash.
 */
export function appendRecord(file: string, record: JournalRecord): void {
  const line = encodeRecord(record);
  const dir = path.dirname(file);
  const created = !fs.existsSync(file);
  if (created) fs.mkdirSync(dir, { recursive: true });
  const fd = fs.openSync(file, 'a');
  try {
    fs.writeSync(fd, line);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  if (created) syncFolder(dir);
}

/** Flushes a folder's entries (a new file's name) to disk; not every platform allows it. */
function syncFolder(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Windows cannot open a folder: the file's own fsync is what it offers.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** One journal file as read. */
export interface JournalFile {
  /** Relative to the reports folder, e.g. `journal/2026-11-25T20-00-00Z-1a2b.jsonl`. */
  file: string;
  records: JournalRecord[];
  open: OpenEntry[];
  /** The 429s it holds (a `limit` record is never open or closed: its time ends it). */
  limits: LimitRecord[];
  unreadable: number;
}

/** Reads one journal file (relative to the reports folder). */
export function readJournalFile(reportsDir: string, rel: string): JournalFile {
  const { records, unreadable } = decodeJournal(fs.readFileSync(path.join(reportsDir, rel), 'utf8'));
  return { file: rel, records, open: openEntries(records), limits: limitsOf(records), unreadable };
}

/** Every journal file of a reports folder, oldest name first; none when it has no journal folder. */
export function readJournals(reportsDir: string): JournalFile[] {
  const dir = path.join(reportsDir, JOURNAL_DIR);
  let names: string[];
  try {
    names = fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isFile() && d.name.endsWith(JOURNAL_EXT))
      .map((d) => d.name)
      .sort();
  } catch {
    return [];
  }
  return names.map((n) => readJournalFile(reportsDir, path.join(JOURNAL_DIR, n)));
}

/** The file a new run journals to, relative to the reports folder: named by its start time, so names sort by age. */
export function newJournalName(now = new Date()): string {
  return path.join(JOURNAL_DIR, `${now.toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}${JOURNAL_EXT}`);
}

/** The record that closes `entry`. */
export function doneRecord(entry: string, how: ClosedAs, by: string, now = new Date()): DoneRecord {
  return { v: 1, kind: 'done', entry, how, at: now.toISOString(), by };
}
