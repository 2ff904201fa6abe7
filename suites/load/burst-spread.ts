/**
 * Whether a burst left "at once" (HTTP rules: Remaining + 1 requests sent concurrently test a
 * limiter's atomicity). Pure judge over the engine's figures: the spread is first byte of the
 * first request to first byte of the last (`LoadFigures.sendSpreadMs`).
 */
import { finding, type Finding } from '../../core/finding.ts';

/**
 * A spread at or under this always counts as at once: a limiter's read-then-write takes a store
 * round trip (a millisecond or more), so requests this close overlap in it.
 */
export const AT_ONCE_FLOOR_MS = 5;

/** What one burst's spread says. */
export interface BurstSpread {
  /** First byte of the first request to first byte of the last, ms (null: fewer than two sent). */
  sendSpreadMs: number | null;
  /** First byte of the first request to its first complete answer, ms (null: none). */
  firstAnswerMs: number | null;
}

/**
 * At once: every request was written before the first answer came back (all in flight together),
 * or within AT_ONCE_FLOOR_MS of the first. A burst of one, or one sent in waves, is not.
 */
export function leftAtOnce(s: BurstSpread): boolean {
  if (s.sendSpreadMs === null) return false;
  return s.sendSpreadMs <= Math.max(AT_ONCE_FLOOR_MS, s.firstAnswerMs ?? Number.POSITIVE_INFINITY);
}

/** The spread as an evidence phrase, e.g. `sent within 1.8 ms (first answer after 6.2 ms): at once`. */
export function describeSpread(s: BurstSpread): string {
  const spread = s.sendSpreadMs === null ? 'fewer than two requests sent' : `sent within ${s.sendSpreadMs} ms`;
  return `${spread} (first answer after ${s.firstAnswerMs ?? 'none'} ms): ${leftAtOnce(s) ? 'at once' : 'not at once'}`;
}

/**
 * Not certified when no burst left at once and nothing was over-admitted anyway: a non-atomic
 * limiter is caught only by requests that overlap in it. Over-admission seen is a failure whatever
 * the spread, so `overAdmitted` leaves nothing to add.
 */
export function spreadFinding(bursts: readonly BurstSpread[], overAdmitted: boolean, id: string, part: string): Finding | undefined {
  if (bursts.length === 0 || overAdmitted || bursts.some(leftAtOnce)) return undefined;
  return finding({
    id,
    part,
    level: 'not-certified',
    message: 'no burst left at once, so concurrent admission (a limiter that is not atomic) was not tested',
    expected: `every request of a burst sent before its first answer, or within ${AT_ONCE_FLOOR_MS} ms of the first`,
    observed: bursts.map(describeSpread).join('; '),
  });
}
