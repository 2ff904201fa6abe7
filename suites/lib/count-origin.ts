/**
 * Who left a count. The stock checks read a pet's quantity back through the list and judge it
 * (spec, Inventory: "updateInventory sets the quantity"). On a shared deployment another client
 * (a second pipeline's run, a person, a job) may write the same pet between this test's requests,
 * and the run cannot see it except through the count it leaves: a count that is neither the
 * pet's original nor one a request of this test carried is another client's trace. Such a reading
 * is evidence about the other client, not about the server: never a fail. Pure.
 */
import { countText, sameCount } from './unrestored.ts';

/**
 * `original`: the count the test found; `ours`: a count a request of this test carried (or a
 * lenient reading of one); `foreign`: neither (another client wrote it); `missing`: the pet is
 * not in the list.
 */
export type CountOrigin = 'original' | 'ours' | 'foreign' | 'missing';

/** Who left `observed` (`undefined`: the pet is not listed), given the `original` count and the counts this test's requests `carried`. */
export function countOrigin(observed: unknown, original: unknown, carried: readonly unknown[]): CountOrigin {
  if (observed === undefined) return 'missing';
  if (sameCount(observed, original)) return 'original';
  return carried.some((c) => sameCount(observed, c)) ? 'ours' : 'foreign';
}

const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

/**
 * The counts a request body could leave if a server applied it leniently: every number written in
 * it (as is, truncated and rounded either way, so `2.5` covers 2 and 3, `"5"` covers 5), and a
 * cleared count (`0`, `null`). Used for bodies the server must refuse: a count among these is the
 * refused body's doing.
 */
export function countsCarried(body: string): unknown[] {
  const out: unknown[] = [0, null];
  for (const token of body.match(NUMBER) ?? []) {
    const n = Number(token);
    if (!Number.isFinite(n)) continue;
    out.push(n, Math.trunc(n), Math.floor(n), Math.ceil(n), Math.round(n));
  }
  return out;
}

/** The reason a check is not certified when another client's count shows: names the pet and both counts. */
export function anotherWriterReason(petId: string, original: unknown, observed: unknown, carried: readonly unknown[]): string {
  const ours = [...new Set(carried.filter((c) => c !== null && c !== 0).map(countText))];
  return (
    `pet ${petId} showed quantity ${countText(observed)} in the list, which is neither its original ${countText(original)} ` +
    `nor a count this test sent${ours.length ? ` (${ours.join(', ')})` : ''}: another client wrote it meanwhile, ` +
    "so what the server did with this test's request cannot be told from the list"
  );
}

/**
 * The rule for a write-back the list does not show, sent once more and still not shown: the same
 * count both times (or the pet gone: no client removes a pet through the API) is the server's
 * doing; another count the second time is another client's.
 */
export function anotherClientBetweenWriteBacks(first: unknown, second: unknown): boolean {
  return second !== undefined && second !== null && !sameCount(first, second);
}
