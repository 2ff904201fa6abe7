/**
 * Repairing from the journal of changes (core/journal.ts): every entry still open for this target
 * is put back and verified through the list, then closed with a `done` record appended to the
 * file that holds it. What the API cannot undo is named with what to do by hand: a pet that was
 * not listed before a request on it and is listed now (an upserting PATCH created it), a message
 * that was posted, a count that could not be written back. Entries of another target are left
 * alone and named. Used before a run sends anything else (certify), at a run's end for its own
 * journal, and by `inventory-conformance restore`.
 *
 * Requests go through the suites' client (`createApi`): paced by the run-wide pacer, TLS verified,
 * each with its deadline, keys redacted from every text.
 */
import path from 'node:path';
import {
  appendRecord,
  doneRecord,
  writesOf,
  type ChangeRecord,
  type ClosedAs,
  type JournalFile,
  type MessageRecord,
} from '../../core/journal.ts';
import { countText, restorable, sameCount } from '../lib/unrestored.ts';
import type { ApiClient, InventoryEntry } from '../fixtures/api.ts';
import { canBeAPet, leftAloneReason, repairDecision, writtenText, type RepairDecision } from './decision.ts';

export { repairDecision, type RepairDecision } from './decision.ts';

/** A pet put back (or found at its count) and closed. */
export interface RepairedPet {
  petId: string;
  original: string;
  how: Extract<ClosedAs, 'restored' | 'unchanged' | 'absent'>;
  /** The check that journaled it, e.g. `functional UPD-02`. */
  by: string;
  file: string;
}

/** A pet left changed: its entry stays open. `created`: not listed before, listed now. */
export interface LeftPet {
  petId: string;
  /** The count as first read; null when the pet was not listed before. */
  original: string | null;
  /** The count listed now; null when the pet is missing (or the list could not be read). */
  current: string | null;
  created: boolean;
  /** Why it stays changed and what to do by hand. */
  reason: string;
  by: string;
  file: string;
}

/** A pet somebody else wrote since the run did: not written over; its entry is closed as `left-alone`. */
export interface LeftAlonePet {
  petId: string;
  original: string;
  /** The counts the run wrote (or was writing); null for an entry of an older journal, which recorded none. */
  written: string[] | null;
  /** The count listed when the repair read it; null when the pet was not listed. */
  found: string | null;
  /** The pet and its three counts, in words. */
  reason: string;
  by: string;
  file: string;
}

/** What a dry run would do with one pet, and why; nothing was sent but the list. */
export interface PlannedPet {
  petId: string;
  original: string | null;
  written: string[] | null;
  found: string | null;
  action: 'close' | 'put back' | 'leave alone' | 'name as created' | 'name (cannot be written back)';
  reason: string;
}

/** A message posted: the API cannot take it back. */
export interface PostedMessage {
  address: string;
  at: string;
  by: string;
  file: string;
}

/** A journal holding open entries of another target: left alone. */
export interface OtherTargetJournal {
  file: string;
  target: string;
  open: number;
}

/** What a repair did. */
export interface RepairOutcome {
  /** Journal files (relative to the reports folder) that held open entries for this target. */
  journals: string[];
  restored: RepairedPet[];
  left: LeftPet[];
  /** Pets somebody else wrote since the run did: left as found (absent in reports of older versions). */
  leftAlone?: LeftAlonePet[];
  /** `restore --dry-run`: what would be done with each pet, and why (nothing was changed nor closed). */
  planned?: PlannedPet[];
  messages: PostedMessage[];
  otherTargets: OtherTargetJournal[];
  /** Why the repair stopped before every entry was tried (a 429 held the key, the target did not answer). */
  stopped?: string;
}

export interface RepairOptions {
  /** A client with `API_KEY` for this target (createApi). */
  api: ApiClient;
  reportsDir: string;
  journals: readonly JournalFile[];
  /** This target, as core/journal.ts `targetIdentity` writes it. */
  target: string;
  /** Who closes entries, e.g. `repair`, `restore`. */
  by: string;
  /** Send no state-changing request (the readonly profile): open entries are only named. */
  readonly?: boolean;
  /** Read the list, say what would be done with each pet (`planned`) and why; write and close nothing. */
  dryRun?: boolean;
}

/** Reads of the list that verify a restore (a list may lag behind updates), a pause between them. */
const VERIFY_READS = 5;
const VERIFY_PAUSE_MS = 300;

/** An empty outcome. */
export function emptyRepair(): RepairOutcome {
  return { journals: [], restored: [], left: [], leftAlone: [], messages: [], otherTargets: [] };
}

interface PetEntries {
  petId: string;
  /** The oldest journaled count (the value before the run touched the pet), or null. */
  original: string | null;
  /** Every count the run wrote on the pet, over all its entries; undefined when one entry is of an older journal. */
  written: string[] | undefined;
  records: { file: string; record: ChangeRecord }[];
}

/** Open change entries of this target, grouped by pet; the oldest count wins (later entries were written while it was changed). */
function petsOf(journals: readonly JournalFile[], target: string): PetEntries[] {
  const byPet = new Map<string, PetEntries>();
  for (const j of journals) {
    for (const r of j.open) {
      if (r.kind !== 'change' || r.target !== target) continue;
      const p: PetEntries = byPet.get(r.petId) ?? { petId: r.petId, original: null, written: [], records: [] };
      if (p.original === null && r.original !== null) p.original = r.original;
      const written = writesOf(j.records, r);
      p.written = written === undefined || p.written === undefined ? undefined : [...new Set([...p.written, ...written])];
      p.records.push({ file: j.file, record: r });
      byPet.set(r.petId, p);
    }
  }
  return [...byPet.values()];
}

/** Runs a repair; never throws for what the target does (a failure becomes `stopped` and the entries stay open). */
export async function repairJournals(o: RepairOptions): Promise<RepairOutcome> {
  const out = emptyRepair();
  const close = (file: string, entry: string, how: ClosedAs) => appendRecord(path.join(o.reportsDir, file), doneRecord(entry, how, o.by));
  for (const j of o.journals) {
    const mine = j.open.filter((r) => r.target === o.target);
    if (mine.length) out.journals.push(j.file);
    const others = j.open.filter((r) => r.target !== o.target);
    for (const target of new Set(others.map((r) => r.target)))
      out.otherTargets.push({ file: j.file, target, open: others.filter((r) => r.target === target).length });
    for (const m of mine.filter((r): r is MessageRecord => r.kind === 'message')) {
      out.messages.push({ address: m.address, at: m.at, by: m.by, file: j.file });
      if (!o.dryRun) close(j.file, m.entry, 'reported');
    }
  }
  const all = petsOf(o.journals, o.target);
  // An id no pet can have, not listed before the request on it: nothing to restore, whatever the list says.
  const pets = all.filter((p) => p.original !== null || canBeAPet(p.petId));
  if (!all.length) return out;
  const leave = (p: PetEntries, current: string | null, created: boolean, reason: string) =>
    out.left.push({
      petId: p.petId,
      original: p.original,
      current,
      created,
      reason,
      by: p.records[0]!.record.by,
      file: p.records[0]!.file,
    });
  const closeAll = (p: PetEntries, how: RepairedPet['how']) => {
    for (const { file, record } of p.records) close(file, record.entry, how);
    out.restored.push({ petId: p.petId, original: p.original ?? 'not listed', how, by: p.records[0]!.record.by, file: p.records[0]!.file });
  };
  const leaveAlone = (p: PetEntries, found: string | null, reason: string) => {
    for (const { file, record } of p.records) close(file, record.entry, 'left-alone');
    out.leftAlone!.push({
      petId: p.petId,
      original: p.original!,
      written: p.written ?? null,
      found,
      reason,
      by: p.records[0]!.record.by,
      file: p.records[0]!.file,
    });
  };
  for (const p of all.filter((x) => !pets.includes(x))) {
    if (o.dryRun) (out.planned ??= []).push({ ...NEVER_A_PET(p), found: null });
    else closeAll(p, 'absent');
  }
  if (!pets.length) return out;
  try {
    if (o.dryRun) out.planned = [...(out.planned ?? []), ...planPets(pets, await listed(o.api, `${o.by} (list)`))];
    else await restorePets(o, pets, { closeAll, leave, leaveAlone });
  } catch (e) {
    out.stopped = o.api.redact((e as Error).message.split('\n')[0]!);
    const done = new Set([...out.restored, ...out.left, ...out.leftAlone!].map((r) => r.petId));
    // An id that was not a pet before the request (not listed) has nothing to put back: it stays open for the next repair's list, never "left changed".
    for (const p of pets.filter((x) => !done.has(x.petId) && x.original !== null))
      leave(p, null, false, `not tried: the repair stopped (${out.stopped}); run \`inventory-conformance restore\` later`);
  }
  return out;
}

/**
 * One request, sent again once after a 429: the client reported it to the run's pacer, which then
 * grants nothing on the key before its Retry-After has passed (or, for a wait beyond
 * MAX_RETRY_AFTER_S, refuses, and the repair stops saying so).
 */
async function afterRetryAfter<T>(send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (e) {
    if (!/unplanned 429/.test((e as Error).message)) throw e;
    return send();
  }
}

/** The list as a map from pet id to its count. */
async function listed(api: ApiClient, by: string): Promise<Map<string, InventoryEntry>> {
  return new Map((await afterRetryAfter(() => api.inventory(by))).map((e) => [e.id, e]));
}

interface Closers {
  closeAll: (p: PetEntries, how: RepairedPet['how']) => void;
  leave: (p: PetEntries, current: string | null, created: boolean, reason: string) => void;
  leaveAlone: (p: PetEntries, found: string | null, reason: string) => void;
}

/** The decision for one pet with a count, as the list shows it now (suites/journal/decision.ts). */
function decide(p: PetEntries & { original: string }, now: InventoryEntry | undefined): { found: string | null; decision: RepairDecision } {
  const found = now ? countText(now.quantity) : null;
  return { found, decision: repairDecision({ original: p.original, written: p.written, found }) };
}

const NEVER_A_PET = (p: PetEntries): Omit<PlannedPet, 'found'> => ({
  petId: p.petId,
  original: null,
  written: p.written ?? null,
  action: 'close',
  reason: `pet ${p.petId} cannot name a pet (the list writes petId as an int64 integer): the requests on it created nothing`,
});

const CREATED = (petId: string) =>
  `pet ${petId} was not listed before the run sent a state-changing request on it and is listed now: the request created it (an upsert). The API has no way to delete a pet: delete it by hand`;

/** `restore --dry-run`: what would be done with each pet and why, from one read of the list. */
function planPets(pets: readonly PetEntries[], before: Map<string, InventoryEntry>): PlannedPet[] {
  return pets.map((p) => {
    const base = { petId: p.petId, original: p.original, written: p.written ?? null };
    const now = before.get(p.petId);
    if (p.original === null) {
      const found = now ? countText(now.quantity) : null;
      return now
        ? { ...base, found, action: 'name as created', reason: CREATED(p.petId) }
        : { ...base, found, action: 'close', reason: `pet ${p.petId} is not listed: the requests on it created nothing` };
    }
    const { found, decision } = decide({ ...p, original: p.original }, now);
    const counts = `original ${p.original}, the run wrote ${writtenText(p.written)}, found ${found ?? 'no such pet'}`;
    if (decision.kind === 'unchanged')
      return { ...base, found, action: 'close', reason: `pet ${p.petId} is at its original count (${counts})` };
    if (decision.kind === 'left-alone')
      return {
        ...base,
        found,
        action: 'leave alone',
        reason: leftAloneReason(p.petId, { ...p, original: p.original, found }, decision.why),
      };
    if (restorable(p.original) === undefined)
      return {
        ...base,
        found,
        action: 'name (cannot be written back)',
        reason: `pet ${p.petId}: its original ${p.original} is not an integer`,
      };
    return {
      ...base,
      found,
      action: 'put back',
      reason: `pet ${p.petId} shows a count the run wrote (${counts}): it would be set to ${p.original}`,
    };
  });
}

/** Writes back every count the run left (the decision says so), then verifies through the list (read again a bounded number of times). */
async function restorePets(o: RepairOptions, pets: readonly PetEntries[], c: Closers): Promise<void> {
  const before = await listed(o.api, `${o.by} (list)`);
  const written: PetEntries[] = [];
  for (const p of pets) {
    const now = before.get(p.petId);
    if (p.original === null) {
      if (!now) c.closeAll(p, 'absent');
      else c.leave(p, countText(now.quantity), true, CREATED(p.petId));
      continue;
    }
    const { found, decision } = decide({ ...p, original: p.original }, now);
    if (decision.kind === 'unchanged') {
      c.closeAll(p, 'unchanged');
      continue;
    }
    if (decision.kind === 'left-alone') {
      c.leaveAlone(p, found, leftAloneReason(p.petId, { original: p.original, written: p.written, found }, decision.why));
      continue;
    }
    const value = restorable(p.original);
    if (value === undefined || o.readonly) {
      const why = o.readonly
        ? 'CONFORMANCE_PROFILE=readonly sends no state-changing request: run `inventory-conformance restore`'
        : `its original quantity ${p.original} is not an integer, so it cannot be written back`;
      c.leave(p, found, false, `pet ${p.petId} not restored: ${why}; or set its quantity back to ${p.original} by hand`);
      continue;
    }
    const res = await afterRetryAfter(() => o.api.updateInventory(p.petId, { quantity: value }, { evidence: false }));
    if (res.status >= 200 && res.status < 300) written.push(p);
    else c.leave(p, found, false, `PATCH back to quantity ${p.original} got ${res.status}; set it by hand`);
  }
  if (!written.length) return;
  let after = await listed(o.api, `${o.by} (verify)`);
  const back = (p: PetEntries) => sameCount(after.get(p.petId)?.quantity, p.original);
  for (let i = 1; i < VERIFY_READS && !written.every(back); i++) {
    await new Promise((r) => setTimeout(r, VERIFY_PAUSE_MS));
    after = await listed(o.api, `${o.by} (verify)`);
  }
  for (const p of written) {
    const current = after.get(p.petId);
    if (back(p)) c.closeAll(p, 'restored');
    else
      c.leave(
        p,
        current ? countText(current.quantity) : null,
        false,
        `written back, but the list shows ${current ? countText(current.quantity) : 'no such pet'}; set its quantity to ${p.original} by hand`,
      );
  }
}

/** A few ids for a line of the console, each shortened; the rest counted (the report lists them all). */
function idsText(ids: readonly string[], shown = 5): string {
  const short = ids.slice(0, shown).map((id) => (id.length > 24 ? `${id.slice(0, 20)}… (${id.length} characters)` : id));
  return ids.length > shown ? `${short.join(', ')} and ${ids.length - shown} more (conformance.json, journal)` : short.join(', ');
}

/** Lines for people: what was put back, what is left changed (with what to do), what was left alone. */
export function repairLines(r: RepairOutcome, when: string): string[] {
  const lines: string[] = [];
  const back = r.restored.filter((p) => p.how !== 'absent');
  const absent = r.restored.filter((p) => p.how === 'absent');
  if (back.length)
    lines.push(
      `${when}: ${back.length} pet(s) put back and verified through the list: ${back.map((p) => `pet ${p.petId} (quantity ${p.original}, ${p.how}; journaled by ${p.by})`).join(', ')}`,
    );
  if (absent.length)
    lines.push(
      `${when}: ${absent.length} request(s) on pets that were not listed created nothing: the list shows none of ${idsText(absent.map((p) => p.petId))}`,
    );
  for (const l of r.left) lines.push(`${when}: target left changed: ${l.reason} (journaled by ${l.by} in ${l.file})`);
  for (const a of r.leftAlone ?? []) lines.push(`${when}: ${a.reason} (journaled by ${a.by} in ${a.file})`);
  for (const p of r.planned ?? []) lines.push(`${when} (dry run): pet ${p.petId}: would ${p.action}: ${p.reason}`);
  for (const address of new Set(r.messages.map((m) => m.address))) {
    const posted = r.messages.filter((m) => m.address === address);
    const checks = [...new Set(posted.map((m) => m.by))].join(', ');
    lines.push(
      `${when}: target left changed: ${posted.length} message(s) posted to ${address}/messages (by ${checks}; the first at ${posted[0]!.at}); the API cannot take a message back: delete them by hand if your service allows`,
    );
  }
  for (const x of r.otherTargets)
    lines.push(
      `${when}: ${x.file} holds ${x.open} open entr${x.open === 1 ? 'y' : 'ies'} for another target, ${x.target}: left alone (run \`inventory-conformance restore\` with BASE_URL=${x.target})`,
    );
  if (r.stopped) lines.push(`${when}: stopped: ${r.stopped}`);
  return lines;
}
