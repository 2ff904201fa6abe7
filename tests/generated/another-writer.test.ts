/**
 * GEN-07 reads on a shared deployment (suites/generated/consistency.ts): a list showing a count
 * that is neither the pet's original nor one of the round's writes is another client's, so the
 * round's reads are not judged (not certified); the original (a stale list) or a write is judged.
 */
import { expect, test } from '../test.ts';
import type { ApiResponse } from '../../suites/fixtures.ts';
import { anotherWriterIn } from '../../suites/generated/consistency.ts';

const list = (quantity: unknown) =>
  ({
    json: [
      { petId: 7, quantity },
      { petId: 8, quantity: 4242 },
    ],
  }) as unknown as ApiResponse;
const WRITES = ['111', '118', '125'];

const CASES: { name: string; during: unknown; after: unknown; foreign: boolean }[] = [
  { name: 'the original during, a write after', during: 10, after: 118, foreign: false },
  { name: 'a write during, the original after (a stale list: judged, and failed by the judge)', during: 111, after: 10, foreign: false },
  { name: 'a count nobody in the round wrote during', during: 4242, after: 125, foreign: true },
  { name: 'a count nobody in the round wrote after', during: 111, after: 9, foreign: true },
];

for (const c of CASES) {
  test(`GEN-07 reads: ${c.name} ${c.foreign ? 'is another client' : 'is judged'}`, () => {
    const reason = anotherWriterIn('7', 10, WRITES, { during: list(c.during), after: list(c.after) });
    expect(reason !== undefined).toBe(c.foreign);
    if (reason) expect(reason).toContain('pet 7 showed quantity');
  });
}
