/**
 * The spec's Error object (Errors section: `code`, `message`, `status`, content type
 * `application/json`). Pure check used by every suite through `expectErrorBody`.
 */
import { getHeader, isJsonMediaType, type HeaderSource } from './headers.ts';

export interface ErrorResponseLike {
  status: number;
  headers: HeaderSource;
  /** The parsed body (via `parseJson`), undefined when it was not JSON. */
  json?: unknown;
  /** Why the body did not parse, when it did not. */
  jsonError?: string;
  text: string;
}

/** Error content type (spec, Errors: "content type `application/json`"; charset allowed). */
export function errorContentTypeProblems(res: ErrorResponseLike): string[] {
  const contentType = getHeader(res.headers, 'content-type');
  return isJsonMediaType(contentType)
    ? []
    : [`Content-Type is ${contentType === undefined ? 'missing' : `"${contentType}"`}, expected application/json`];
}

function errorObject(res: ErrorResponseLike): { object?: Record<string, unknown>; problems: string[] } {
  if (res.jsonError !== undefined || res.json === undefined) {
    return { problems: [`body is not JSON (${res.jsonError ?? 'empty'}): ${abbreviate(res.text)}`] };
  }
  const body = res.json;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return { problems: [`body is not a JSON object: ${abbreviate(res.text)}`] };
  }
  return { object: body as Record<string, unknown>, problems: [] };
}

/** The Error object's fields: `code` and `message` strings, `status` an integer. */
export function errorFieldProblems(res: ErrorResponseLike): string[] {
  const { object, problems } = errorObject(res);
  if (!object) return problems;
  for (const field of ['code', 'message'] as const) {
    if (typeof object[field] !== 'string') problems.push(`"${field}" is ${describe(object[field])}, expected a string`);
  }
  const status = object.status;
  const isInt = (typeof status === 'number' && Number.isInteger(status)) || typeof status === 'bigint';
  if (!isInt) problems.push(`"status" is ${describe(status)}, expected an integer`);
  return problems;
}

/** The Error object's `status` equals the HTTP status. */
export function errorStatusProblems(res: ErrorResponseLike): string[] {
  const { object, problems } = errorObject(res);
  if (!object) return problems;
  const status = object.status;
  if (status === undefined) return [`"status" is missing, expected ${res.status} (the HTTP status)`];
  return String(status) === String(res.status) && typeof status !== 'string'
    ? []
    : [`"status" is ${describe(status)}, expected ${res.status} (the HTTP status)`];
}

/** Every way `res` deviates from an Error response; empty when it conforms. */
export function errorBodyProblems(res: ErrorResponseLike): string[] {
  const fields = errorFieldProblems(res);
  const status = errorStatusProblems(res).filter((p) => !fields.includes(p));
  return [...errorContentTypeProblems(res), ...fields, ...status];
}

export function describe(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (typeof value === 'string') return `the string ${JSON.stringify(abbreviate(value, 60))}`;
  if (typeof value === 'bigint') return `the integer ${value}`;
  if (typeof value === 'object') return Array.isArray(value) ? 'an array' : 'an object';
  return `the ${typeof value} ${String(value)}`;
}

export function abbreviate(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}
