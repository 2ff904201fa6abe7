/** The register linearizability check: linearizable and non-linearizable histories. */
import { test, expect } from '../test.ts';
import { checkRegister, type RegisterOp } from '../../suites/generated/linearizability.ts';

const w = (value: string, start: number, end: number, label = 'PATCH'): RegisterOp => ({ kind: 'write', value, start, end, label });
const r = (value: string, start: number, end: number, label = 'GET'): RegisterOp => ({ kind: 'read', value, start, end, label });

test('sequential writes and reads in order are linearizable', () => {
  expect(checkRegister('5', [w('6', 0, 1), r('6', 2, 3), w('7', 4, 5), r('7', 6, 7)]).linearizable).toBe(true);
});

test('concurrent writes may take effect in either order', () => {
  expect(checkRegister('5', [w('6', 0, 10), w('7', 1, 9), r('6', 11, 12)]).linearizable).toBe(true);
  expect(checkRegister('5', [w('6', 0, 10), w('7', 1, 9), r('7', 11, 12)]).linearizable).toBe(true);
});

test('a read overlapping a write may see the old or the new value', () => {
  expect(checkRegister('5', [w('6', 0, 10), r('5', 2, 3)]).linearizable).toBe(true);
  expect(checkRegister('5', [w('6', 0, 10), r('6', 2, 3)]).linearizable).toBe(true);
});

test('a stale read after an acknowledged write is not linearizable (a cached list)', () => {
  const result = checkRegister('5', [w('6', 0, 1), r('5', 2, 3, 'GET on a new connection')]);
  expect(result.linearizable).toBe(false);
  expect(result.reason).toContain('GET on a new connection read 5');
});

test('a read of a value nobody wrote is not linearizable', () => {
  expect(checkRegister('5', [w('6', 0, 10), w('7', 0, 10), r('8', 11, 12)]).linearizable).toBe(false);
});

test('reads that see the writes in two different orders are not linearizable (lost update)', () => {
  // Both writes end before the reads start; the reads disagree on which came last.
  expect(checkRegister('5', [w('6', 0, 10), w('7', 0, 10), r('6', 11, 12), r('7', 13, 14), r('6', 15, 16)]).linearizable).toBe(false);
});

test('a value flipping back to the initial one after a write is not linearizable', () => {
  expect(checkRegister('5', [w('6', 0, 1), r('6', 2, 3), r('5', 4, 5)]).linearizable).toBe(false);
});
