/** The variations a generated class applies to a valid request: path-segment encodings, body mutations, awkward strings, content types, headers, URL forms. */
import type { Operation } from './document.ts';
import type { Expectation } from './expectation.ts';
import { integerPaths } from './keywords.ts';
import { writeJson } from './json-text.ts';

/** `obj` with `value` at the property path `path` (objects created on the way). */
export const setAt = (obj: unknown, path: string[], value: unknown): unknown => {
  if (!path.length) return value;
  const o = (obj && typeof obj === 'object' && !Array.isArray(obj) ? obj : {}) as Record<string, unknown>;
  return { ...o, [path[0]!]: setAt(o[path[0]!], path.slice(1), value) };
};

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
        mutate: (_t, v) => writeJson(setAt(v, firstInt, 0)).replace(/:0(?=[,}])/, ':NaN'),
      },
      {
        name: `Infinity as ${firstInt.join('/')}`,
        expect: 'negative',
        mutate: (_t, v) => writeJson(setAt(v, firstInt, 0)).replace(/:0(?=[,}])/, ':Infinity'),
      },
      {
        name: `1e400 as ${firstInt.join('/')}`,
        expect: 'odd',
        mutate: (_t, v) => writeJson(setAt(v, firstInt, 0)).replace(/:0(?=[,}])/, ':1e400'),
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

export const URL_FORMS: Array<{ name: string; apply: (path: string) => string }> = [
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
