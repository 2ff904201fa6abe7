/**
 * Restoring stock counts on a server that may misbehave: counts compared by value (a count read
 * back as `5.0`, `"5"` or `5e0` is the count 5), the integer to write back, and the typed record
 * of a pet the run could not put back (`Unrestored`), carried as an `unrestored` annotation so the
 * run can say which pet it left changed and its original count. Pure.
 */

import { ANNOTATION, type Unrestored } from '../../core/results.ts';

export { unrestoredOf, type Unrestored } from '../../core/results.ts';

/** The integer a count denotes, exactly, when it denotes one (`5`, `5.0`, `"5"`, `5e0`, a bigint); else undefined. */
export function countOf(v: unknown): bigint | undefined {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return Number.isInteger(v) && Number.isSafeInteger(v) ? BigInt(v) : undefined;
  if (typeof v === 'string') {
    const t = v.trim();
    if (/^-?\d+$/.test(t)) return BigInt(t);
    const n = Number(t);
    return t !== '' && Number.isSafeInteger(n) ? BigInt(n) : undefined;
  }
  return undefined;
}

/** A count as exact text: its integer when it denotes one, else its JSON text (`"abc"`, `2.5`, `null`). */
export function countText(v: unknown): string {
  const n = countOf(v);
  if (n !== undefined) return n.toString();
  if (v === undefined) return 'undefined';
  try {
    return typeof v === 'bigint' ? String(v) : JSON.stringify(v);
  } catch {
    return String(v);
  }
}

/** Two counts denote the same value. */
export function sameCount(a: unknown, b: unknown): boolean {
  return countText(a) === countText(b);
}

/** The value to write back for a count as first read: the integer it denotes (number when safe), or undefined when it is not an integer. */
export function restorable(v: unknown): number | bigint | undefined {
  const n = countOf(v);
  if (n === undefined) return undefined;
  return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
}

/** One line for people: `pet 7 left at quantity 12 (original 5)`. */
export function describeUnrestored(u: Unrestored): string {
  return `pet ${u.petId} could not be restored: original quantity ${u.original}, now ${u.current === null ? 'missing from the list' : u.current}`;
}

/** The annotation that carries one record (JSON; read back with `unrestoredOf` of core/results.ts). */
export function unrestoredAnnotation(u: Unrestored): { type: string; description: string } {
  return { type: ANNOTATION.unrestored, description: JSON.stringify(u) };
}
