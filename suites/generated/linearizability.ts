/**
 * Linearizability of one register (the quantity of one pet), after Wing and Gong: a history of
 * writes and reads, each with the interval in which it was in flight, is linearizable iff the
 * operations can be put in one order that respects real time (an operation that ended before
 * another began comes first) and in which every read returns the latest write. Single
 * registers keep the search small; a memo of (operations done, current value) bounds it. Pure.
 */

export interface RegisterOp {
  kind: 'write' | 'read';
  value: string;
  /** When the request was sent (ms, any monotonic clock). */
  start: number;
  /** When its response arrived. */
  end: number;
  /** For messages, e.g. `PATCH #2` or `GET on a new connection`. */
  label: string;
}

export interface LinearizabilityResult {
  linearizable: boolean;
  /** One valid order, when linearizable. */
  order?: string[];
  /** Why not, when not: the operations that could not be placed. */
  reason?: string;
}

/** Checks `ops` against a register that holds `initial` before any of them. */
export function checkRegister(initial: string, ops: readonly RegisterOp[]): LinearizabilityResult {
  const n = ops.length;
  if (n > 30) throw new Error('checkRegister: at most 30 operations');
  const failed = new Set<string>();
  let deepest: number[] = [];
  const search = (done: number, value: string, order: number[]): number[] | undefined => {
    if (order.length === n) return order;
    const key = `${done}|${value}`;
    if (failed.has(key)) return undefined;
    if (order.length > deepest.length) deepest = order;
    // The earliest end among operations not yet placed: nothing that started after it may go first.
    let horizon = Infinity;
    for (let i = 0; i < n; i++) if (!(done & (1 << i))) horizon = Math.min(horizon, ops[i]!.end);
    for (let i = 0; i < n; i++) {
      if (done & (1 << i)) continue;
      const op = ops[i]!;
      if (op.start > horizon) continue;
      if (op.kind === 'read' && op.value !== value) continue;
      const found = search(done | (1 << i), op.kind === 'write' ? op.value : value, [...order, i]);
      if (found) return found;
    }
    failed.add(key);
    return undefined;
  };
  const order = search(0, initial, []);
  if (order) return { linearizable: true, order: order.map((i) => `${ops[i]!.label} ${ops[i]!.kind} ${ops[i]!.value}`) };
  const placed = new Set(deepest);
  const stuck = ops
    .map((o, i) => ({ o, i }))
    .filter(({ i }) => !placed.has(i))
    .map(({ o }) => `${o.label} ${o.kind} ${o.value}`);
  return {
    linearizable: false,
    reason: `no order of the operations respects real time and the register: after ${deepest.map((i) => `${ops[i]!.label} ${ops[i]!.kind} ${ops[i]!.value}`).join(', ') || `the initial value ${initial}`}, none of ${stuck.join(', ')} can come next`,
  };
}
