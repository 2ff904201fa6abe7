/** The user's k6-style thresholds on a load run's figures, and the lines of those breached. Pure. */

/** A k6-style threshold the user set: `observed <op> limit`. */
export interface Threshold {
  /** The variable that sets it, e.g. `LOAD_P99_MS`. */
  name: string;
  /** What is measured, e.g. `p99 latency`. */
  what: string;
  observed: number;
  limit: number;
  op: '<' | '<=';
  unit?: string;
}

/** True when `t` holds. */
export function thresholdHolds(t: Threshold): boolean {
  return t.op === '<' ? t.observed < t.limit : t.observed <= t.limit;
}

/**
 * The lines of every breached threshold, each naming the threshold, its limit and the observed
 * value, e.g. `threshold LOAD_P99_MS breached: p99 latency 812 ms, must be < 500 ms`.
 */
export function breachedThresholds(thresholds: Threshold[]): string[] {
  return thresholds
    .filter((t) => !thresholdHolds(t))
    .map((t) => {
      const unit = t.unit ? ` ${t.unit}` : '';
      return `threshold ${t.name} breached: ${t.what} ${t.observed}${unit}, must be ${t.op} ${t.limit}${unit}`;
    });
}
