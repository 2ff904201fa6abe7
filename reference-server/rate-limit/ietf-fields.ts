/**
 * The IETF rate-limit header fields, sent besides `X-RateLimit-*` when the server is started with
 * `rateLimitFields` (`RATELIMIT_FIELDS=on`); off by default.
 *
 * Source: draft-ietf-httpapi-ratelimit-headers (RateLimit and RateLimit-Policy, Structured Field
 * lists, RFC 9651): `RateLimit-Policy: "minute";q=<limit>;w=<window seconds>` names the quota
 * policy and `RateLimit: "minute";r=<remaining>;t=<seconds until reset>` its current state. They
 * describe the same window as `X-RateLimit-*` (the one with the fewest remaining requests; the
 * exhausted one on a 429; the minute window during a ban), so they always agree: q = Limit,
 * r = Remaining, t = Reset − now (on a 429: Retry-After).
 */
import type { RateDecision, RatePolicy } from './policy.ts';

export const H_RATELIMIT = 'RateLimit';
export const H_RATELIMIT_POLICY = 'RateLimit-Policy';

/** The two fields for `decision` (name, value, name, value) at `now` (epoch ms). */
export function ietfRateLimitFields(decision: RateDecision, policy: RatePolicy, now: number): string[] {
  const window = (decision.outcome !== 'banned' && policy.windows.find((w) => w.limit === decision.limit)) || policy.windows[0];
  const seconds =
    decision.outcome === 'admitted' ? Math.max(0, decision.resetSeconds - Math.floor(now / 1000)) : decision.retryAfterSeconds;
  return [
    H_RATELIMIT_POLICY,
    `"${window.name}";q=${window.limit};w=${Math.ceil(window.ms / 1000)}`,
    H_RATELIMIT,
    `"${window.name}";r=${decision.remaining};t=${seconds}`,
  ];
}
