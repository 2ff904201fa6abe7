/**
 * The memos of the PATCH path give what the computations they save give: a `{petId}` segment
 * parsed again is the same exact int64 (also past the memo's size, when it starts afresh), an
 * invalid one is a 400 every time (errors are never remembered), and an item of the in-process
 * store serializes to the same JSON as a plain item with the same fields, after updates too.
 */
import assert from 'node:assert/strict';
import { expect, test } from '../test.ts';
import { ApiError } from '../../reference-server/errors/api-error.ts';
import { INT64_MAX, INT64_MIN, parsePetId } from '../../reference-server/inventory/pet-id.ts';
import { Inventory, serializeItem, type InventoryItem } from '../../reference-server/inventory/store.ts';

const status = (segment: string): number | bigint => {
  try {
    return parsePetId(segment);
  } catch (error) {
    return error instanceof ApiError ? error.status : -1;
  }
};

test.describe('reference server: memos of the PATCH path', () => {
  test('PETID a segment parsed again gives the same exact id; an invalid one is 400 each time', () => {
    const table: [string, bigint | number][] = [
      ['1', 1n],
      ['0001', 1n],
      ['-5', -5n],
      [INT64_MAX.toString(), INT64_MAX],
      [INT64_MIN.toString(), INT64_MIN],
      [(INT64_MAX + 1n).toString(), 400],
      ['1.5', 400],
      ['', 400],
      ['abc', 400],
    ];
    for (let round = 0; round < 3; round++) {
      for (const [segment, expected] of table) expect(status(segment), `round ${round}: ${JSON.stringify(segment)}`).toBe(expected);
    }
    // node:assert, not expect: in 3,000 calls expect's bookkeeping (about 1 ms a call) was most of this test's time.
    for (let i = 0; i < 3_000; i++)
      assert.strictEqual(parsePetId(String(9_007_199_254_740_993n + BigInt(i))), 9_007_199_254_740_993n + BigInt(i));
    for (const [segment, expected] of table) expect(status(segment), `after 3,000 others: ${JSON.stringify(segment)}`).toBe(expected);
  });

  test('PETID an item of the in-process store serializes like a plain item with the same fields, before and after an update', () => {
    const seed: InventoryItem[] = [
      { petId: 1n, quantity: 5, status: 'available' },
      { petId: 9_223_372_036_854_775_807n, quantity: 0, status: 'sold' },
      { petId: -3n, quantity: 12, status: 'pending' },
    ];
    const inventory = new Inventory(seed);
    for (const plain of seed) {
      const stored = inventory.get(plain.petId)!;
      expect(serializeItem(stored)).toBe(serializeItem({ ...plain }));
      expect(JSON.parse(serializeItem(stored).replace(/"petId":(-?\d+)/, '"petId":"$1"'))).toEqual({
        petId: plain.petId.toString(),
        quantity: plain.quantity,
        status: plain.status,
      });
      const updated = inventory.setQuantity(plain.petId, 77)!;
      expect(serializeItem(updated)).toBe(`{"petId":${plain.petId},"quantity":77,"status":"${plain.status}"}`);
    }
    expect(inventory.listJson().toString()).toBe(
      `[${seed.map((p) => `{"petId":${p.petId},"quantity":77,"status":"${p.status}"}`).join(',')}]`,
    );
  });
});
