/**
 * The ids the generated checks hold while they run (`suites/generated/pets-held.ts`): every
 * integer `petId` of a list body, exact (int64 beyond 2^53 included), nothing from a body that is
 * not a list.
 */
import { test, expect } from '../test.ts';
import { petIdsOf } from '../../suites/generated/pets-held.ts';

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
