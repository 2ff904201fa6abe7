/**
 * The generated phase's request budget and how it is shared between the checks. The default
 * budget is what API_KEY's plan allows in two windows, less what the other phases send on it
 * (`defaultBudget`); GENERATED_BUDGET overrides it. The stateful sequences and the consistency
 * check get a fixed part; of the rest, the coverage cases come first in their fixed priority
 * order (`planCoverage`), and the random classes share what is left. Every test derives the same
 * shares from the document and the settings, so no state is shared between tests. Pure, apart
 * from `Budget`, which counts one check's requests.
 */
import { planCoverage, type CoverageCase, type CoveragePlan } from './coverage.ts';

export { defaultBudget, OTHER_PHASES_API_KEY_REQUESTS } from '../../settings/generated.ts';

/** Counts the requests of one check against its share. */
export class Budget {
  private spent = 0;
  readonly limit: number;
  constructor(limit: number) {
    this.limit = limit;
  }
  /** Takes one request from the share; false when it is used up. */
  take(): boolean {
    if (this.spent >= this.limit) return false;
    this.spent++;
    return true;
  }
  get used(): number {
    return this.spent;
  }
  get left(): number {
    return this.limit - this.spent;
  }
}

export interface OperationNeeds {
  id: string;
  /** Request classes of the operation (one case each at least). */
  classes: number;
  /** Requests besides the cases: listing ids (1), restoring a changed item and verifying (2). */
  overhead: number;
}

export interface Allocation {
  /** Requests per operation id. */
  operations: Record<string, number>;
  stateful: number;
  concurrency: number;
}

/**
 * Shares `total`: the stateful sequences and the consistency check get a fixed part (enough for
 * one short sequence and one round of `writers` concurrent updates, with restoration); the rest
 * goes to the operations in proportion to what they need, remainders to the first ones.
 */
export function allocate(total: number, needs: OperationNeeds[], writers: number): Allocation {
  const concurrency = Math.max(writers + 5, Math.round(total * 0.13));
  const stateful = Math.max(8, Math.round(total * 0.13));
  const rest = Math.max(0, total - concurrency - stateful);
  const weight = needs.reduce((s, n) => s + n.classes + n.overhead, 0) || 1;
  const operations: Record<string, number> = {};
  let given = 0;
  for (const n of needs) {
    operations[n.id] = Math.floor((rest * (n.classes + n.overhead)) / weight);
    given += operations[n.id]!;
  }
  for (let i = 0; given < rest && needs.length; i = (i + 1) % needs.length, given++) operations[needs[i]!.id]!++;
  return { operations, stateful, concurrency };
}

/** Cases per class within a share: one each, more when the share holds twice the classes (the rest is kept for shrinking). */
export function runsPerClass(share: number, overhead: number, classes: number): number {
  const forCases = share - overhead;
  if (classes === 0 || forCases <= 0) return 0;
  return Math.max(1, Math.floor((forCases * 0.75) / classes));
}

/** The whole phase's plan: the fixed parts, the coverage cases within the budget, each operation's share. */
export interface GeneratedPlan extends Allocation {
  coverage: CoveragePlan;
}

/**
 * Shares `total`, most telling first: each operation's listing requests and the smallest useful
 * stateful and concurrency checks (one short sequence; one round of `writers` concurrent updates
 * with restoration); then the coverage cases in their priority order; then, of what is left, the
 * stateful and concurrency checks up to their usual share (`allocate`), the rest to the random
 * classes in proportion to their number. The shares add up to `total`.
 */
export function planGenerated(
  total: number,
  needs: OperationNeeds[],
  listing: Record<string, number>,
  coverage: Record<string, CoverageCase[]>,
  writers: number,
): GeneratedPlan {
  const usual = allocate(total, needs, writers);
  const least = { stateful: 8, concurrency: writers + 5 };
  const listed = needs.reduce((a, n) => a + (listing[n.id] ?? 0), 0);
  const plan = planCoverage(coverage, total - least.stateful - least.concurrency - listed);
  let rest = Math.max(0, total - least.stateful - least.concurrency - listed - plan.used);
  const stateful = least.stateful + Math.min(Math.max(0, usual.stateful - least.stateful), Math.floor(rest / 3));
  rest -= stateful - least.stateful;
  const concurrency = least.concurrency + Math.min(Math.max(0, usual.concurrency - least.concurrency), Math.floor(rest / 2));
  rest -= concurrency - least.concurrency;
  const weight = needs.reduce((a, n) => a + n.classes, 0) || 1;
  const operations: Record<string, number> = {};
  let given = 0;
  for (const n of needs) {
    const random = Math.floor((rest * n.classes) / weight);
    given += random;
    operations[n.id] = (listing[n.id] ?? 0) + (plan.selected[n.id]?.length ?? 0) + random;
  }
  for (let i = 0; given < rest && needs.length; i = (i + 1) % needs.length, given++) operations[needs[i]!.id]!++;
  return { operations, stateful, concurrency, coverage: plan };
}
