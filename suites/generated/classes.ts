/**
 * The generated request classes of one operation, derived from the document alone: each keyword
 * of the body schema and of each path parameter violated in turn, structural mutations of bodies,
 * encodings of strings and path segments, HTTP-level variation (methods, URL form, header values,
 * content types), and valid requests with boundary values and every valid representation of a
 * value. Each request carries its expectation:
 *
 * - `negative`: the spec (or HTTP) requires a refusal: a 4xx with an Error body;
 * - `positive`: a valid request: a 2xx with a schema-valid body, or a refusal the spec allows;
 * - `odd`: HTTP or the spec leaves the answer open: anything but a 5xx, and a 4xx is an Error body.
 *
 * Pure; fast-check arbitraries. Path parameters taken from a list are written `{name}` and filled
 * at run time; `{name:form}` asks for an encoding of the listed value (see `fillPath`).
 */
import fc from 'fast-check';
import { type Operation, type Schema, methodsByPath } from './document.ts';
import { integerBoundaries, integerPaths, segmentMayBeValid, stringPaths, validObject, validValue, violations } from './keywords.ts';
import { INTEGER_FORMS, PLAIN_STYLE, writeJson, type JsonStyle } from './json-text.ts';

export type Expectation = 'negative' | 'positive' | 'odd';

/** One generated request, before the listed values are filled in. */
export interface GeneratedRequest {
  method: string;
  /** Path after the base address, e.g. `/inventory/{petId}`. */
  path: string;
  headers: Record<string, string>;
  /** `undefined`: `application/json` when a body is sent; `null`: no Content-Type at all. */
  contentType?: string | null;
  /** The raw body text. */
  body?: string;
  /** Authorization scheme as written (default `Bearer`). */
  scheme?: string;
  expect: Expectation;
  /** What this request varies, for messages: `/quantity: type`, `Accept: application/xml`. */
  note: string;
  /** `latin1`: each character of `body` is one byte on the wire (bytes that are not UTF-8). */
  bodyEncoding?: 'latin1';
  /** The Authorization value built from API_KEY: `{key}` stands for it (e.g. `bearer {key}`). */
  authTemplate?: string;
  /** No key is sent: `headers.authorization`, when given, holds none. */
  noKey?: boolean;
  /** 5xx statuses HTTP makes the right refusal here (501 for a method the server does not implement, RFC 9110 §15.6.2). */
  allowedServerErrors?: number[];
}

/** A class of generated requests of one operation (the unit of coverage, budget and replay). */
export interface CaseClass {
  /** `<operation id> <class>`, e.g. `updateInventory body-keyword /quantity: type`. */
  name: string;
  kind: ClassKind;
  arbitrary: fc.Arbitrary<GeneratedRequest>;
}

export type ClassKind =
  | 'body-keyword'
  | 'path-keyword'
  | 'body-structure'
  | 'string-encoding'
  | 'path-encoding'
  | 'http-method'
  | 'url-form'
  | 'header-values'
  | 'content-type'
  | 'positive-boundary'
  | 'positive-representation';

/**
 * Methods the generator may send where the document does not list them: safe ones (RFC 9110
 * §9.2.1), plus PATCH where every operation of the path is described (it cannot change anything
 * there). Never DELETE, PUT or POST: on an operation the spec only names they could destroy data.
 */
const SAFE_METHODS = ['GET', 'HEAD', 'OPTIONS', 'TRACE'];
const PROBE_METHODS = [...SAFE_METHODS, 'PATCH'];

/** Options of `classesOf`. */
export interface ClassOptions {
  /** `readonly` profile: no request with an unsafe method beyond the operation's own. */
  safeMethodsOnly?: boolean;
}

const set = (obj: unknown, path: string[], value: unknown): unknown => {
  if (!path.length) return value;
  const o = (obj && typeof obj === 'object' && !Array.isArray(obj) ? obj : {}) as Record<string, unknown>;
  return { ...o, [path[0]!]: set(o[path[0]!], path.slice(1), value) };
};

/** The path with every `{param}` placeholder of a listed value kept for run time. */
function template(op: Operation): string {
  return op.path;
}

/** Replaces `{param}` by a literal (percent-encoded) segment. */
function withParam(path: string, name: string, text: string): string {
  return path.replace(`{${name}}`, encodeURIComponent(text));
}

/** Text of a JSON value as a path segment: strings as they are, the rest as JSON. */
function segmentText(v: unknown): string {
  return typeof v === 'string' ? v : writeJson(v);
}

/** The valid request of an operation (plain JSON body with boundary-weighted values). */
function validBody(op: Operation): fc.Arbitrary<unknown> | undefined {
  return op.requestBody ? validValue(op.requestBody.schema) : undefined;
}

/**
 * Path-segment encodings of a listed value, with the answer each allows. `odd`: a server may
 * normalise it to the value (RFC 3986 §6.2.2) or refuse it; `negative`: no reading makes it an id.
 */
export const SEGMENT_FORMS: Record<string, Expectation> = {
  'percent-encoded': 'odd',
  'leading-zeros': 'odd',
  'plus-sign': 'odd',
  'trailing-space': 'odd',
  'fraction-zero': 'odd',
  exponent: 'odd',
  'arabic-indic-digits': 'odd',
  'fullwidth-digits': 'odd',
  'nul-byte': 'negative',
  'zero-width-space': 'negative',
  'invalid-percent': 'negative',
  'encoded-slash': 'negative',
  'letters-appended': 'negative',
};

/** Writes a listed value in one of `SEGMENT_FORMS`. */
export function encodeSegment(value: string, form: string): string {
  const enc = encodeURIComponent;
  switch (form) {
    case 'percent-encoded':
      return [...value].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`).join('');
    case 'leading-zeros':
      return value.startsWith('-') ? `-00${value.slice(1)}` : `00${value}`;
    case 'plus-sign':
      return `+${value}`;
    case 'trailing-space':
      return `${enc(value)}%20`;
    case 'fraction-zero':
      return `${value}.0`;
    case 'exponent':
      return `${value}e0`;
    case 'arabic-indic-digits':
      return enc(value.replace(/[0-9]/g, (d) => String.fromCharCode(0x660 + Number(d))));
    case 'fullwidth-digits':
      return enc(value.replace(/[0-9]/g, (d) => String.fromCharCode(0xff10 + Number(d))));
    case 'nul-byte':
      return `${enc(value)}%00`;
    case 'zero-width-space':
      return `${enc(value)}%E2%80%8B`;
    case 'invalid-percent':
      return `${enc(value)}%zz`;
    case 'encoded-slash':
      return `${enc(value)}%2Fx`;
    case 'letters-appended':
      return `${enc(value)}abc`;
    case 'truncated-percent':
      return `${enc(value)}%4`;
    case 'lone-percent':
      return `${enc(value)}%`;
    case 'not-hex-percent':
      return `%G1${enc(value)}`;
    case 'invalid-utf8-percent':
      return `${enc(value)}%C3%28`;
    case 'overlong-utf8-percent':
      return `${enc(value)}%C0%AF`;
    case 'surrogate-utf8-percent':
      return `${enc(value)}%ED%A0%80`;
    case 'trailing-slash':
      return `${enc(value)}/`;
    case 'empty':
      return '';
    case 'very-long':
      return `${enc(value)}${'9'.repeat(4_000)}`;
    default:
      return enc(value);
  }
}

/** Fills `{name}` and `{name:form}` placeholders with listed values (exact digits, never through a double). */
export function fillPath(path: string, values: Record<string, string>): string {
  return path.replace(/\{([^}:]+)(?::([^}]+))?\}/g, (_m, name: string, form?: string) => {
    const v = values[name];
    if (v === undefined) throw new Error(`no listed value for path parameter ${name}`);
    return form ? encodeSegment(v, form) : encodeURIComponent(v);
  });
}

/** The structural mutations of a valid body's text, with the answer each allows. */
export function structuralMutations(
  op: Operation,
): Array<{ name: string; expect: Expectation; mutate: (text: string, value: unknown) => string }> {
  const schema = op.requestBody!.schema;
  const hasRequired = Array.isArray(schema.required) && (schema.required as unknown[]).length > 0;
  const closed = schema.additionalProperties === false;
  const isObject = schema.type === 'object' || !!schema.properties;
  const firstInt = integerPaths(schema)[0];
  const list: Array<{ name: string; expect: Expectation; mutate: (text: string, value: unknown) => string }> = [
    { name: 'truncated JSON', expect: 'negative', mutate: (t) => t.slice(0, Math.max(1, t.length - 1)) },
    { name: 'trailing garbage', expect: 'negative', mutate: (t) => `${t} x` },
    { name: 'two JSON documents', expect: 'negative', mutate: (t) => `${t}${t}` },
    { name: 'empty body', expect: op.requestBody!.required ? 'negative' : 'odd', mutate: () => '' },
    { name: 'whitespace only', expect: op.requestBody!.required ? 'negative' : 'odd', mutate: () => ' \n\t ' },
    { name: 'a JavaScript comment', expect: 'negative', mutate: (t) => `/* c */${t}` },
    { name: 'single-quoted JSON', expect: 'negative', mutate: (t) => t.replace(/"/g, "'") },
    { name: 'a raw NUL byte before the document', expect: 'negative', mutate: (t) => `\u0000${t}` },
    { name: 'a byte order mark', expect: 'odd', mutate: (t) => `\ufeff${t}` },
    { name: 'wrapped in an array', expect: 'negative', mutate: (t) => `[${t}]` },
  ];
  if (isObject) {
    list.push(
      { name: 'wrapped in another object', expect: hasRequired ? 'negative' : 'odd', mutate: (t) => `{"data":${t}}` },
      {
        name: 'a duplicate member',
        expect: 'odd',
        mutate: (t, v) =>
          t.endsWith('}') && t !== '{}'
            ? `${t.slice(0, -1)},${writeJson(Object.entries(v as object)[0] ? { [Object.keys(v as object)[0]!]: 'duplicate' } : {}).slice(1)}`
            : t,
      },
      {
        name: 'an unknown member',
        expect: closed ? 'negative' : 'positive',
        mutate: (t) => (t === '{}' ? '{"unknownMember":"x"}' : `${t.slice(0, -1)},"unknownMember":{"nested":[1,"x",null]}}`),
      },
      {
        name: 'a deeply nested unknown member',
        expect: closed ? 'negative' : 'odd',
        mutate: (t) => `${t === '{}' ? '{' : `${t.slice(0, -1)},`}"deep":${'['.repeat(5000)}${']'.repeat(5000)}}`,
      },
      {
        name: 'a 100 KB unknown member',
        expect: closed ? 'negative' : 'odd',
        mutate: (t) => `${t === '{}' ? '{' : `${t.slice(0, -1)},`}"padding":"${'x'.repeat(100_000)}"}`,
      },
    );
  }
  if (firstInt) {
    list.push(
      {
        name: `NaN as ${firstInt.join('/')}`,
        expect: 'negative',
        mutate: (_t, v) => writeJson(set(v, firstInt, 0)).replace(/:0(?=[,}])/, ':NaN'),
      },
      {
        name: `Infinity as ${firstInt.join('/')}`,
        expect: 'negative',
        mutate: (_t, v) => writeJson(set(v, firstInt, 0)).replace(/:0(?=[,}])/, ':Infinity'),
      },
      {
        name: `1e400 as ${firstInt.join('/')}`,
        expect: 'odd',
        mutate: (_t, v) => writeJson(set(v, firstInt, 0)).replace(/:0(?=[,}])/, ':1e400'),
      },
    );
  }
  return list;
}

/** Valid strings that are awkward to encode, and the answer each allows. */
export const AWKWARD_STRINGS: Array<{ name: string; value?: string; raw?: string; expect: Expectation }> = [
  { name: 'an emoji (astral plane)', value: 'stock 😀 🐈‍⬛', expect: 'positive' },
  { name: 'combining characters', value: 'e\u0301 n\u0303', expect: 'positive' },
  { name: 'right-to-left text', value: 'مرحبا بالعالم', expect: 'positive' },
  { name: 'CJK text', value: '在庫の更新', expect: 'positive' },
  { name: 'an escaped NUL', value: 'a\u0000b', expect: 'positive' },
  { name: 'control characters', value: '\t\n\r\b\f\u0001\u001f', expect: 'positive' },
  { name: 'line and paragraph separators', value: 'a\u2028b\u2029c', expect: 'positive' },
  { name: 'markup and quotes', value: `<script>alert("x")</script> ' OR 1=1 -- %s%n \\ /`, expect: 'positive' },
  { name: 'every character escaped', raw: '"\\u0068\\u0065\\u006c\\u006c\\u006f\\/\\ud83d\\ude00"', expect: 'positive' },
  { name: 'a lone surrogate escape', raw: '"\\ud800x"', expect: 'odd' },
  { name: 'a 20 000-character string', value: 'ab'.repeat(10_000), expect: 'odd' },
  { name: 'the empty string', value: '', expect: 'positive' },
];

export const CONTENT_TYPES: Array<{ value: string | null; expect: Expectation }> = [
  { value: 'application/json; charset=utf-8', expect: 'positive' },
  { value: 'Application/JSON', expect: 'positive' },
  { value: 'application/json;charset=UTF-8', expect: 'positive' },
  { value: 'application/json; charset="utf-8"', expect: 'positive' },
  { value: null, expect: 'odd' },
  { value: 'text/plain', expect: 'odd' },
  { value: 'application/x-www-form-urlencoded', expect: 'odd' },
  { value: 'multipart/form-data; boundary=x', expect: 'odd' },
  { value: 'application/merge-patch+json', expect: 'odd' },
  { value: 'application/json; charset=iso-8859-1', expect: 'odd' },
  { value: 'application/jsonx', expect: 'odd' },
  { value: '', expect: 'odd' },
];

/** Header variations of a valid request (values node's client can send: visible ASCII and Latin-1). */
export const HEADER_VARIATIONS: Array<{ name: string; headers?: Record<string, string>; scheme?: string; expect: Expectation }> = [
  { name: 'Authorization scheme in lower case', scheme: 'bearer', expect: 'positive' },
  { name: 'Authorization scheme in upper case', scheme: 'BEARER', expect: 'positive' },
  { name: 'Accept: application/xml', headers: { accept: 'application/xml' }, expect: 'odd' },
  { name: 'Accept: text/html;q=0.9, */*;q=0', headers: { accept: 'text/html;q=0.9, */*;q=0' }, expect: 'odd' },
  { name: 'Accept: */*', headers: { accept: '*/*' }, expect: 'odd' },
  { name: 'an empty Accept', headers: { accept: '' }, expect: 'odd' },
  { name: 'a Latin-1 header value', headers: { 'x-note': 'caf\u00e9 \u00ff' }, expect: 'odd' },
  { name: 'an 8 KB header value', headers: { 'x-padding': 'p'.repeat(8_000) }, expect: 'odd' },
  { name: 'a malformed X-Forwarded-For', headers: { 'x-forwarded-for': 'not-an-address, ,::zz' }, expect: 'odd' },
  { name: 'Accept-Language with odd weights', headers: { 'accept-language': 'xx;q=2, *;q=-1' }, expect: 'odd' },
  { name: 'If-None-Match: *', headers: { 'if-none-match': '*' }, expect: 'odd' },
  { name: 'Range: bytes=0-0', headers: { range: 'bytes=0-0' }, expect: 'odd' },
];

const URL_FORMS: Array<{ name: string; apply: (path: string) => string }> = [
  { name: 'a trailing slash', apply: (p) => `${p}/` },
  { name: 'a doubled slash', apply: (p) => `/${p}` },
  { name: 'the path in upper case', apply: (p) => p.replace(/(^|\/)([^/{]+)/g, (_m, s: string, seg: string) => s + seg.toUpperCase()) },
  { name: 'a query string', apply: (p) => `${p}?page=1&petId=1` },
  { name: 'a query with invalid percent-encoding', apply: (p) => `${p}?q=%zz&%00=1` },
  { name: 'a matrix parameter', apply: (p) => `${p};v=1` },
  { name: 'an empty query', apply: (p) => `${p}?` },
  { name: 'a 6 KB query', apply: (p) => `${p}?pad=${'q'.repeat(6_000)}` },
  {
    name: 'a percent-encoded letter in the path',
    apply: (p) => p.replace(/^\/([a-z])/, (_m, c: string) => `/%${c.charCodeAt(0).toString(16).toUpperCase()}`),
  },
];

/** What every class step of one operation shares: the operation, the list it adds to, its valid bodies and its request template. */
interface ClassBuilder {
  op: Operation;
  /** Adds a class named `<operation id> <kind> <detail>`. */
  add: (kind: ClassKind, detail: string, arbitrary: fc.Arbitrary<GeneratedRequest>) => void;
  /** The answer a case may get when the operation's payload is not shown: anything but a 5xx. */
  exp: (e: Expectation) => Expectation;
  /** The valid bodies (`undefined`: the operation has none). */
  body: fc.Arbitrary<unknown> | undefined;
  /** A valid body with its text, or `undefined` when the operation has none. */
  plainBody: fc.Arbitrary<{ value: unknown; text: string } | undefined>;
  /** The operation's request with a body, an expectation and a note. */
  base: (b: { value: unknown; text: string } | undefined, expect: Expectation, note: string) => GeneratedRequest;
}

/** The builder of `op`'s classes, adding to `out`. */
function classBuilder(op: Operation, out: CaseClass[]): ClassBuilder {
  const add = (kind: ClassKind, detail: string, arbitrary: fc.Arbitrary<GeneratedRequest>): void => {
    out.push({ name: `${op.id} ${kind}${detail ? ` ${detail}` : ''}`, kind, arbitrary });
  };
  const judged = op.described;
  const exp = (e: Expectation): Expectation => (judged ? e : 'odd');
  const body = validBody(op);
  const plainBody = body ? body.map((v) => ({ value: v, text: writeJson(v) })) : fc.constant(undefined);
  const base = (b: { value: unknown; text: string } | undefined, expect: Expectation, note: string): GeneratedRequest => ({
    method: op.method,
    path: template(op),
    headers: {},
    ...(b ? { body: b.text } : {}),
    expect: exp(expect),
    note,
  });
  return { op, add, exp, body, plainBody, base };
}

/** Each keyword of the body schema violated in turn, then each keyword of each path parameter (the rest of the request valid). */
function keywordClasses({ op, add, base, plainBody }: ClassBuilder): void {
  if (op.requestBody) {
    for (const v of violations(op.requestBody.schema)) {
      add(
        'body-keyword',
        v.keyword,
        v.arbitrary.map((bad) => ({ ...base({ value: bad, text: writeJson(bad) }, 'negative', v.keyword) })),
      );
    }
  }
  for (const p of op.pathParameters) {
    for (const v of violations(p.schema)) {
      const arb = fc.tuple(
        v.arbitrary.map(segmentText).filter((t) => t !== '' && t !== '.' && t !== '..' && !segmentMayBeValid(p.schema, t)),
        plainBody,
      );
      add(
        'path-keyword',
        `${p.name} ${v.keyword.replace('(root): ', '')}`,
        arb.map(([text, b]) => ({
          ...base(b, 'negative', `${p.name} = ${JSON.stringify(text)} (${v.keyword.replace('(root): ', '')})`),
          path: withParam(template(op), p.name, text),
        })),
      );
    }
  }
}

/** Structural mutations of the body, awkward strings in each string field, and content types (an operation with a body). */
function bodyClasses({ op, add, base, body, plainBody }: ClassBuilder): void {
  if (!op.requestBody) return;
  const mutations = structuralMutations(op);
  add(
    'body-structure',
    '',
    fc.tuple(fc.constantFrom(...mutations), body!).map(([m, v]) => ({
      ...base({ value: v, text: m.mutate(writeJson(v), v) }, m.expect, m.name),
    })),
  );
  const strings = stringPaths(op.requestBody.schema);
  if (strings.length) {
    add(
      'string-encoding',
      '',
      fc.tuple(fc.constantFrom(...strings), fc.constantFrom(...AWKWARD_STRINGS), body!).map(([path, s, v]) => {
        const marker = '\u0000MARK\u0000';
        const text = writeJson(set(v, path, s.value ?? marker)).replace(JSON.stringify(marker), s.raw ?? JSON.stringify(marker));
        return base({ value: v, text }, s.expect, `${path.join('/')}: ${s.name}`);
      }),
    );
  }
  add(
    'content-type',
    '',
    fc.tuple(fc.constantFrom(...CONTENT_TYPES), plainBody).map(([ct, b]) => ({
      ...base(b, ct.expect, `Content-Type: ${ct.value === null ? '(none)' : JSON.stringify(ct.value)}`),
      contentType: ct.value,
    })),
  );
}

/** Encodings of listed path values. */
function pathEncodingClasses({ op, add, base, plainBody }: ClassBuilder): void {
  for (const p of op.pathParameters) {
    add(
      'path-encoding',
      p.name,
      fc.tuple(fc.constantFrom(...Object.keys(SEGMENT_FORMS)), plainBody).map(([form, b]) => ({
        ...base(b, SEGMENT_FORMS[form]!, `${p.name} written as ${form}`),
        path: template(op).replace(`{${p.name}}`, `{${p.name}:${form}}`),
      })),
    );
  }
}

/** Methods the document does not list for this path (on the path's first operation only). */
function methodClasses({ op, add, exp }: ClassBuilder, operations: Operation[], options: ClassOptions): void {
  const documented = methodsByPath(operations).get(op.path) ?? [];
  const pathDescribed = operations.filter((o) => o.path === op.path).every((o) => o.described);
  const probes = pathDescribed && !options.safeMethodsOnly ? PROBE_METHODS : SAFE_METHODS;
  const others = probes.filter((m) => !documented.includes(m) && !(m === 'HEAD' && documented.includes('GET')));
  if (others.length && op === operations.find((o) => o.path === op.path)) {
    add(
      'http-method',
      '',
      fc.constantFrom(...others).map((method) => ({
        method,
        path: template(op),
        headers: {},
        expect: exp(['OPTIONS', 'HEAD'].includes(method) ? 'odd' : 'negative'),
        note: `${method} is not an operation of ${op.path}`,
      })),
    );
  }
}

/** Forms of the URL and variations of the header values. */
function urlAndHeaderClasses({ op, add, base, plainBody }: ClassBuilder): void {
  add(
    'url-form',
    '',
    fc.tuple(fc.constantFrom(...URL_FORMS), plainBody).map(([f, b]) => ({
      ...base(b, 'odd', `URL with ${f.name}`),
      path: f.apply(template(op)),
    })),
  );
  add(
    'header-values',
    '',
    fc.tuple(fc.constantFrom(...HEADER_VARIATIONS), plainBody).map(([h, b]) => ({
      ...base(b, h.expect, h.name),
      headers: { ...(h.headers ?? {}) },
      ...(h.scheme ? { scheme: h.scheme } : {}),
    })),
  );
}

/** Valid requests: boundary values, then every valid representation (the plain valid request for an operation without body). */
function validClasses({ op, add, base, body }: ClassBuilder): void {
  if (!op.requestBody) {
    add('positive-boundary', '', fc.constant(base(undefined, 'positive', 'the plain valid request')));
    return;
  }
  const schema = op.requestBody.schema;
  const ints = integerPaths(schema);
  const boundary = ints.length
    ? fc
        .tuple(validObject(schema), ...ints.map((p) => fc.constantFrom(...integerBoundaries(schemaAt(schema, p)))))
        .map(([o, ...vals]) => ints.reduce<unknown>((acc, p, i) => set(acc, p, vals[i]), o))
    : body!;
  add(
    'positive-boundary',
    '',
    boundary.map((v) => base({ value: v, text: writeJson(v) }, 'positive', `valid body ${writeJson(v).slice(0, 120)}`)),
  );
  const style: fc.Arbitrary<JsonStyle> = fc.record({
    integers: fc.constantFrom(...INTEGER_FORMS.filter((f) => f !== 'plain')),
    strings: fc.constantFrom('plain' as const, 'escaped' as const),
    space: fc.constantFrom('', ' ', '\n\t', '\r\n  '),
  });
  add(
    'positive-representation',
    '',
    fc
      .tuple(body!, style)
      .map(([v, s]) => base({ value: v, text: writeJson(v, s) }, 'positive', `representation ${s.integers}/${s.strings}`)),
  );
}

/**
 * Every class of `op`. `operations` is the whole document (for the methods of each path).
 * Classes without any request (an operation without body has no body classes) are left out.
 */
export function classesOf(op: Operation, operations: Operation[], options: ClassOptions = {}): CaseClass[] {
  const out: CaseClass[] = [];
  const builder = classBuilder(op, out);
  keywordClasses(builder);
  bodyClasses(builder);
  pathEncodingClasses(builder);
  methodClasses(builder, operations, options);
  urlAndHeaderClasses(builder);
  validClasses(builder);
  return out;
}

/** The schema at a property path. */
function schemaAt(schema: Schema, path: string[]): Schema {
  return path.reduce<Schema>((s, k) => (s.properties as Record<string, Schema> | undefined)?.[k] ?? {}, schema);
}

export { PLAIN_STYLE };
