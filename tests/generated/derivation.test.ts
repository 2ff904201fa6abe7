/**
 * The generator reads everything from the document: operations, classes, keyword violations and
 * valid values. A field added to a copy of schemas/openapi.yaml adds its cases without new code;
 * every class yields requests of the declared expectation; generation is deterministic per seed.
 */
import { test, expect } from '../test.ts';
import fc from 'fast-check';
import { openapiDocument } from '../../schemas/index.ts';
import { operationsOf, type Operation } from '../../suites/generated/document.ts';
import { classesOf, encodeSegment, fillPath, SEGMENT_FORMS } from '../../suites/generated/classes.ts';
import { violations, validValue } from '../../suites/generated/keywords.ts';
import { INTEGER_FORMS, writeInteger, writeJson } from '../../suites/generated/json-text.ts';
import { parseJson } from '../../suites/lib/json.ts';
import { allocate, runsPerClass } from '../../suites/generated/budget.ts';

const ops = operationsOf(openapiDocument());
const byId = (list: Operation[], id: string) => list.find((o) => o.id === id)!;

test('every operation of the document is found, with its base, parameters, body and statuses', () => {
  expect(ops.map((o) => `${o.method} ${o.path} ${o.base}`)).toEqual([
    'GET /inventory inventory',
    'PATCH /inventory/{petId} inventory',
    'POST /messages messages',
    'GET /pets/{petId} inventory',
    'GET /store/orders inventory',
  ]);
  const update = byId(ops, 'updateInventory');
  expect(update.pathParameters).toEqual([{ name: 'petId', schema: expect.objectContaining({ type: 'integer', format: 'int64' }) }]);
  expect(update.statuses).toEqual(['200', '400', '401', '404', '429']);
  expect(update.successSchemaNames).toEqual({ '200': 'InventoryItem' });
  expect(byId(ops, 'GET /pets/{petId}').described).toBe(false);
});

test('each keyword of a schema is violated in turn, and the violating values really break it', () => {
  const schema = byId(ops, 'updateInventory').requestBody!.schema;
  const list = violations(schema);
  expect(list.map((v) => v.keyword)).toEqual(['(root): type', '(root): required quantity', '/quantity: type']);
  for (const v of list) {
    for (const value of fc.sample(v.arbitrary, { seed: 7, numRuns: 20 })) {
      const q = (value as { quantity?: unknown } | null)?.quantity;
      const valid = value !== null && typeof value === 'object' && !Array.isArray(value) && typeof q === 'number' && Number.isInteger(q);
      expect(valid, `${v.keyword}: ${JSON.stringify(value)}`).toBe(false);
    }
  }
  expect(violations({ type: 'integer', format: 'int64' }).map((v) => v.keyword)).toEqual([
    '(root): type',
    '(root): format int64 (below)',
    '(root): format int64 (above)',
  ]);
});

test('a field added to the document adds its cases without new code', () => {
  const doc = structuredClone(openapiDocument()) as any;
  doc.components.schemas.InventoryUpdate.properties.reason = { type: 'string', maxLength: 20, pattern: '^[a-z ]*$' };
  doc.components.schemas.InventoryUpdate.properties.warehouse = { type: 'integer', minimum: 1, maximum: 9 };
  doc.components.schemas.InventoryUpdate.required = ['quantity', 'warehouse'];
  const modified = operationsOf(doc);
  const before = classesOf(byId(ops, 'updateInventory'), ops).map((c) => c.name);
  const after = classesOf(byId(modified, 'updateInventory'), modified).map((c) => c.name);
  const added = after.filter((n) => !before.includes(n));
  expect(added).toEqual(
    expect.arrayContaining([
      'updateInventory body-keyword (root): required warehouse',
      'updateInventory body-keyword /warehouse: type',
      'updateInventory body-keyword /warehouse: minimum',
      'updateInventory body-keyword /warehouse: maximum',
      'updateInventory body-keyword /reason: type',
      'updateInventory body-keyword /reason: maxLength',
      'updateInventory body-keyword /reason: pattern',
    ]),
  );
  // Valid bodies now carry the required new member within its bounds.
  for (const v of fc.sample(validValue(byId(modified, 'updateInventory').requestBody!.schema), { seed: 3, numRuns: 30 }) as Array<
    Record<string, any>
  >) {
    expect(v.warehouse >= 1 && v.warehouse <= 9, writeJson(v)).toBe(true);
  }
});

test('every class yields requests with an expectation, deterministic for a seed', () => {
  for (const op of ops) {
    for (const cls of classesOf(op, ops)) {
      const a = fc.sample(cls.arbitrary, { seed: 42, numRuns: 5 });
      const b = fc.sample(cls.arbitrary, { seed: 42, numRuns: 5 });
      expect(a, cls.name).toEqual(b);
      for (const r of a) expect(['negative', 'positive', 'odd']).toContain(r.expect);
      // Operations whose payload the spec does not show are never judged beyond "no 5xx".
      if (!op.described) for (const r of a) expect(r.expect, cls.name).toBe('odd');
    }
  }
  // readonly: no unsafe method probes on the list path.
  const list = classesOf(byId(ops, 'listInventory'), ops, { safeMethodsOnly: true }).find((c) => c.kind === 'http-method')!;
  expect(fc.sample(list.arbitrary, { seed: 1, numRuns: 40 }).map((r) => r.method)).not.toContain('PATCH');
});

test('every integer representation denotes the same value and is valid JSON', () => {
  for (const v of [0, 5, 100, -7, 1234, 9007199254740993n, 9223372036854775807n]) {
    for (const form of INTEGER_FORMS) {
      const text = writeInteger(v, form);
      expect(() => JSON.parse(text), `${form} ${text}`).not.toThrow();
      const [mantissa, exp = '0'] = text.toLowerCase().split('e');
      const [int, frac = ''] = mantissa!.split('.');
      const scaled = BigInt(int! + frac) * 10n ** BigInt(Math.max(0, Number(exp) - frac.length));
      const divisor = 10n ** BigInt(Math.max(0, frac.length - Number(exp)));
      expect(scaled / divisor, `${form} ${text}`).toBe(BigInt(v));
    }
  }
  expect(writeInteger(5, 'fraction')).toBe('5.0');
  expect(writeInteger(100, 'scientific')).toBe('1e2');
  expect(parseJson(writeJson({ petId: 9007199254740993n, s: 'é' }, { integers: 'plain', strings: 'escaped', space: ' ' }))).toEqual({
    petId: 9007199254740993n,
    s: 'é',
  });
});

test('listed path values are filled exactly, in every segment form', () => {
  expect(fillPath('/inventory/{petId}', { petId: '9007199254740993' })).toBe('/inventory/9007199254740993');
  expect(fillPath('/inventory/{petId:percent-encoded}', { petId: '12' })).toBe('/inventory/%31%32');
  for (const form of Object.keys(SEGMENT_FORMS)) expect(encodeSegment('42', form), form).not.toBe('42');
});

test('the budget is shared exactly, each class gets a case, the rest is kept for shrinking', () => {
  const a = allocate(
    60,
    [
      { id: 'a', classes: 10, overhead: 3 },
      { id: 'b', classes: 4, overhead: 0 },
    ],
    3,
  );
  expect(a.stateful + a.concurrency + a.operations.a! + a.operations.b!).toBe(60);
  expect(a.concurrency).toBeGreaterThanOrEqual(8);
  expect(runsPerClass(13, 3, 10)).toBe(1);
  expect(runsPerClass(43, 3, 10)).toBe(3);
  expect(runsPerClass(3, 3, 10)).toBe(0);
});
