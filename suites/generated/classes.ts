/**
 * The generated request classes of one operation, from the document alone: each schema keyword
 * violated in turn, body mutations, encodings, HTTP-level variation (`variations.ts`) and valid
 * requests at the boundaries; each request with its `Expectation`. Pure; fast-check arbitraries.
 * `{name}` in a path is a listed value filled at run time, `{name:form}` an encoding of it (`fillPath`).
 */
import fc from 'fast-check';
import { type Operation, type Schema, methodsByPath } from './document.ts';
import { integerBoundaries, integerPaths, segmentMayBeValid, stringPaths, validObject, validValue, violations } from './keywords.ts';
import { INTEGER_FORMS, PLAIN_STYLE, writeJson, type JsonStyle } from './json-text.ts';
import type { Expectation } from './expectation.ts';
import {
  AWKWARD_STRINGS,
  CONTENT_TYPES,
  encodeSegment,
  fillPath,
  HEADER_VARIATIONS,
  SEGMENT_FORMS,
  structuralMutations,
  setAt,
  URL_FORMS,
} from './variations.ts';

export { AWKWARD_STRINGS, CONTENT_TYPES, encodeSegment, fillPath, HEADER_VARIATIONS, SEGMENT_FORMS, structuralMutations, type Expectation };

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
        const text = writeJson(setAt(v, path, s.value ?? marker)).replace(JSON.stringify(marker), s.raw ?? JSON.stringify(marker));
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
        .map(([o, ...vals]) => ints.reduce<unknown>((acc, p, i) => setAt(acc, p, vals[i]), o))
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
