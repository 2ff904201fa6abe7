/**
 * Header helpers of the suites. Header names are case-insensitive (RFC 9110 §5.1); media types
 * compare type and subtype case-insensitively and ignore parameters (RFC 9110 §8.3.1).
 * Pure functions: no I/O, no state.
 */

/** Headers as the transports give them: a plain record (any name case) or name/value pairs. */
export type HeaderSource = Record<string, string | string[] | number | undefined> | ReadonlyArray<{ name: string; value: string }>;

/** All values of header `name` (case-insensitive), in order. */
export function headerValues(headers: HeaderSource, name: string): string[] {
  const wanted = name.toLowerCase();
  const out: string[] = [];
  if (Array.isArray(headers)) {
    for (const h of headers as ReadonlyArray<{ name: string; value: string }>) {
      if (h.name.toLowerCase() === wanted) out.push(h.value);
    }
    return out;
  }
  for (const [key, value] of Object.entries(headers as Record<string, unknown>)) {
    if (key.toLowerCase() !== wanted || value === undefined) continue;
    if (Array.isArray(value)) out.push(...value.map(String));
    else out.push(String(value));
  }
  return out;
}

/** The value of header `name` (case-insensitive); repeated fields are joined with `, ` (RFC 9110 §5.3). */
export function getHeader(headers: HeaderSource, name: string): string | undefined {
  const values = headerValues(headers, name);
  return values.length ? values.join(', ') : undefined;
}

/** A record with lower-cased names; repeated fields joined with `, `. */
export function normalizeHeaders(headers: HeaderSource): Record<string, string> {
  const names = Array.isArray(headers) ? (headers as ReadonlyArray<{ name: string }>).map((h) => h.name) : Object.keys(headers);
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = getHeader(headers, name);
    if (value !== undefined) out[name.toLowerCase()] = value;
  }
  return out;
}

/** `type/subtype` of a Content-Type value, lower-cased, without parameters; undefined if malformed. */
export function mediaType(contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  const essence = contentType.split(';')[0].trim().toLowerCase();
  return /^[!#$%&'*+.^_`|~0-9a-z-]+\/[!#$%&'*+.^_`|~0-9a-z-]+$/.test(essence) ? essence : undefined;
}

/**
 * True iff the Content-Type is `application/json` (any case, any parameters such as
 * `charset=utf-8`), as the spec requires for bodies and Error responses.
 */
export function isJsonMediaType(contentType: string | undefined): boolean {
  return mediaType(contentType) === 'application/json';
}

/** A challenge of a `WWW-Authenticate` value: scheme and raw parameters (RFC 9110 §11.6.1). */
export interface Challenge {
  scheme: string;
  params: Record<string, string>;
}

/**
 * Parses a `WWW-Authenticate` value into challenges. Good enough for the checks the suite makes
 * (is there a `Bearer` challenge, which `error` does it carry): auth-params `name=token` or
 * `name="quoted"`, token68 ignored.
 */
export function parseChallenges(value: string | undefined): Challenge[] {
  if (!value) return [];
  const out: Challenge[] = [];
  const token = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+/;
  let rest = value;
  let current: Challenge | undefined;
  while (rest.length) {
    rest = rest.replace(/^[\s,]+/, '');
    const name = token.exec(rest)?.[0];
    if (!name) {
      rest = rest.slice(1);
      continue;
    }
    rest = rest.slice(name.length);
    const param = /^\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,]*)/.exec(rest);
    if (param && current && !/^=+(\s|,|$)/.test(rest)) {
      const raw = param[1];
      current.params[name.toLowerCase()] = raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(.)/g, '$1') : raw;
      rest = rest.slice(param[0].length);
      continue;
    }
    current = { scheme: name, params: {} };
    out.push(current);
    const token68 = /^ +[A-Za-z0-9\-._~+/]+=*(?=\s*(,|$))/.exec(rest);
    if (token68) rest = rest.slice(token68[0].length);
  }
  return out;
}

/** The first challenge whose scheme is `bearer` (schemes are case-insensitive). */
export function bearerChallenge(value: string | undefined): Challenge | undefined {
  return parseChallenges(value).find((c) => c.scheme.toLowerCase() === 'bearer');
}
