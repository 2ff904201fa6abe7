/**
 * The 429 responses.
 *
 * Spec: [Limits](../shared/spec/inventory-service.md#limits) rules 3 and 5 and
 * [Errors](../shared/spec/inventory-service.md#errors) — "429: Rate limit exceeded; the client must
 * wait for the time given in the `Retry-After` header before retrying". The body of a 429 is not
 * shown by the spec; this server sends an Error body: `rate_limited`, or `key_banned` during a
 * temporary ban. `Retry-After` is delta-seconds (RFC 9110 §10.2.3), rounded up.
 */
import { ApiError, ErrorCode } from '../errors/api-error.ts';
import type { RateDecision } from './policy.ts';

export function refusal(decision: RateDecision): ApiError {
  const retryAfter = String(decision.retryAfterSeconds);
  if (decision.outcome === 'banned') {
    return new ApiError(
      429,
      ErrorCode.keyBanned,
      `Temporarily banned for sending requests before Retry-After had passed; retry after ${retryAfter} s.`,
      { 'Retry-After': retryAfter },
    );
  }
  return new ApiError(429, ErrorCode.rateLimited, `Rate limit exceeded; retry after ${retryAfter} s.`, { 'Retry-After': retryAfter });
}
