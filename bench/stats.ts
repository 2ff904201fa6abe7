/**
 * What `npm run bench`'s rounds can say about a goal. On a shared machine single rounds of the same
 * code spread widely (0.68 to 1.23 for the `list` pair in one run of 12), so a median alone can
 * land on either side of a goal by chance. The median's confidence interval, from the rounds'
 * order statistics (no assumption about how the noise is distributed), says whether the rounds
 * show the goal met, show it not met, or cannot tell.
 */

/** The median of `values` (not sorted in place). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** ln of n choose k. */
function logChoose(n: number, k: number): number {
  let sum = 0;
  for (let i = 1; i <= k; i++) sum += Math.log(n - k + i) - Math.log(i);
  return sum;
}

/** P(X ≤ k) for X ~ Binomial(n, 1/2). */
export function binomialHalfCdf(n: number, k: number): number {
  let p = 0;
  for (let i = 0; i <= k; i++) p += Math.exp(logChoose(n, i) - n * Math.LN2);
  return Math.min(1, p);
}

export interface Interval {
  low: number;
  high: number;
  /** The interval's actual coverage (the order statistics give only some levels). */
  confidence: number;
}

/**
 * A distribution-free interval for the median of what `values` sample: the order statistics
 * x(k) and x(n−k+1) with the largest k whose coverage, 1 − 2·P(Binomial(n, ½) ≤ k − 1), is at
 * least `level`. Undefined when there are too few values for that level (fewer than 6 for 95 %).
 */
export function medianInterval(values: readonly number[], level = 0.95): Interval | undefined {
  const n = values.length;
  const sorted = [...values].sort((a, b) => a - b);
  let best: Interval | undefined;
  for (let k = 1; 2 * k <= n; k++) {
    const confidence = 1 - 2 * binomialHalfCdf(n, k - 1);
    if (confidence < level) break;
    best = { low: sorted[k - 1], high: sorted[n - k], confidence };
  }
  return best;
}

/** What the rounds show about `ratio ≥ goal`. */
export type GoalReading = 'met' | 'not met' | 'cannot tell';

/** `met` when the whole interval is at or above the goal, `not met` when it is below, else `cannot tell`. */
export function readGoal(interval: Interval | undefined, goal: number): GoalReading {
  if (interval === undefined) return 'cannot tell';
  if (interval.low >= goal) return 'met';
  if (interval.high < goal) return 'not met';
  return 'cannot tell';
}
