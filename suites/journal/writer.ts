/**
 * The suites' side of the journal of changes (core/journal.ts): a process appends, before a
 * state-changing request leaves, what it may change, and closes the entry once the change is put
 * back and verified. One writer per worker (a fixture, never module state); every process of a
 * certify run appends to the one file certify names (`CERTIFY_JOURNAL_FILE`); a run without
 * certify (`npx playwright test`) gives each process a file of its own under
 * `<REPORTS_DIR>/journal/`.
 */
import path from 'node:path';
import {
  appendRecord,
  doneRecord,
  newEntryId,
  newJournalName,
  targetIdentity,
  type ClosedAs,
  type JournalRecord,
} from '../../core/journal.ts';
import { redact, secretsOf } from '../../core/secrets.ts';
import { parseJson } from '../lib/json.ts';
import { countText } from '../lib/unrestored.ts';

export interface RunJournal {
  /** The file appended to (absolute). */
  readonly file: string;
  /**
   * Before the first change to `petId`: journals its count as first read (exact text; null when
   * the pet was not listed: a change may create it). When this process already holds an open entry
   * for the pet, that entry stands (its original is the older value) and is returned.
   */
  change(petId: string, original: string | null, by: string, writes?: readonly string[]): string;
  /**
   * Before a request that writes `count` on `petId`: journals it on the pet's open entry, once per
   * count (the repair tells the run's own writes from somebody else's by them). Nothing when this
   * process holds no entry for the pet, or the count is its original.
   */
  writing(petId: string, count: string, by: string): void;
  /** This process's open entry for the pet, if any. */
  openFor(petId: string): string | undefined;
  /** The counts journaled as written on the pet's open entry (declared ones included); undefined when none is open. */
  writtenOn(petId: string): string[] | undefined;
  /** Before posting a message: the API cannot take it back. */
  message(by: string): string;
  /** Closes entries: the change was put back and verified (or never happened). */
  done(entries: readonly string[], how: ClosedAs, by: string): void;
}

/** Where a process journals: the run's file, or one of its own under the reports folder. */
export function journalFileOf(env: Record<string, string | undefined>): string {
  if (env.CERTIFY_JOURNAL_FILE) return path.resolve(env.CERTIFY_JOURNAL_FILE);
  return path.resolve(env.REPORTS_DIR || 'reports', newJournalName());
}

/**
 * A writer for the target at `baseUrl` (messages to `apiUrl`). `phase` prefixes every `by`; every
 * text is redacted with the run's keys before it is written (a check name never holds one, but the
 * journal must never, in any encoding).
 */
export function createRunJournal(o: {
  file: string;
  baseUrl: string;
  apiUrl?: string;
  phase?: string;
  keys: Parameters<typeof secretsOf>[0];
}): RunJournal {
  const target = targetIdentity(o.baseUrl);
  const secrets = secretsOf(o.keys);
  const byOf = (by: string) =>
    redact(`${o.phase ? `${o.phase} ` : ''}${by}`, secrets)
      .replace(/[\r\n]+/g, ' ')
      .slice(0, 200);
  const open = new Map<string, string>();
  const entryPet = new Map<string, string>();
  /** Per open entry: its original and the counts journaled as written on it. */
  const counts = new Map<string, { original: string | null; written: Set<string> }>();
  /** Open entries journaled without a count. */
  const countless = new Set<string>();
  /** Per pet, the countless entry an entry with its count replaced (closed with it). */
  const superseded = new Map<string, string>();
  const append = (r: JournalRecord) => appendRecord(o.file, r);
  const writing = (petId: string, count: string, by: string): void => {
    const entry = open.get(petId);
    const c = entry === undefined ? undefined : counts.get(entry);
    if (!entry || !c || count === c.original || c.written.has(count) || /[\r\n]/.test(count)) return;
    c.written.add(count);
    append({ v: 1, kind: 'write', entry, at: new Date().toISOString(), by: byOf(by), count: redact(count, secrets).slice(0, 100) });
  };
  return {
    file: o.file,
    change(petId, original, by, writes = []) {
      const held = open.get(petId);
      // An entry without a count (a request on a pet not listed) gives way to one with its count,
      // which closes it too: a pet listed with a count was not created by that request.
      if (held && !(original !== null && countless.has(held))) {
        for (const count of writes) writing(petId, count, by);
        return held;
      }
      if (held) superseded.set(petId, held);
      const entry = newEntryId();
      const declared = [...new Set(writes)].filter((c) => c !== original);
      append({ v: 1, kind: 'change', entry, at: new Date().toISOString(), by: byOf(by), target, petId, original, writes: declared });
      open.set(petId, entry);
      entryPet.set(entry, petId);
      counts.set(entry, { original, written: new Set(declared) });
      if (original === null) countless.add(entry);
      return entry;
    },
    writing,
    openFor: (petId) => open.get(petId),
    writtenOn(petId) {
      const entry = open.get(petId);
      const c = entry === undefined ? undefined : counts.get(entry);
      return c ? [...c.written] : undefined;
    },
    message(by) {
      const entry = newEntryId();
      const address = o.apiUrl ? targetIdentity(o.apiUrl) : target;
      append({ v: 1, kind: 'message', entry, at: new Date().toISOString(), by: byOf(by), target, address });
      return entry;
    },
    done(entries, how, by) {
      for (const entry of entries) {
        const pet = entryPet.get(entry);
        const older = pet !== undefined && open.get(pet) === entry ? superseded.get(pet) : undefined;
        for (const e of older ? [entry, older] : [entry]) append(doneRecord(e, how, byOf(by)));
        if (pet !== undefined && open.get(pet) === entry) {
          open.delete(pet);
          superseded.delete(pet);
        }
        entryPet.delete(entry);
        counts.delete(entry);
        countless.delete(entry);
      }
    },
  };
}

/** The count a request body writes (`{"quantity": …}` as JSON, or its text), as exact text; undefined when it names none. */
export function countWritten(json: unknown, body: string | Buffer | undefined): string | undefined {
  let value = json;
  if (value === undefined && body !== undefined && body.length <= 65_536) {
    try {
      value = parseJson(body.toString());
    } catch {
      return undefined;
    }
  }
  if (!value || typeof value !== 'object' || Array.isArray(value) || !('quantity' in value)) return undefined;
  return countText((value as { quantity: unknown }).quantity);
}
