/**
 * The ids the generated checks hold while they run (`suites/generated/pets-held.ts`): every
 * integer `petId` of a list body, exact (int64 beyond 2^53 included), nothing from a body that is
 * not a list; which operations touch pets, and run holding them.
 */
import { test, expect } from '../test.ts';
import { petFreeFirst, petIdsOf, touchesPets } from '../../suites/generated/pets-held.ts';
import { operationsOf } from '../../suites/generated/document.ts';
import { openapiDocument } from '../../schemas/index.ts';

for (const [body, ids] of [
  [
    [{ petId: 1 }, { petId: 2 }],
    ['1', '2'],
  ],
  [[{ petId: 9007199254740993n }], ['9007199254740993']],
  [[{ petId: 1.5 }, { petId: '3' }, null, 7, { quantity: 1 }], []],
  [{ petId: 1 }, []],
  [undefined, []],
] as const) {
  test(`petIdsOf(${JSON.stringify(body, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))}) is [${ids.join(', ')}]`, () => {
    expect(petIdsOf(body)).toEqual(ids);
  });
}

// The document's operations: those that list the pets or name one are held; the others go first, unheld.
const OPERATIONS = operationsOf(openapiDocument());
for (const [id, touches] of [
  ['listInventory', true],
  ['updateInventory', true],
  ['GET /pets/{petId}', true],
  ['POST /messages', false],
  ['GET /store/orders', false],
] as const) {
  test(`${id} ${touches ? 'touches pets: it runs holding them' : 'touches no pet: it runs first, without the hold'}`, () => {
    const op = OPERATIONS.find((o) => o.id === id);
    expect(op, `${id} is an operation of the document`).toBeDefined();
    expect(touchesPets(op!, OPERATIONS)).toBe(touches);
    const order = petFreeFirst(OPERATIONS).map((o) => o.id);
    const firstHeld = order.findIndex((o) => touchesPets(OPERATIONS.find((x) => x.id === o)!, OPERATIONS));
    expect(order.indexOf(id) < firstHeld).toBe(!touches);
  });
}
