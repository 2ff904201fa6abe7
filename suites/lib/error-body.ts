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

/** Every way `res` deviates from an Error response; empty when it conforms. */
export function errorBodyProblems(res: ErrorResponseLike): string[] {
  const problems: string[] = [];
  const contentType = getHeader(res.headers, 'content-type');
  if (!isJsonMediaType(contentType)) {
    problems.push(`Content-Type is ${contentType === undefined ? 'missing' : `"${contentType}"`}, expected application/json`);
  }
  if (res.jsonError !== undefined || res.json === undefined) {
    problems.push(`body is not JSON (${res.jsonError ?? 'empty'}): ${abbreviate(res.text)}`);
    return problems;
  }
  const body = res.json;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    problems.push(`body is not a JSON object: ${abbreviate(res.text)}`);
    return problems;
  }
  const o = body as Record<string, unknown>;
  for (const field of ['code', 'message'] as const) {
    if (typeof o[field] !== 'string') problems.push(`"${field}" is ${describe(o[field])}, expected a string`);
  }
  const status = o.status;
  const isInt = (typeof status === 'number' && Number.isInteger(status)) || typeof status === 'bigint';
  if (!isInt) problems.push(`"status" is ${describe(status)}, expected an integer`);
  else if (Number(status) !== res.status) problems.push(`"status" is ${String(status)}, expected ${res.status} (the HTTP status)`);
  return problems;
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
