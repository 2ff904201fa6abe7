/**
 * The 429 responses.
 *
 * Spec: [Limits](spec/inventory-service.md#limits) rules 3 and 5 and
 * [Errors](spec/inventory-service.md#errors) — "429: Rate limit exceeded; the client must
 * wait for the time given in the `Retry-After` header before retrying". The body of a 429 is not
 * shown by the spec; this server sends an Error body: `rate_limited`, or `key_banned` during a
 * temporary ban. `Retry-After` is delta-seconds (RFC 9110 §10.2.3), rounded up.
 *
 * A hammered key lives on this path, so the server writes it with `refusalBody()` (no Error
 * object: capturing a stack costs more than the rest of the response); `refusal()` is the same
 * answer as an `ApiError`.
 */
import { ApiError, ErrorCode, type ErrorBody } from '../errors/api-error.ts';
import type { RateDecision } from './policy.ts';

/** The Error body of a refusal (`status` 429). */
export function refusalErrorBody(decision: RateDecision): ErrorBody {
  const retryAfter = decision.retryAfterSeconds;
  if (decision.outcome === 'banned') {
    return {
      code: ErrorCode.keyBanned,
      message: `Temporarily banned for sending requests before Retry-After had passed; retry after ${retryAfter} s.`,
      status: 429,
    };
  }
  return { code: ErrorCode.rateLimited, message: `Rate limit exceeded; retry after ${retryAfter} s.`, status: 429 };
}

/** The JSON of `refusalErrorBody(decision)`, as the central error handler would write it. */
export function refusalBody(decision: RateDecision): string {
  return JSON.stringify(refusalErrorBody(decision));
}

/** The refusal as an `ApiError` with its `Retry-After`. */
export function refusal(decision: RateDecision): ApiError {
  const body = refusalErrorBody(decision);
  return new ApiError(429, body.code, body.message, { 'Retry-After': String(decision.retryAfterSeconds) });
}
