/**
 * Bearer authentication.
 *
 * Spec: [Authentication](spec/inventory-service.md#authentication) and
 * [Errors](spec/inventory-service.md#errors) — "401: Missing or invalid API key; the
 * `Authorization` header must use the bearer form". Applied to every route, including the
 * quickstart and the named-only operations.
 *
 * - The scheme is case-insensitive (`bearer`, `BEARER`; RFC 9110 §11.1); the token is not.
 * - Missing, empty, malformed (`Bearer` alone), other scheme (`Basic …`), no scheme (a bare key),
 *   several `Authorization` headers and unknown keys all yield 401 with an Error body and
 *   `WWW-Authenticate: Bearer realm="inventory"` (RFC 9110 §15.5.2, RFC 6750 §3), with
 *   `error="invalid_token"` whenever a credential was sent (none when the header is absent).
 */
import { ApiError, ErrorCode } from '../errors/api-error.ts';
import type { ApiKeyRecord, KeyRing } from './keys.ts';

export const REALM = 'inventory';
const CHALLENGE = `Bearer realm="${REALM}"`;
const CHALLENGE_INVALID = `Bearer realm="${REALM}", error="invalid_token"`;

/** The outcome: the key's record, or the 401 to send (after the rate limiter has counted the request). */
export type AuthResult = ApiKeyRecord | ApiError;

const missing = (): ApiError =>
  new ApiError(401, ErrorCode.missingCredentials, 'Missing API key: send Authorization: Bearer <API_KEY>.', {
    'WWW-Authenticate': CHALLENGE,
  });

const invalid = (message: string): ApiError =>
  new ApiError(401, ErrorCode.invalidCredentials, message, { 'WWW-Authenticate': CHALLENGE_INVALID });

const VERIFIED = Symbol('verifiedAuthorization');

interface VerifiedConnection {
  [VERIFIED]?: { value: string; record: ApiKeyRecord };
}

/**
 * Authenticates a request from its raw header list, so duplicate headers are seen and the lazily
 * built `req.headers` object is not needed on the hot path.
 *
 * A connection remembers the last `Authorization` value that proved valid on it: a request that
 * repeats it exactly skips hashing. That comparison is constant-time too (`sameString`), so even
 * where a proxy carries several clients over one connection, no client learns another's key.
 */
export function authenticate(rawHeaders: readonly string[], keys: KeyRing, connection: object): AuthResult {
  const verified = (connection as VerifiedConnection)[VERIFIED];
  let value: string | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    if (name.length === 13 && (name === 'authorization' || name === 'Authorization' || name.toLowerCase() === 'authorization')) {
      if (value !== undefined) return invalid('Send exactly one Authorization header.');
      value = rawHeaders[i + 1];
    }
  }
  if (value === undefined) return missing();
  if (verified !== undefined && sameString(verified.value, value)) return verified.record;
  if (value === '') return invalid('Empty Authorization header: send Authorization: Bearer <API_KEY>.');
  const space = value.indexOf(' ');
  if (space < 0) {
    return invalid(
      value.length === 6 && value.toLowerCase() === 'bearer'
        ? 'Bearer scheme without a token: send Authorization: Bearer <API_KEY>.'
        : 'Authorization must use the bearer form: Bearer <API_KEY>.',
    );
  }
  const scheme = value.slice(0, space);
  if (!(scheme === 'Bearer' || (scheme.length === 6 && scheme.toLowerCase() === 'bearer'))) {
    return invalid('Authorization must use the Bearer scheme.');
  }
  let start = space + 1;
  while (start < value.length && value.charCodeAt(start) === 32) start++;
  const token = value.slice(start);
  if (token === '') return invalid('Bearer scheme without a token: send Authorization: Bearer <API_KEY>.');
  const record = keys.lookup(token);
  if (record === undefined) return invalid('Invalid API key.');
  (connection as VerifiedConnection)[VERIFIED] = { value, record };
  return record;
}

/** Equality of two strings in time that depends only on their lengths. */
export function sameString(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/**
 * A known key carried in any form of the Authorization value (bare, after any scheme, either half
 * of a Basic credential), for a limiter that counts every request of a key (COUNT_REFUSED_KEYS).
 */
export function keyCarried(rawHeaders: readonly string[], keys: KeyRing): ApiKeyRecord | undefined {
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() !== 'authorization') continue;
    const parts = rawHeaders[i + 1]!.trim().split(/\s+/);
    const basic =
      parts.length === 2 && parts[0]!.toLowerCase() === 'basic' ? Buffer.from(parts[1]!, 'base64').toString('utf8').split(':') : [];
    for (const token of [...parts, ...basic]) {
      const record = token ? keys.lookup(token) : undefined;
      if (record) return record;
    }
  }
  return undefined;
}
