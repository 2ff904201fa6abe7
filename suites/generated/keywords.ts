/**
 * Values from JSON Schema keywords, for the generator: valid values (boundary values first),
 * and, for every keyword of a schema (nested properties included), values that violate exactly
 * that keyword while the rest stays valid. Pure; fast-check arbitraries.
 *
 * JSON Schema judges numbers by value: `5.0` is an integer (2020-12 §6.1.1, "integer" matches
 * any number with a zero fractional part), so a fraction of zero never counts as a violation.
 */
import fc from 'fast-check';
import type { Schema } from './document.ts';

/** One keyword violated at one place: `/quantity: type`, `(root): required quantity`. */
export interface Violation {
  keyword: string;
  arbitrary: fc.Arbitrary<unknown>;
}

const INT64 = { min: -(2n ** 63n), max: 2n ** 63n - 1n };
const INT32 = { min: -(2n ** 31n), max: 2n ** 31n - 1n };

/** Integer bounds a schema allows (inclusive), from minimum, maximum, the exclusive bounds and format. */
export function integerBounds(schema: Schema): { min?: bigint; max?: bigint } {
  let min: bigint | undefined;
  let max: bigint | undefined;
  const up = (v: bigint) => (min = min === undefined || v > min ? v : min);
  const down = (v: bigint) => (max = max === undefined || v < max ? v : max);
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  if (num(schema.minimum) !== undefined) up(BigInt(Math.ceil(num(schema.minimum)!)));
  if (num(schema.exclusiveMinimum) !== undefined) up(BigInt(Math.floor(num(schema.exclusiveMinimum)!)) + 1n);
  if (num(schema.maximum) !== undefined) down(BigInt(Math.floor(num(schema.maximum)!)));
  if (num(schema.exclusiveMaximum) !== undefined) down(BigInt(Math.ceil(num(schema.exclusiveMaximum)!)) - 1n);
  const format = schema.format === 'int64' ? INT64 : schema.format === 'int32' ? INT32 : undefined;
  if (format) {
    up(format.min);
    down(format.max);
  }
  return { min, max };
}

/** A bigint as a `number` when it is exactly representable, else kept as `bigint` (written exactly). */
export function exactInteger(v: bigint): number | bigint {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}

/** Boundary integers a schema allows: its own bounds and the usual machine limits (2^31, 2^53, 2^63). */
export function integerBoundaries(schema: Schema): Array<number | bigint> {
  const { min, max } = integerBounds(schema);
  const candidates = [0n, 1n, -1n, 2n ** 31n - 1n, 2n ** 31n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, 2n ** 63n - 1n, -(2n ** 63n)];
  if (min !== undefined) candidates.push(min, min + 1n);
  if (max !== undefined) candidates.push(max, max - 1n);
  const ok = [...new Set(candidates)].filter((v) => (min === undefined || v >= min) && (max === undefined || v <= max));
  if (typeof schema.multipleOf === 'number') return ok.filter((v) => Number(v) % (schema.multipleOf as number) === 0).map(exactInteger);
  return ok.map(exactInteger);
}

function typesOf(schema: Schema): string[] {
  if (Array.isArray(schema.type)) return schema.type as string[];
  if (typeof schema.type === 'string') return [schema.type];
  if (Array.isArray(schema.enum)) return [...new Set((schema.enum as unknown[]).map(jsonType))];
  if (schema.properties || schema.required) return ['object'];
  return [];
}

/** The JSON Schema type of a value (`integer` for integral numbers and bigints). */
export function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'bigint') return 'integer';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** Values of each JSON type, for type violations. */
const BY_TYPE: Record<string, fc.Arbitrary<unknown>> = {
  null: fc.constant(null),
  boolean: fc.boolean(),
  integer: fc.constantFrom(0, 1, 7, -3),
  number: fc.constantFrom(2.5, 0.1, -1.5, 1e-7),
  string: fc.constantFrom('5', '', 'abc', '1e2', 'null'),
  array: fc.constantFrom([], [1], [{}]),
  object: fc.constantFrom({}, { value: 1 }),
};

/** Values of every JSON type the schema does not allow (`number` allows integers; `integer` does not allow fractions). */
function otherTypes(schema: Schema): fc.Arbitrary<unknown> | undefined {
  const allowed = typesOf(schema);
  if (!allowed.length) return undefined;
  const others = Object.keys(BY_TYPE).filter((t) => !allowed.includes(t) && !(t === 'integer' && allowed.includes('number')));
  return others.length ? fc.oneof(...others.map((t) => BY_TYPE[t]!)) : undefined;
}

/** Valid values of `schema`, boundary values weighted first. `{}` yields any JSON value. */
export function validValue(schema: Schema): fc.Arbitrary<unknown> {
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if ('const' in schema) return fc.constant(schema.const);
  const type = typesOf(schema)[0];
  switch (type) {
    case 'integer': {
      const { min, max } = integerBounds(schema);
      const lo = min ?? -(2n ** 40n);
      const hi = max ?? 2n ** 40n;
      return fc.oneof(
        { weight: 2, arbitrary: fc.constantFrom(...integerBoundaries(schema)) },
        { weight: 1, arbitrary: fc.bigInt({ min: lo, max: hi }).map(exactInteger) },
      );
    }
    case 'number':
      return fc.oneof(fc.constantFrom(0, 0.5, -0.5, 1e300), fc.double({ noNaN: true, noDefaultInfinity: true }));
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'string':
      return validString(schema);
    case 'array': {
      const items = (schema.items as Schema | undefined) ?? {};
      return fc.array(validValue(items), {
        minLength: (schema.minItems as number) ?? 0,
        maxLength: Math.max((schema.minItems as number) ?? 0, Math.min((schema.maxItems as number) ?? 3, 3)),
      });
    }
    case 'object':
      return validObject(schema);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Strings within minLength/maxLength and matching `pattern` (patterns: filtered, so keep them simple). */
function validString(schema: Schema): fc.Arbitrary<string> {
  const minLength = (schema.minLength as number | undefined) ?? 0;
  const maxLength = Math.min((schema.maxLength as number | undefined) ?? 64, Math.max(minLength, 64));
  let arb = fc.oneof(
    fc
      .constantFrom('', 'hello', 'é', '😀', 'a'.repeat(Math.max(minLength, 1)))
      .filter((s) => [...s].length >= minLength && [...s].length <= maxLength),
    fc.string({ unit: 'grapheme', minLength, maxLength }),
  );
  if (schema.format === 'date-time')
    arb = fc
      .date({ noInvalidDate: true, min: new Date('1970-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z') })
      .map((d) => d.toISOString());
  if (typeof schema.pattern === 'string') {
    const re = new RegExp(schema.pattern as string, 'u');
    return arb.filter((s) => re.test(s));
  }
  return arb;
}

/** Objects with every required property and a random subset of the optional ones. */
export function validObject(schema: Schema): fc.Arbitrary<Record<string, unknown>> {
  const props = (schema.properties as Record<string, Schema> | undefined) ?? {};
  const required = (schema.required as string[] | undefined) ?? [];
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, s] of Object.entries(props)) model[name] = validValue(s);
  for (const name of required) model[name] ??= fc.jsonValue({ maxDepth: 1 });
  return fc.record(model, { requiredKeys: required.filter((r) => r in model) });
}

const at = (where: string) => where || '(root)';

/**
 * Every keyword of `schema` violated in turn: each entry's values break that one keyword and keep
 * the rest valid (for nested properties, inside an otherwise valid object).
 */
export function violations(schema: Schema, where = ''): Violation[] {
  const out: Violation[] = [];
  const types = otherTypes(schema);
  if (types) out.push({ keyword: `${at(where)}: type`, arbitrary: types });
  if (Array.isArray(schema.enum)) {
    const allowed = schema.enum as unknown[];
    const candidates = ['unknown', '', 'AVAILABLE', 'other value', 0].filter(
      (c) => !allowed.includes(c) && typesOf(schema).includes(jsonType(c)),
    );
    if (candidates.length) out.push({ keyword: `${at(where)}: enum`, arbitrary: fc.constantFrom(...candidates) });
  }
  const type = typesOf(schema)[0];
  if (type === 'integer' || type === 'number') {
    const { min, max } = integerBounds(schema);
    const label = schema.format ? `format ${schema.format as string}` : undefined;
    if (min !== undefined)
      out.push({
        keyword: `${at(where)}: ${label && min <= -(2n ** 31n) ? `${label} (below)` : 'minimum'}`,
        arbitrary: fc.constantFrom(exactInteger(min - 1n), exactInteger(min - 1000n)),
      });
    if (max !== undefined)
      out.push({
        keyword: `${at(where)}: ${label && max >= 2n ** 31n - 1n ? `${label} (above)` : 'maximum'}`,
        arbitrary: fc.constantFrom(exactInteger(max + 1n), exactInteger(max * 10n)),
      });
    if (typeof schema.multipleOf === 'number') {
      const m = schema.multipleOf as number;
      out.push({ keyword: `${at(where)}: multipleOf`, arbitrary: fc.constant(m + (type === 'integer' ? 1 : m / 2)) });
    }
  }
  if (type === 'string') {
    if (typeof schema.minLength === 'number' && schema.minLength > 0)
      out.push({ keyword: `${at(where)}: minLength`, arbitrary: fc.constant('x'.repeat(schema.minLength - 1)) });
    if (typeof schema.maxLength === 'number')
      out.push({ keyword: `${at(where)}: maxLength`, arbitrary: fc.constant('x'.repeat(schema.maxLength + 1)) });
    if (typeof schema.pattern === 'string') {
      const re = new RegExp(schema.pattern as string, 'u');
      const bad = ['', ' ', 'x', '\u0000', '2026-01-01T00:00:00+02:00', 'not matching'].filter((s) => !re.test(s));
      if (bad.length) out.push({ keyword: `${at(where)}: pattern`, arbitrary: fc.constantFrom(...bad) });
    }
    if (schema.format === 'date-time')
      out.push({ keyword: `${at(where)}: format date-time`, arbitrary: fc.constantFrom('yesterday', '2026-13-01T00:00:00Z') });
  }
  if (type === 'array') {
    if (typeof schema.minItems === 'number' && schema.minItems > 0)
      out.push({ keyword: `${at(where)}: minItems`, arbitrary: fc.constant([]) });
    if (typeof schema.maxItems === 'number')
      out.push({
        keyword: `${at(where)}: maxItems`,
        arbitrary: fc.array(validValue((schema.items as Schema) ?? {}), { minLength: schema.maxItems + 1, maxLength: schema.maxItems + 1 }),
      });
    if (schema.items) {
      for (const v of violations(schema.items as Schema, `${where}/0`))
        out.push({ keyword: v.keyword, arbitrary: v.arbitrary.map((bad) => [bad]) });
    }
  }
  if (type === 'object') {
    const base = validObject(schema);
    const required = (schema.required as string[] | undefined) ?? [];
    for (const name of required) {
      out.push({ keyword: `${at(where)}: required ${name}`, arbitrary: base.map(({ [name]: _drop, ...rest }) => rest) });
    }
    if (schema.additionalProperties === false) {
      out.push({ keyword: `${at(where)}: additionalProperties`, arbitrary: base.map((o) => ({ ...o, unexpectedMember: 1 })) });
    }
    for (const [name, s] of Object.entries((schema.properties as Record<string, Schema> | undefined) ?? {})) {
      for (const v of violations(s, `${where}/${name}`)) {
        out.push({ keyword: v.keyword, arbitrary: fc.tuple(base, v.arbitrary).map(([o, bad]) => ({ ...o, [name]: bad })) });
      }
    }
  }
  return out;
}

/** Every string-typed location of a schema, as property paths (`['message']`). */
export function stringPaths(schema: Schema, path: string[] = []): string[][] {
  const types = typesOf(schema);
  if (types.includes('string') && !Array.isArray(schema.enum) && !schema.format && !schema.pattern) return [path];
  if (types[0] === 'object') {
    return Object.entries((schema.properties as Record<string, Schema> | undefined) ?? {}).flatMap(([k, s]) =>
      stringPaths(s, [...path, k]),
    );
  }
  return [];
}

/** Every integer-typed location of a schema, as property paths (`['quantity']`). */
export function integerPaths(schema: Schema, path: string[] = []): string[][] {
  const types = typesOf(schema);
  if (types.includes('integer') && !Array.isArray(schema.enum)) return [path];
  if (types[0] === 'object') {
    return Object.entries((schema.properties as Record<string, Schema> | undefined) ?? {}).flatMap(([k, s]) =>
      integerPaths(s, [...path, k]),
    );
  }
  return [];
}

/**
 * Whether a path segment's text can denote a valid value of a path parameter's schema: a path
 * carries text, so `5` is the integer 5 however the generator made it (a string "5" breaking
 * `type` is no violation once written in a path). Strings accept any text.
 */
export function segmentMayBeValid(schema: Schema, text: string): boolean {
  const types = typesOf(schema);
  if (!types.length || types.includes('string')) return true;
  if (Array.isArray(schema.enum)) return (schema.enum as unknown[]).some((e) => String(e) === text);
  if (types.includes('boolean') && (text === 'true' || text === 'false')) return true;
  if (types.includes('number') && text.trim() !== '' && Number.isFinite(Number(text))) return true;
  if (types.includes('integer') && /^[+-]?\d+$/.test(text)) {
    const { min, max } = integerBounds(schema);
    const v = BigInt(text);
    return (min === undefined || v >= min) && (max === undefined || v <= max);
  }
  return false;
}
