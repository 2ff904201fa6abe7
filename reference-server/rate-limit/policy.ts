/**
 * The rate-limit rules as a pure function over one identity's state: fixed windows, 429 with
 * `Retry-After`, and the temporary ban.
 *
 * Spec: [Limits](spec/inventory-service.md#limits) rules 1–5 and
 * [Authentication](spec/inventory-service.md#authentication) rule 5.
 *
 * - Windows are fixed and aligned to the Unix epoch (the day window to 00:00 UTC with the default
 *   length). A request is admitted only if every window has room; it then counts in every window.
 *   A refused request counts in none.
 * - The `X-RateLimit-*` headers describe the window with the fewest remaining requests (the
 *   minute window on a tie). On a refusal they describe the exhausted window (Remaining 0).
 * - Over the limit: 429 with `Retry-After` = the time until the exhausted window resets, in whole
 *   seconds rounded up, so waiting it always suffices.
 * - Ban: a request sent while an earlier 429's `Retry-After` has not yet passed is a strike. The
 *   `banThreshold`-th strike bans the identity for `banMs`; the request that triggers it and every
 *   request during the ban get 429 `key_banned` with a `Retry-After` covering the rest of the ban.
 *   Requests during a ban do not extend it, and it lasts at least until the exhausted window resets,
 *   so waiting its `Retry-After` always suffices. When it ends the strikes start afresh; the windows
 *   keep their counts (a ban never buys a second helping of one window). A request admitted after
 *   waiting clears the strikes.
 */

/** One fixed window of a policy. */
export interface RateWindow {
  readonly name: 'minute' | 'day';
  readonly limit: number;
  readonly ms: number;
}

/** The rules applied to one identity (an API key or, without a valid key, a client address). */
export interface RatePolicy {
  readonly windows: readonly RateWindow[];
  readonly banThreshold: number;
  readonly banMs: number;
}

/** Mutable per-identity state, owned by a `RateLimitStore`. Plain data, so a shared store can serialize it. */
export interface RateState {
  /** Start (epoch ms) of the current fixed window, per policy window. */
  starts: number[];
  /** Requests admitted in the current window, per policy window. */
  counts: number[];
  /** Epoch ms before which a retry after the last 429 is early (0: none pending). */
  retryAt: number;
  /** Early retries since the last 429. */
  strikes: number;
  /** Epoch ms until which the identity is banned (0: not banned). */
  bannedUntil: number;
}

export type RateOutcome = 'admitted' | 'limited' | 'banned';

/** What the limiter decided, and what the `X-RateLimit-*` / `Retry-After` headers say. */
export interface RateDecision {
  outcome: RateOutcome;
  /** `X-RateLimit-Limit`. */
  limit: number;
  /** `X-RateLimit-Remaining` (0 when refused). */
  remaining: number;
  /** `X-RateLimit-Reset`: epoch seconds, rounded up. */
  resetSeconds: number;
  /** `Retry-After` in whole seconds, rounded up (0 when admitted). */
  retryAfterSeconds: number;
  /** Further rate-limit header fields to send (name, value, …), e.g. the IETF `RateLimit` fields. */
  fields?: readonly string[];
}

export function newRateState(policy: RatePolicy): RateState {
  const n = policy.windows.length;
  return { starts: new Array<number>(n).fill(-1), counts: new Array<number>(n).fill(0), retryAt: 0, strikes: 0, bannedUntil: 0 };
}

/**
 * Applies one request at `now` (epoch ms) to `state` (mutated in place) and returns the decision.
 * Callers must run it atomically per identity; the in-memory store does, being synchronous.
 */
export function decide(state: RateState, policy: RatePolicy, now: number): RateDecision {
  const windows = policy.windows;
  if (state.bannedUntil !== 0) {
    if (now < state.bannedUntil) return banned(state, policy, now);
    state.bannedUntil = 0;
    state.strikes = 0;
    state.retryAt = 0;
  }
  let exhausted = -1;
  let exhaustedReset = 0;
  for (let i = 0; i < windows.length; i++) {
    const w = windows[i];
    const start = now - (now % w.ms);
    if (state.starts[i] !== start) {
      state.starts[i] = start;
      state.counts[i] = 0;
    }
    if (state.counts[i] >= w.limit && start + w.ms > exhaustedReset) {
      exhausted = i;
      exhaustedReset = start + w.ms;
    }
  }
  if (exhausted >= 0) {
    if (now < state.retryAt) {
      state.strikes++;
      if (state.strikes >= policy.banThreshold) {
        state.bannedUntil = Math.max(now + policy.banMs, exhaustedReset);
        return banned(state, policy, now);
      }
    } else {
      state.strikes = 0;
    }
    state.retryAt = exhaustedReset;
    return {
      outcome: 'limited',
      limit: windows[exhausted].limit,
      remaining: 0,
      resetSeconds: Math.ceil(exhaustedReset / 1000),
      retryAfterSeconds: Math.ceil((exhaustedReset - now) / 1000),
    };
  }
  let shown = 0;
  let shownRemaining = Infinity;
  for (let i = 0; i < windows.length; i++) {
    const remaining = windows[i].limit - ++state.counts[i];
    if (remaining < shownRemaining) {
      shown = i;
      shownRemaining = remaining;
    }
  }
  state.strikes = 0;
  return {
    outcome: 'admitted',
    limit: windows[shown].limit,
    remaining: shownRemaining,
    resetSeconds: Math.ceil((state.starts[shown] + windows[shown].ms) / 1000),
    retryAfterSeconds: 0,
  };
}

function banned(state: RateState, policy: RatePolicy, now: number): RateDecision {
  return {
    outcome: 'banned',
    limit: policy.windows[0].limit,
    remaining: 0,
    resetSeconds: Math.ceil(state.bannedUntil / 1000),
    retryAfterSeconds: Math.ceil((state.bannedUntil - now) / 1000),
  };
}
