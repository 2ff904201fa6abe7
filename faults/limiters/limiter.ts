/**
 * The frame every limiter of the zoo shares: one algorithm decides the first window of the policy
 * (the plan's per-minute limit), the later windows (per day) stay fixed as the reference server's
 * `decide()` counts them, and early retries after a 429 ban the key as the reference server does.
 * Only the algorithm differs from one limiter to the next (one file each in this folder).
 *
 * Spec: Limits rules 1-5 (the three headers on every response, Reset "a Unix timestamp of the
 * moment the limit resets", 429 with `Retry-After`, a temporary ban for repeated requests after a
 * 429). RFC 9110 §10.2.3: `Retry-After` is delta-seconds; here it is rounded up, so waiting it
 * always gets one request through (the algorithm gives the exact moment one more fits).
 */
import {
  decide,
  newRateState,
  type RateDecision,
  type RatePolicy,
  type RateState,
  type RateWindow,
} from '../../reference-server/rate-limit/policy.ts';
import type { RateLimitStore } from '../../reference-server/rate-limit/store.ts';

/** What an algorithm says about one more request at `now` (epoch ms, the server's clock). */
export type Verdict =
  | { ok: true }
  /** `retryAtMs`: the first moment one request fits; `resetMs`: the `X-RateLimit-Reset` to show on the 429. */
  | { ok: false; retryAtMs: number; resetMs: number };

/** One key's state under one algorithm. `check` never changes the state; `take` counts an admitted request. */
export interface KeyLimiter {
  check(now: number): Verdict;
  /** Counts one admitted request and returns the headers after it: whole requests left and the Reset moment (epoch ms). */
  take(now: number): { remaining: number; resetMs: number };
}

/** An algorithm: a fresh key state for a window (limit per `ms`), first used at `now`. */
export type Algorithm = (window: RateWindow, now: number) => KeyLimiter;

export interface LimiterStoreOptions {
  /** The server's clock minus the real one (ms): every decision, Reset and ban is on the server's clock. */
  clockOffsetMs?: number;
}

interface KeyState {
  limiter: KeyLimiter;
  fixed: RateState;
  retryAt: number;
  strikes: number;
  bannedUntil: number;
}

const seconds = (ms: number) => Math.ceil(ms / 1000);

function banned(s: KeyState, limit: number, now: number): RateDecision {
  return { outcome: 'banned', limit, remaining: 0, resetSeconds: seconds(s.bannedUntil), retryAfterSeconds: seconds(s.bannedUntil - now) };
}

/** A refusal: a strike when sent before the last 429's Retry-After, the ban at the threshold. */
function refuse(s: KeyState, policy: RatePolicy, now: number, limit: number, retryAtMs: number, resetMs: number): RateDecision {
  if (now < s.retryAt) {
    if (++s.strikes >= policy.banThreshold) {
      s.bannedUntil = Math.max(now + policy.banMs, retryAtMs);
      return banned(s, policy.windows[0]!.limit, now);
    }
  } else {
    s.strikes = 0;
  }
  s.retryAt = retryAtMs;
  return {
    outcome: 'limited',
    limit,
    remaining: 0,
    resetSeconds: seconds(resetMs),
    retryAfterSeconds: Math.max(1, seconds(retryAtMs - now)),
  };
}

/** One request of one key at `now` (the server's clock). */
function hitKey(s: KeyState, policy: RatePolicy, now: number): RateDecision {
  const [first, ...rest] = policy.windows;
  const w = first!;
  if (s.bannedUntil !== 0) {
    if (now < s.bannedUntil) return banned(s, w.limit, now);
    Object.assign(s, { bannedUntil: 0, strikes: 0, retryAt: 0 });
  }
  const verdict = s.limiter.check(now);
  if (!verdict.ok) return refuse(s, policy, now, w.limit, verdict.retryAtMs, verdict.resetMs);
  const restPolicy: RatePolicy = { ...policy, windows: rest };
  let day: RateDecision | undefined;
  if (rest.length) {
    const probe = structuredClone(s.fixed);
    day = decide(probe, restPolicy, now);
    if (day.outcome !== 'admitted') return refuse(s, policy, now, day.limit, day.resetSeconds * 1000, day.resetSeconds * 1000);
    s.fixed = probe;
  }
  const after = s.limiter.take(now);
  s.strikes = 0;
  // The headers describe the window with the fewest requests left (the first one on a tie).
  if (day && day.remaining < after.remaining) return day;
  return { outcome: 'admitted', limit: w.limit, remaining: after.remaining, resetSeconds: seconds(after.resetMs), retryAfterSeconds: 0 };
}

/**
 * A `RateLimitStore` running `algorithm` per identity (exact under concurrency: `hit` is
 * synchronous). With `clockOffsetMs` the limiter lives on a clock that far from the real one.
 */
export function limiterStore(algorithm: Algorithm, options: LimiterStoreOptions = {}): RateLimitStore {
  const keys = new Map<string, KeyState>();
  const offset = options.clockOffsetMs ?? 0;
  return {
    hit(identity, policy, realNow) {
      const now = realNow + offset;
      let s = keys.get(identity);
      if (!s) {
        s = {
          limiter: algorithm(policy.windows[0]!, now),
          fixed: newRateState({ ...policy, windows: policy.windows.slice(1) }),
          retryAt: 0,
          strikes: 0,
          bannedUntil: 0,
        };
        keys.set(identity, s);
      }
      return hitKey(s, policy, now);
    },
  };
}
