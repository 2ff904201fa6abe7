/**
 * Who left a count (suites/lib/count-origin.ts): the original, a count this test carried, or
 * another client's. Only the last is never the server's doing.
 */
import { expect, test } from '../test.ts';
import { anotherClientBetweenWriteBacks, anotherWriterReason, countOrigin, countsCarried } from '../../suites/lib/count-origin.ts';

const CASES: { observed: unknown; original: unknown; carried: unknown[]; origin: string }[] = [
  { observed: 5, original: 5, carried: [7], origin: 'original' },
  { observed: '5', original: 5, carried: [7], origin: 'original' },
  { observed: 7, original: 5, carried: [7], origin: 'ours' },
  { observed: 7.0, original: 5, carried: ['7'], origin: 'ours' },
  { observed: 4242, original: 5, carried: [7], origin: 'foreign' },
  { observed: null, original: 5, carried: [7], origin: 'foreign' },
  { observed: null, original: 5, carried: [7, null], origin: 'ours' },
  { observed: undefined, original: 5, carried: [7], origin: 'missing' },
];

for (const c of CASES) {
  test(`count ${JSON.stringify(c.observed) ?? 'absent'} with original ${c.original} after sending ${JSON.stringify(c.carried)} is ${c.origin}`, () => {
    expect(countOrigin(c.observed, c.original, c.carried)).toBe(c.origin);
  });
}

const BODIES: { body: string; includes: unknown[]; excludes: unknown[] }[] = [
  { body: '{"quantity": 3', includes: [3, 0, null], excludes: [4, 42] },
  { body: '{"quantity": "5"}', includes: [5], excludes: [6] },
  { body: '{"quantity": 2.5}', includes: [2.5, 2, 3], excludes: [4] },
  { body: '{"quantity": -1.5}', includes: [-1.5, -1, -2], excludes: [1] },
  { body: '{}', includes: [0, null], excludes: [1] },
  { body: '[{"quantity": 1}]', includes: [1], excludes: [2] },
  { body: '7', includes: [7], excludes: [8] },
];

for (const b of BODIES) {
  test(`the counts body ${b.body} could leave include ${JSON.stringify(b.includes)} and not ${JSON.stringify(b.excludes)}`, () => {
    const carried = countsCarried(b.body);
    for (const n of b.includes) expect(countOrigin(n, 100, carried)).toBe('ours');
    for (const n of b.excludes) expect(countOrigin(n, 100, carried)).toBe('foreign');
  });
}

test("another client's count: the reason names the pet, both counts and what this test sent", () => {
  expect(anotherWriterReason('3', 5, 4242, [0, null, 7])).toBe(
    "pet 3 showed quantity 4242 in the list, which is neither its original 5 nor a count this test sent (7): another client wrote it meanwhile, so what the server did with this test's request cannot be told from the list",
  );
});

const TWICE: { first: unknown; second: unknown; another: boolean }[] = [
  { first: 0, second: 0, another: false },
  { first: 13, second: '13', another: false },
  { first: 4242, second: 4243, another: true },
  { first: 4242, second: null, another: false },
  { first: 4242, second: undefined, another: false },
];

for (const t of TWICE) {
  test(`a write-back not shown twice, ${JSON.stringify(t.first)} then ${JSON.stringify(t.second) ?? 'absent'}: ${t.another ? "another client's" : "the server's"}`, () => {
    expect(anotherClientBetweenWriteBacks(t.first, t.second)).toBe(t.another);
  });
}
