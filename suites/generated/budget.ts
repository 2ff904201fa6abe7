/**
 * The generated phase's request budget (setting GENERATED_BUDGET, default 60: what one free-plan
 * key allows in a minute, shrinking included) and how it is shared between the checks: each
 * operation's request classes, the stateful sequences and the consistency check. Every test
 * derives the same shares from the document and the settings, so no state is shared between
 * tests. Pure, apart from `Budget`, which counts one check's requests.
 */

/** Counts the requests of one check against its share. */
export class Budget {
  private spent = 0;
  constructor(readonly limit: number) {}
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
