/**
 * The one rule of the journal's repair (suites/journal/repair.ts), pure: who wrote last, told by
 * the count the repair finds on the target. PATCH sets an absolute quantity and the API has no
 * conditional update (spec, Endpoints 2), so the count found is all a repair has to go on:
 * - the original: nothing to do, the entry is closed;
 * - a count the run wrote (or was about to write when it died): the original is put back;
 * - anything else (another count, the pet missing): somebody else wrote since; it is left alone
 *   and named with the three counts, never written over.
 * An entry of an older journal, which recorded no count the run wrote, cannot tell the run's own
 * write from somebody else's: it is left alone unless the original is found (docs/journal.md says why).
 */
import { sameCount } from '../lib/unrestored.ts';

export type RepairDecision =
  | { kind: 'unchanged' }
  | { kind: 'put-back' }
  | { kind: 'left-alone'; why: 'another-writer' | 'older-journal' | 'missing' };

export interface DecisionInput {
  /** The count as first read (exact text). */
  original: string;
  /** The counts the run wrote on the pet; undefined for an entry of an older journal. */
  written: readonly string[] | undefined;
  /** The count listed now (exact text), or null when the pet is not listed. */
  found: string | null;
}

/** What the repair does with one pet. */
export function repairDecision(o: DecisionInput): RepairDecision {
  if (o.found !== null && sameCount(o.found, o.original)) return { kind: 'unchanged' };
  if (o.found === null) return { kind: 'left-alone', why: 'missing' };
  if (o.written === undefined) return { kind: 'left-alone', why: 'older-journal' };
  if (o.written.some((c) => sameCount(c, o.found))) return { kind: 'put-back' };
  return { kind: 'left-alone', why: 'another-writer' };
}

/** The counts the run wrote, for people: `3`, `3 or 4`, `none recorded`. */
export function writtenText(written: readonly string[] | undefined): string {
  if (written === undefined) return 'not recorded (a journal of an older version)';
  if (!written.length) return 'none';
  return written.length > 4 ? `${written.slice(0, 4).join(', ')} and ${written.length - 4} more` : written.join(' or ');
}

/** Why a pet is left alone, in words naming the pet and its three counts. */
export function leftAloneReason(petId: string, o: DecisionInput, why: 'another-writer' | 'older-journal' | 'missing'): string {
  const counts = `original ${o.original}, the run wrote ${writtenText(o.written)}, found ${o.found ?? 'no such pet in the list'}`;
  const cause =
    why === 'another-writer'
      ? 'somebody else wrote it since the run did'
      : why === 'missing'
        ? 'the list no longer shows it'
        : "its journal does not say which counts the run wrote, so the count found may be another writer's";
  return `pet ${petId} left alone: ${cause} (${counts}); nothing was written over it. Set it to ${o.original} by hand only if the count found is not wanted`;
}

/**
 * Before a check writes a pet's original back (its own restore, after reading the list): the same
 * rule. The reason to leave the pet alone when the count found is somebody else's (neither the
 * original nor a count the run wrote), else undefined (write it back). A pet not listed is the
 * check's to judge; an unknown `written` (no journal) leaves the check as it was.
 */
export function writeBackLeftAlone(
  petId: string,
  original: string,
  written: readonly string[] | undefined,
  found: string | null,
): string | undefined {
  if (found === null || written === undefined) return undefined;
  const d = repairDecision({ original, written, found });
  return d.kind === 'left-alone' && d.why === 'another-writer' ? leftAloneReason(petId, { original, written, found }, d.why) : undefined;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Whether `petId` can name a pet at all: the list writes petId as an int64 integer (spec,
 * InventoryItem). An id that cannot (`abc`, `1.5`, 2^63) was never a pet and is nothing to restore.
 */
export function canBeAPet(petId: string): boolean {
  if (!/^-?\d{1,20}$/.test(petId)) return false;
  const n = BigInt(petId);
  return n >= INT64_MIN && n <= INT64_MAX;
}
