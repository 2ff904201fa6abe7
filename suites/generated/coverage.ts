/**
 * The coverage cases: every input of every operation, derived from the document alone and listed
 * in a fixed order (the same cases, in the same order, every run). They go before the random
 * classes of `classes.ts`, within the budget, in the priority order of `planCoverage`.
 *
 * Locations where an input enters (each case names one):
 * - `body`: every JSON type in place of each field and of the body as a whole, each keyword
 *   violated, integer boundaries (int64 and beyond), every representation of an integer, empty,
 *   extra, duplicated, deeply nested and oversized bodies;
 * - `string`: each string field empty, very long, up to the size of a large body, non-ASCII,
 *   with control characters, invalid UTF-8 and lone surrogates;
 * - `path`: each path parameter in every representation of a listed value, broken
 *   percent-encoding (truncated, not hex, invalid UTF-8), encoded slash, empty, very long;
 * - `header`: Authorization (scheme case, spacing, long tokens, characters outside token68, two
 *   credentials), Accept and other headers, Content-Type (parameters, case, near misses);
 * - `method`: HEAD, OPTIONS, TRACE and extension methods on every path (RFC 9110 §9.1, §9.3.2);
 * - `query`: query strings on every operation.
 *
 * Expectations as in `classes.ts` (`negative`, `positive`, `odd`); judged by `judge.ts`. Pure.
 */
import fc from 'fast-check';
import { type Operation, type Schema, methodsByPath } from './document.ts';
import { integerBoundaries, integerBounds, integerPaths, segmentMayBeValid, stringPaths, violations } from './keywords.ts';
import { writeJson, writeInteger, INTEGER_FORMS } from './json-text.ts';
import {
  structuralMutations,
  HEADER_VARIATIONS,
  CONTENT_TYPES,
  AWKWARD_STRINGS,
  SEGMENT_FORMS,
  type Expectation,
  type GeneratedRequest,
  type ClassOptions,
} from './classes.ts';

export const LOCATIONS = ['body', 'string', 'path', 'header', 'method', 'query'] as const;
export type Location = (typeof LOCATIONS)[number];

/** One coverage case: where the input enters, what it is, and the request that carries it. */
export interface CoverageCase {
  op: string;
  location: Location;
  /** Unique within the operation: `body /quantity: type boolean true`. Replay tokens name it. */
  name: string;
  /** The input, as a short printable text. */
  value: string;
  request: GeneratedRequest;
}

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);
/**
 * A body of 64 KiB (a common server limit, the reference server's) and one of 100 KB, past it: the
 * spec shows no limit. Far larger bodies meet a refusal while they are still being sent, and an
 * intermediary may then drop the connection: that would judge the path, not the server.
 */
const LARGE_BODY = 64 * 1024;
const OVER_LARGE_BODY = 100_000;

const printable = (s: string, max = 60) => {
  const t = JSON.stringify(s).slice(1, -1);
  return t.length > max ? `${t.slice(0, max)}… (${s.length} characters)` : t;
};

const setAt = (obj: unknown, path: string[], value: unknown): unknown => {
  if (!path.length) return value;
  const o = (obj && typeof obj === 'object' && !Array.isArray(obj) ? obj : {}) as Record<string, unknown>;
  return { ...o, [path[0]!]: setAt(o[path[0]!], path.slice(1), value) };
};

function typesOf(schema: Schema): string[] {
  if (Array.isArray(schema.type)) return schema.type as string[];
  if (typeof schema.type === 'string') return [schema.type];
  if (schema.properties || schema.required) return ['object'];
  return [];
}

/** One fixed valid value of a schema (no randomness): enum's first, a bound, `hello`, every property. */
export function exampleValue(schema: Schema): unknown {
  if (Array.isArray(schema.enum)) return (schema.enum as unknown[])[0];
  if ('const' in schema) return schema.const;
  switch (typesOf(schema)[0]) {
    case 'integer':
    case 'number': {
      const min = typeof schema.minimum === 'number' ? schema.minimum : undefined;
      const max = typeof schema.maximum === 'number' ? schema.maximum : undefined;
      return Math.min(Math.max(5, min ?? 5), max ?? 5);
    }
    case 'boolean':
      return false;
    case 'string':
      return 'a'.repeat(Math.max(0, Number(schema.minLength ?? 0))) || 'hello';
    case 'array':
      return [];
    case 'object':
      return Object.fromEntries(
        Object.entries((schema.properties as Record<string, Schema> | undefined) ?? {}).map(([k, s]) => [k, exampleValue(s)]),
      );
    default:
      return 'x';
  }
}

/** A value of each JSON type, named, for substitutions (`integer` and `fraction` apart, as JSON Schema judges them). */
const SUBSTITUTES: Array<{ type: string; name: string; value: unknown }> = [
  { type: 'null', name: 'null', value: null },
  { type: 'boolean', name: 'boolean true', value: true },
  { type: 'boolean', name: 'boolean false', value: false },
  { type: 'integer', name: 'integer 7', value: 7 },
  { type: 'number', name: 'fraction 2.5', value: 2.5 },
  { type: 'string', name: 'string "5"', value: '5' },
  { type: 'array', name: 'array [1]', value: [1] },
  { type: 'object', name: 'object {"value":1}', value: { value: 1 } },
];

function substitutes(schema: Schema): typeof SUBSTITUTES {
  const allowed = typesOf(schema);
  if (!allowed.length || Array.isArray(schema.enum)) return [];
  return SUBSTITUTES.filter((s) => !allowed.includes(s.type) && !(s.type === 'integer' && allowed.includes('number')));
}

/** Deterministic values of a violation's arbitrary: a fixed seed, duplicates dropped, at most `n`. */
function fixedValues(arb: fc.Arbitrary<unknown>, n: number): unknown[] {
  const seen = new Map<string, unknown>();
  for (const v of fc.sample(arb, { seed: 0x5eed, numRuns: 40 })) {
    const text = writeJson(v);
    if (!seen.has(text)) seen.set(text, v);
    if (seen.size >= n) break;
  }
  return [...seen.values()];
}

/** Every schema location of object properties, nested ones included: `[['quantity'], schema]`. */
function fieldsOf(schema: Schema, path: string[] = []): Array<[string[], Schema]> {
  const props = (schema.properties as Record<string, Schema> | undefined) ?? {};
  return Object.entries(props).flatMap(([k, s]) => [
    [[...path, k], s] as [string[], Schema],
    ...(typesOf(s)[0] === 'object' ? fieldsOf(s, [...path, k]) : []),
  ]);
}

type Add = (location: Location, name: string, value: string, request: Partial<GeneratedRequest> & { expect: Expectation }) => void;

/** Body cases: the whole body, then each field (types, keywords, integer boundaries and forms). */
function bodyCases(op: Operation, add: Add): void {
  const schema = op.requestBody!.schema;
  const valid = exampleValue(schema);
  const text = writeJson(valid);
  const body = (b: string, expect: Expectation) => ({ body: b, expect });
  for (const [path, s] of fieldsOf(schema)) {
    const where = `/${path.join('/')}`;
    for (const sub of substitutes(s))
      add(
        'body',
        `${where}: type ${sub.name}`,
        `${where} = ${writeJson(sub.value)}`,
        body(writeJson(setAt(valid, path, sub.value)), 'negative'),
      );
  }
  for (const sub of substitutes(schema))
    add('body', `(body): type ${sub.name}`, writeJson(sub.value), body(writeJson(sub.value), 'negative'));
  const required = Array.isArray(schema.required) && (schema.required as unknown[]).length > 0;
  add('body', '(body): empty object', '{}', body('{}', required ? 'negative' : 'positive'));
  for (const m of structuralMutations(op))
    add('body', `(body): ${m.name}`, printable(m.mutate(text, valid)), body(m.mutate(text, valid), m.expect));
  for (const [name, size, expect] of [
    ['at 64 KiB', LARGE_BODY, 'odd'],
    ['over 64 KiB (100 KB)', OVER_LARGE_BODY, 'odd'],
  ] as const) {
    const pad = size - text.length - '"padding":"",'.length;
    const rest = text === '{}' ? '}' : `,${text.slice(1)}`;
    add('body', `(body): a body ${name}`, `${size} bytes`, body(`{"padding":"${'p'.repeat(Math.max(0, pad))}"${rest}`, expect));
  }
  for (const v of violations(schema).filter((x) => !/: type$/.test(x.keyword))) {
    fixedValues(v.arbitrary, 3).forEach((bad, i) =>
      add('body', `${v.keyword} #${i + 1}`, printable(writeJson(bad)), body(writeJson(bad), 'negative')),
    );
  }
  for (const path of integerPaths(schema)) {
    const where = `/${path.join('/')}`;
    const s = path.reduce<Schema>((acc, k) => (acc.properties as Record<string, Schema>)[k] ?? {}, schema);
    const marker = 7_777_777_777;
    const withNumber = (n: string) => writeJson(setAt(valid, path, marker)).replace(String(marker), n);
    const { min, max } = integerBounds(s);
    const within = (v: bigint) => (min === undefined || v >= min) && (max === undefined || v <= max);
    const extremes = [INT64_MAX, INT64_MIN, INT64_MAX - 1n, INT64_MIN + 1n, 0n, -1n].filter(within);
    for (const n of [...new Set([...extremes.map(String), ...integerBoundaries(s).map(String)])]) {
      add('body', `${where}: boundary ${n}`, n, body(withNumber(n), 'positive'));
    }
    for (const n of [(INT64_MAX + 1n).toString(), (INT64_MIN - 1n).toString(), '1e19', '-1e19'])
      add('body', `${where}: beyond int64 ${n}`, n, body(withNumber(n), 'odd'));
    for (const form of INTEGER_FORMS.filter((f) => f !== 'plain'))
      add('body', `${where}: form ${form}`, writeInteger(5, form), body(withNumber(writeInteger(5, form)), 'positive'));
    for (const n of ['-0', '-0.0', '0e5']) add('body', `${where}: form ${n}`, n, body(withNumber(n), 'positive'));
  }
}

/** String cases of each string field: lengths, characters, encodings (raw bytes where JSON text cannot say it). */
function stringCases(op: Operation, add: Add): void {
  const schema = op.requestBody!.schema;
  const valid = exampleValue(schema);
  for (const path of stringPaths(schema)) {
    const where = `/${path.join('/')}`;
    const marker = '\u0000MARK\u0000';
    const withText = (raw: string) => writeJson(setAt(valid, path, marker)).replace(JSON.stringify(marker), raw);
    const cases: Array<{ name: string; raw: string; expect: Expectation; latin1?: boolean }> = [
      { name: 'a 5 000-character string', raw: JSON.stringify('x'.repeat(5_000)), expect: 'odd' },
      { name: 'a string of 60 000 characters', raw: JSON.stringify('y'.repeat(60_000)), expect: 'odd' },
      { name: 'invalid UTF-8 bytes', raw: '"a\u00c3\u0028b\u00ff"', expect: 'odd', latin1: true },
      { name: 'an overlong UTF-8 encoding', raw: '"\u00c0\u00af"', expect: 'odd', latin1: true },
      { name: 'a raw control character', raw: '"a\u0001b"', expect: 'negative' },
      ...AWKWARD_STRINGS.map((s) => ({ name: s.name, raw: s.raw ?? JSON.stringify(s.value), expect: s.expect })),
      { name: 'a lone low surrogate escape', raw: '"\\udc00"', expect: 'odd' as Expectation },
    ];
    for (const c of cases) {
      // Latin-1 here means: each character is one byte on the wire (bytes that are not UTF-8).
      const text = withText(c.raw);
      add('string', `${where}: ${c.name}`, printable(c.raw.slice(1, -1)), {
        body: text,
        expect: c.expect,
        ...(c.latin1 ? { bodyEncoding: 'latin1' as const } : {}),
      });
    }
  }
}

/** Path forms beyond `SEGMENT_FORMS` (`fillPath` writes them): broken escapes, empty, very long. */
export const COVERAGE_SEGMENT_FORMS: Record<string, Expectation> = {
  'invalid-percent': 'negative',
  'truncated-percent': 'negative',
  'lone-percent': 'negative',
  'not-hex-percent': 'negative',
  'invalid-utf8-percent': 'negative',
  'overlong-utf8-percent': 'negative',
  'surrogate-utf8-percent': 'negative',
  'encoded-slash': 'negative',
  'trailing-slash': 'odd',
  empty: 'odd',
  'very-long': 'negative',
  ...SEGMENT_FORMS,
};

function pathCases(op: Operation, add: Add, valid: string | undefined): void {
  for (const p of op.pathParameters) {
    for (const [form, expect] of Object.entries(COVERAGE_SEGMENT_FORMS)) {
      add('path', `${p.name} written as ${form}`, `{${p.name}:${form}}`, {
        path: op.path.replace(`{${p.name}}`, `{${p.name}:${form}}`),
        expect,
        ...(valid !== undefined ? { body: valid } : {}),
      });
    }
    for (const v of violations(p.schema)) {
      for (const bad of fixedValues(v.arbitrary, 2)) {
        const seg = typeof bad === 'string' ? bad : writeJson(bad);
        if (seg === '' || seg === '.' || seg === '..' || segmentMayBeValid(p.schema, seg)) continue;
        const label = v.keyword.replace('(root): ', '');
        add('path', `${p.name} ${label} ${printable(seg, 30)}`, seg, {
          path: op.path.replace(`{${p.name}}`, encodeURIComponent(seg)),
          expect: 'negative',
          ...(valid !== undefined ? { body: valid } : {}),
        });
      }
    }
  }
}

/** Authorization values; `{key}` is API_KEY (sent only in a Bearer credential), others hold no key. */
const AUTHORIZATION_CASES: Array<{ name: string; template?: string; raw?: string; expect: Expectation }> = [
  { name: 'a 300-character token', raw: `Bearer ${'t'.repeat(300)}`, expect: 'negative' },
  { name: 'a 5 000-character token', raw: `Bearer ${'t'.repeat(5_000)}`, expect: 'negative' },
  { name: 'characters outside token68', raw: 'Bearer a{b}"c\\d,e', expect: 'negative' },
  { name: 'the key with a character appended', template: 'Bearer {key}x', expect: 'negative' },
  { name: 'the scheme in lower case', template: 'bearer {key}', expect: 'positive' },
  { name: 'the scheme in upper case', template: 'BEARER {key}', expect: 'positive' },
  { name: 'the scheme in mixed case', template: 'bEaReR {key}', expect: 'positive' },
  { name: 'three spaces after the scheme', template: 'Bearer   {key}', expect: 'odd' },
  { name: 'a tab after the scheme', template: 'Bearer\t{key}', expect: 'odd' },
  { name: 'two credentials in one field', template: 'Bearer {key}, Bearer {key}', expect: 'odd' },
  { name: 'another scheme', template: 'Basic {key}', expect: 'negative' },
  { name: 'the scheme alone', raw: 'Bearer', expect: 'negative' },
];

/** Near misses of `application/json`, beside `CONTENT_TYPES`. */
const CONTENT_TYPE_NEAR_MISSES: Array<{ value: string; expect: Expectation }> = [
  { value: 'application/json; charset=utf-8; profile=x', expect: 'odd' },
  { value: 'application/json;', expect: 'odd' },
  { value: 'APPLICATION/JSON; CHARSET=UTF-8', expect: 'odd' },
  { value: 'application/jsonp', expect: 'odd' },
  { value: 'application/json-patch+json', expect: 'odd' },
  { value: 'json', expect: 'odd' },
  { value: 'application/vnd.api+json', expect: 'odd' },
];

function headerCases(op: Operation, add: Add, valid: string | undefined): void {
  const b = valid !== undefined ? { body: valid } : {};
  for (const a of AUTHORIZATION_CASES) {
    const shown = a.raw ? printable(a.raw, 40) : a.template!.replace('{key}', '<API_KEY>');
    add('header', `Authorization: ${a.name}`, shown, {
      ...b,
      expect: a.expect,
      ...(a.raw !== undefined ? { headers: { authorization: a.raw }, noKey: true } : { authTemplate: a.template }),
    });
  }
  for (const h of HEADER_VARIATIONS.filter((x) => !x.scheme))
    add('header', h.name, printable(JSON.stringify(h.headers), 40), { ...b, headers: { ...(h.headers ?? {}) }, expect: h.expect });
  if (!op.requestBody) return;
  for (const ct of [...CONTENT_TYPES, ...CONTENT_TYPE_NEAR_MISSES]) {
    const label = ct.value === null ? '(none)' : JSON.stringify(ct.value);
    add('header', `Content-Type: ${label}`, label, { ...b, contentType: ct.value, expect: ct.expect });
  }
}

/** Methods on a path: HEAD and OPTIONS (RFC 9110 §9.1: GET and HEAD are supported by every general-purpose server), TRACE, extension methods. */
function methodCases(op: Operation, operations: Operation[], add: Add, options: ClassOptions): void {
  if (op !== operations.find((o) => o.path === op.path)) return;
  const documented = methodsByPath(operations).get(op.path) ?? [];
  const pathDescribed = operations.filter((o) => o.path === op.path).every((o) => o.described);
  // Extension methods the HTTP parsers know, safe by their own definitions (RFC 4918 §9.1, RFC 5323): a 405 or a 501 (RFC 9110 §15.6.2).
  const methods: Array<{ method: string; expect: Expectation; allow501?: boolean }> = [
    { method: 'HEAD', expect: 'odd' },
    { method: 'OPTIONS', expect: 'odd' },
    { method: 'TRACE', expect: pathDescribed ? 'negative' : 'odd' },
    { method: 'PROPFIND', expect: pathDescribed ? 'negative' : 'odd', allow501: true },
    { method: 'SEARCH', expect: pathDescribed ? 'negative' : 'odd', allow501: true },
  ];
  if (pathDescribed && !options.safeMethodsOnly && !documented.includes('PATCH')) methods.push({ method: 'PATCH', expect: 'negative' });
  // readonly: a valid key goes only with GET, HEAD and OPTIONS (what the suites' client allows there).
  const allowed = options.safeMethodsOnly ? methods.filter((m) => ['HEAD', 'OPTIONS'].includes(m.method)) : methods;
  for (const m of allowed.filter((x) => !documented.includes(x.method))) {
    add('method', `${m.method} ${op.path}`, m.method, {
      method: m.method,
      expect: m.expect,
      ...(m.allow501 ? { allowedServerErrors: [501] } : {}),
    });
  }
}

const QUERIES: Array<{ name: string; query: string }> = [
  { name: 'an unknown parameter', query: '?page=1&petId=1' },
  { name: 'invalid percent-encoding', query: '?q=%zz&%00=1&r=%E0%A4' },
  { name: 'a repeated parameter', query: '?a=1&a=2&a' },
  { name: 'brackets and an encoded space', query: '?filter[status]=sold&x=a%20b+c' },
  { name: 'a 6 KB query', query: `?pad=${'q'.repeat(6_000)}` },
];

function queryCases(op: Operation, add: Add, valid: string | undefined): void {
  for (const q of QUERIES)
    add('query', q.name, printable(q.query, 40), {
      path: `${op.path}${q.query}`,
      expect: 'odd',
      ...(valid !== undefined ? { body: valid } : {}),
    });
}

/** The coverage cases of one operation, location by location, the most telling first within each. */
export function coverageCases(op: Operation, operations: Operation[], options: ClassOptions = {}): CoverageCase[] {
  const out: CoverageCase[] = [];
  const valid = op.requestBody ? writeJson(exampleValue(op.requestBody.schema)) : undefined;
  const add: Add = (location, name, value, r) => {
    const request: GeneratedRequest = {
      method: op.method,
      path: op.path,
      headers: {},
      note: `${location} ${name}`,
      ...r,
      expect: op.described ? r.expect : 'odd',
    };
    out.push({ op: op.id, location, name: `${location} ${name}`, value, request });
  };
  if (op.requestBody) {
    bodyCases(op, add);
    stringCases(op, add);
  }
  pathCases(op, add, valid);
  headerCases(op, add, valid);
  methodCases(op, operations, add, options);
  queryCases(op, add, valid);
  return out;
}

/** Counts per location (every location listed, zeros included). */
export function countByLocation(cases: readonly CoverageCase[]): Record<Location, number> {
  const counts = Object.fromEntries(LOCATIONS.map((l) => [l, 0])) as Record<Location, number>;
  for (const c of cases) counts[c.location]++;
  return counts;
}

/** What fits the budget: the cases chosen per operation, and those left out, by name. */
export interface CoveragePlan {
  selected: Record<string, CoverageCase[]>;
  left: Record<string, CoverageCase[]>;
  total: number;
  used: number;
}

/**
 * The fixed priority order: round-robin over (location, operation) groups in `LOCATIONS` order
 * and document order, one case of each group per round, so that a small budget still reaches
 * every location of every operation with its most telling cases; the first `room` are chosen.
 */
export function planCoverage(all: Record<string, CoverageCase[]>, room: number): CoveragePlan {
  const groups: CoverageCase[][] = [];
  for (const location of LOCATIONS)
    for (const cases of Object.values(all)) {
      const g = cases.filter((c) => c.location === location);
      if (g.length) groups.push(g);
    }
  const order: CoverageCase[] = [];
  for (let round = 0; order.length < groups.reduce((s, g) => s + g.length, 0); round++) {
    for (const g of groups) if (g[round]) order.push(g[round]!);
  }
  const chosen = new Set(order.slice(0, Math.max(0, room)));
  const selected: Record<string, CoverageCase[]> = {};
  const left: Record<string, CoverageCase[]> = {};
  for (const [op, cases] of Object.entries(all)) {
    selected[op] = cases.filter((c) => chosen.has(c));
    left[op] = cases.filter((c) => !chosen.has(c));
  }
  return { selected, left, total: order.length, used: chosen.size };
}

/** `--list-cases`: the coverage cases per operation and location, with counts; nothing is sent. */
export function listCases(
  operations: Operation[],
  options: ClassOptions = {},
  plan?: CoveragePlan,
  document: Operation[] = operations,
): string {
  const lines: string[] = [];
  let total = 0;
  for (const op of operations) {
    const cases = coverageCases(op, document, options);
    total += cases.length;
    const counts = countByLocation(cases);
    lines.push(`${op.id} (${op.method} ${op.path}): ${cases.length} cases — ${LOCATIONS.map((l) => `${l} ${counts[l]}`).join(', ')}`);
    for (const location of LOCATIONS) {
      const here = cases.filter((c) => c.location === location);
      if (!here.length) continue;
      lines.push(`  ${location} (${here.length})`);
      const left = new Set((plan?.left[op.id] ?? []).map((c) => c.name));
      for (const c of here)
        lines.push(
          `    ${c.request.expect.padEnd(8)} ${c.name.slice(location.length + 1)}${left.has(c.name) ? '   [not within the budget]' : ''}`,
        );
    }
  }
  lines.push(`${total} coverage cases in all${plan ? `; ${plan.used} within the budget, ${plan.total - plan.used} left out` : ''}`);
  return `${lines.join('\n')}\n`;
}
