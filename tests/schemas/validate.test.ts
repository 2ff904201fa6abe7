import { test, expect } from '../test.ts';
import { isInt64, isUtcTimestamp, schemaNames, validate, type SchemaName } from '../../schemas/index.ts';
import { parseJson } from '../../suites/lib/json.ts';

/** A case is JSON text (parsed with `parseJson`, as the server and suites do) or a JS value. */
type Case = { name: string; json?: string; value?: unknown };
type Invalid = Case & { error: string };
const valueOf = (c: Case) => (c.json !== undefined ? parseJson(c.json) : c.value);

const item = (fields: string) => `{"quantity": 3, "status": "available", ${fields}}`;
const msg = (createdAt: string, extra = '') => `{"id": "m-1", "message": "hi", "status": "queued", "createdAt": "${createdAt}"${extra}}`;

const valid: Record<SchemaName, Case[]> = {
  InventoryItem: [
    { name: 'small petId', json: item('"petId": 1') },
    { name: 'petId 2^53+1 (bigint)', json: item('"petId": 9007199254740993') },
    { name: 'petId 2^63-1 (bigint)', json: item('"petId": 9223372036854775807') },
    { name: 'petId -2^63 (bigint)', json: item('"petId": -9223372036854775808') },
    { name: 'petId 2^63-1 as a bigint value', value: { petId: 2n ** 63n - 1n, quantity: 0, status: 'sold' } },
    { name: 'negative quantity (no minimum in the spec)', json: '{"petId": 1, "quantity": -5, "status": "pending"}' },
    { name: 'extra fields', json: item('"petId": 1, "name": "Rex", "tags": []') },
  ],
  Inventory: [
    { name: 'empty list', json: '[]' },
    { name: 'two items, one above 2^53', json: `[${item('"petId": 1')}, ${item('"petId": 9007199254740993')}]` },
  ],
  PetStatus: ['available', 'pending', 'sold'].map((s) => ({ name: s, value: s })),
  InventoryUpdate: [
    { name: 'quantity', json: '{"quantity": 5}' },
    { name: 'zero', json: '{"quantity": 0}' },
    { name: 'negative (no minimum in the spec)', json: '{"quantity": -1}' },
    { name: 'above 2^53 (no maximum in the spec)', json: '{"quantity": 100000000000000000000}' },
    { name: 'integral float', json: '{"quantity": 2.0}' },
    { name: 'extra fields', json: '{"quantity": 5, "note": "restock"}' },
  ],
  Error: [
    { name: 'all fields', json: '{"code": "not_found", "message": "no such pet", "status": 404}' },
    { name: 'extra fields', json: '{"code": "c", "message": "m", "status": 400, "details": []}' },
  ],
  MessageRequest: [
    { name: 'message', json: '{"message": "hello"}' },
    { name: 'empty message', json: '{"message": ""}' },
    { name: 'extra fields', json: '{"message": "hello", "to": "x"}' },
  ],
  MessageResponse: [
    { name: 'createdAt with Z', json: msg('2026-11-22T07:30:00Z') },
    { name: 'createdAt with z and lowercase t', json: msg('2026-11-22t07:30:00z') },
    { name: 'createdAt with +00:00', json: msg('2026-11-22T07:30:00+00:00') },
    { name: 'createdAt with fractional seconds', json: msg('2026-11-22T07:30:00.123456Z') },
    { name: 'createdAt on a leap second', json: msg('2016-12-31T23:59:60Z') },
    { name: 'status other than queued (values not shown)', json: msg('2026-11-22T07:30:00Z').replace('queued', 'sent') },
    { name: 'extra fields', json: msg('2026-11-22T07:30:00Z', ', "to": "x"') },
  ],
};

const INT64_ERROR = 'must be an int64 (between -2^63 and 2^63-1)';
const UTC_ERROR = 'must be an RFC 3339 date-time in UTC (offset Z or +00:00)';

const invalid: Record<SchemaName, Invalid[]> = {
  InventoryItem: [
    { name: 'petId 2^63 (bigint)', json: item('"petId": 9223372036854775808'), error: `/petId: ${INT64_ERROR}` },
    { name: 'petId -2^63-1 (bigint)', json: item('"petId": -9223372036854775809'), error: `/petId: ${INT64_ERROR}` },
    { name: 'petId 2^63 as a number', value: { petId: 2 ** 63, quantity: 1, status: 'sold' }, error: `/petId: ${INT64_ERROR}` },
    { name: 'petId 1e30 as a float', json: item('"petId": 1e30'), error: `/petId: ${INT64_ERROR}` },
    { name: 'petId a string', json: item('"petId": "1"'), error: '/petId: must be integer' },
    { name: 'petId a fraction', json: item('"petId": 1.5'), error: '/petId: must be integer' },
    { name: 'quantity a fraction', json: '{"petId": 1, "quantity": 0.5, "status": "sold"}', error: '/quantity: must be integer' },
    {
      name: 'status lost',
      json: '{"petId": 1, "quantity": 1, "status": "lost"}',
      error: '/status: must be equal to one of the allowed values: available, pending, sold',
    },
    { name: 'quantity missing', json: '{"petId": 1, "status": "sold"}', error: "/: must have required property 'quantity'" },
    { name: 'petId missing', json: '{"quantity": 1, "status": "sold"}', error: "/: must have required property 'petId'" },
    { name: 'status missing', json: '{"petId": 1, "quantity": 1}', error: "/: must have required property 'status'" },
    { name: 'not an object', json: '[]', error: '/: must be object' },
  ],
  Inventory: [
    { name: 'an object', json: '{}', error: '/: must be array' },
    { name: 'item with a string petId', json: `[${item('"petId": "7"')}]`, error: '/0/petId: must be integer' },
    {
      name: 'second item above int64',
      json: `[${item('"petId": 1')}, ${item('"petId": 9223372036854775808')}]`,
      error: `/1/petId: ${INT64_ERROR}`,
    },
    {
      name: 'item with status lost',
      json: '[{"petId": 1, "quantity": 1, "status": "lost"}]',
      error: '/0/status: must be equal to one of the allowed values: available, pending, sold',
    },
  ],
  PetStatus: [
    { name: 'lost', value: 'lost', error: '/: must be equal to one of the allowed values: available, pending, sold' },
    { name: 'wrong case', value: 'Available', error: '/: must be equal to one of the allowed values: available, pending, sold' },
    { name: 'a number', value: 1, error: '/: must be string' },
  ],
  InventoryUpdate: [
    { name: 'empty object', json: '{}', error: "/: must have required property 'quantity'" },
    { name: 'quantity a string', json: '{"quantity": "5"}', error: '/quantity: must be integer' },
    { name: 'quantity a fraction', json: '{"quantity": 1.5}', error: '/quantity: must be integer' },
    { name: 'quantity null', json: '{"quantity": null}', error: '/quantity: must be integer' },
    { name: 'a bare number', json: '5', error: '/: must be object' },
  ],
  Error: [
    { name: 'status missing', json: '{"code": "c", "message": "m"}', error: "/: must have required property 'status'" },
    { name: 'status a string', json: '{"code": "c", "message": "m", "status": "404"}', error: '/status: must be integer' },
    { name: 'code a number', json: '{"code": 404, "message": "m", "status": 404}', error: '/code: must be string' },
    { name: 'message missing', json: '{"code": "c", "status": 404}', error: "/: must have required property 'message'" },
  ],
  MessageRequest: [
    { name: 'message missing', json: '{}', error: "/: must have required property 'message'" },
    { name: 'message a number', json: '{"message": 1}', error: '/message: must be string' },
    { name: 'message null', json: '{"message": null}', error: '/message: must be string' },
  ],
  MessageResponse: [
    { name: 'createdAt with +02:00', json: msg('2026-11-22T09:30:00+02:00'), error: `/createdAt: ${UTC_ERROR}` },
    { name: 'createdAt with -00:00 (offset unknown)', json: msg('2026-11-22T07:30:00-00:00'), error: `/createdAt: ${UTC_ERROR}` },
    { name: 'createdAt with -05:00', json: msg('2026-11-22T02:30:00-05:00'), error: `/createdAt: ${UTC_ERROR}` },
    { name: 'createdAt with +0000', json: msg('2026-11-22T07:30:00+0000'), error: `/createdAt: ${UTC_ERROR}` },
    { name: 'createdAt without offset', json: msg('2026-11-22T07:30:00'), error: `/createdAt: ${UTC_ERROR}` },
    { name: 'createdAt a date only', json: msg('2026-11-22'), error: `/createdAt: ${UTC_ERROR}` },
    { name: 'createdAt with a space separator', json: msg('2026-11-22 07:30:00Z'), error: `/createdAt: ${UTC_ERROR}` },
    { name: 'createdAt on February 30', json: msg('2026-02-30T07:30:00Z'), error: `/createdAt: ${UTC_ERROR}` },
    { name: 'createdAt at hour 24', json: msg('2026-11-22T24:00:00Z'), error: `/createdAt: ${UTC_ERROR}` },
    { name: 'createdAt epoch milliseconds', json: msg('x').replace('"x"', '1763796600000'), error: '/createdAt: must be string' },
    { name: 'id a number', json: msg('2026-11-22T07:30:00Z').replace('"m-1"', '1'), error: '/id: must be string' },
    {
      name: 'createdAt missing',
      json: '{"id": "m-1", "message": "hi", "status": "queued"}',
      error: "/: must have required property 'createdAt'",
    },
    {
      name: 'status missing',
      json: '{"id": "m-1", "message": "hi", "createdAt": "2026-11-22T07:30:00Z"}',
      error: "/: must have required property 'status'",
    },
  ],
};

for (const name of schemaNames) {
  test.describe(`${name} schema`, () => {
    for (const c of valid[name]) {
      test(`accepts ${c.name}`, () => {
        expect(validate(name, valueOf(c))).toEqual({ valid: true, errors: [] });
      });
    }
    for (const c of invalid[name]) {
      test(`rejects ${c.name}`, () => {
        const result = validate(name, valueOf(c));
        expect(result.valid, `${name} must reject ${c.name}`).toBe(false);
        expect(result.errors).toContain(c.error);
      });
    }
  });
}

test('every schema has valid and invalid cases', () => {
  for (const name of schemaNames) {
    expect(valid[name].length, name).toBeGreaterThan(0);
    expect(invalid[name].length, name).toBeGreaterThan(0);
  }
});

test('a UTC check failure is reported once, as a readable line', () => {
  expect(validate('MessageResponse', parseJson(msg('2026-11-22T09:30:00+02:00'))).errors).toEqual([`/createdAt: ${UTC_ERROR}`]);
});

test('all errors are reported, each on its own line', () => {
  const result = validate('Inventory', parseJson('[{"petId": "1", "quantity": 1.5}]'));
  expect([...result.errors].sort()).toEqual(
    ['/0/petId: must be integer', '/0/quantity: must be integer', "/0: must have required property 'status'"].sort(),
  );
});

test('an unknown schema name throws', () => {
  expect(() => validate('Pet' as SchemaName, {})).toThrow(/unknown schema Pet/);
  expect(() => validate('toString' as SchemaName, {})).toThrow(/unknown schema toString/);
});

test('isInt64 bounds', () => {
  for (const v of [0, -1, 2 ** 53, 2n ** 63n - 1n, -(2n ** 63n), -(2 ** 63)]) expect(isInt64(v), String(v)).toBe(true);
  for (const v of [2n ** 63n, -(2n ** 63n) - 1n, 2 ** 63, 1.5, '1', NaN, Infinity, null]) expect(isInt64(v), String(v)).toBe(false);
});

test('isUtcTimestamp', () => {
  for (const s of [
    '2024-02-29T00:00:00Z',
    '2000-02-29T00:00:00Z',
    '0000-02-29T00:00:00Z',
    '2026-12-31T23:59:59.999Z',
    '2026-01-01T00:00:00.5+00:00',
    '2016-12-31T23:59:60Z',
  ])
    expect(isUtcTimestamp(s), s).toBe(true);
  for (const s of [
    '2023-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2026-04-31T00:00:00Z',
    '2026-00-10T00:00:00Z',
    '2026-01-00T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-01-01T12:00:60Z',
    '2026-01-01T00:60:00Z',
    '2026-01-01T00:00:00-00:00',
    '2026-01-01T00:00:00+01:00',
    'yesterday',
    5,
  ]) {
    expect(isUtcTimestamp(s), String(s)).toBe(false);
  }
});
