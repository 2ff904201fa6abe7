import { decide, newRateState, type RateDecision, type RatePolicy, type RateState } from '../reference-server/rate-limit/policy.ts';
import type { RateLimitStore } from '../reference-server/rate-limit/store.ts';

/**
 * Deliberately defective `RateLimitStore`s for the fault catalogue: limiter bugs a proxy cannot
 * fake. Each is passed to `startReferenceServer({ store })`; the server's own code is unchanged.
 */

/** A policy whose limits are multiplied by `factor` and shifted by `extra`. */
function widened(policy: RatePolicy, factor: number, extra: number): RatePolicy {
  return { ...policy, windows: policy.windows.map((w) => ({ ...w, limit: w.limit * factor + extra })) };
}

/** One state per identity, with the decision function swappable. */
class MapStore implements RateLimitStore {
  protected readonly states = new Map<string, RateState>();
  private readonly decideFn: (state: RateState, policy: RatePolicy, now: number) => RateDecision;
  constructor(decideFn: (state: RateState, policy: RatePolicy, now: number) => RateDecision) {
    this.decideFn = decideFn;
  }
  hit(identity: string, policy: RatePolicy, now: number): RateDecision | Promise<RateDecision> {
    let state = this.states.get(identity);
    if (!state) this.states.set(identity, (state = newRateState(policy)));
    return this.decideFn(state, policy, now);
  }
}

/**
 * Reads the counter, awaits a round trip (as to a remote store), then writes it back: concurrent
 * requests all read the same count, so a burst is over-admitted. Sequential use stays exact.
 */
export function racyStore(roundTripMs = 5): RateLimitStore {
  const states = new Map<string, RateState>();
  return {
    async hit(identity, policy, now) {
      const copy = structuredClone(states.get(identity) ?? newRateState(policy));
      await new Promise((r) => setTimeout(r, roundTripMs));
      const decision = decide(copy, policy, now);
      states.set(identity, copy);
      return decision;
    },
  };
}

/** `count > limit` instead of `count >= limit`: Limit+1 requests per window, headers still show Limit. */
export function lateByOneStore(): RateLimitStore {
  return new MapStore((state, policy, now) => {
    const d = decide(state, widened(policy, 1, 1), now);
    return { ...d, limit: d.limit - 1, remaining: Math.max(0, d.remaining - 1) };
  });
}

/** Monitor-only limiter: counts and reports, never refuses. */
export function unenforcedStore(): RateLimitStore {
  const F = 1_000_000;
  return new MapStore((state, policy, now) => {
    const d = decide(state, widened(policy, F, 0), now);
    const limit = d.limit / F;
    const count = d.limit - d.remaining;
    return { ...d, limit, remaining: Math.max(0, limit - count) };
  });
}

/**
 * A conformant sliding-log limiter (a legitimate choice where the spec is silent): the first
 * window (per minute) slides, later windows (per day) stay fixed. Headers describe the sliding
 * window: Reset is when the window is fully free again (newest admitted request + window),
 * Retry-After after a refusal is when the oldest admitted request leaves the window. Early
 * retries after a 429 count as strikes and ban the identity as the reference server does.
 */
export function slidingWindowStore(): RateLimitStore {
  interface SlidingState {
    log: number[];
    head: number;
    fixed: RateState;
    retryAt: number;
    strikes: number;
    bannedUntil: number;
  }
  const states = new Map<string, SlidingState>();
  return {
    hit(identity, policy, now) {
      const [minute, ...rest] = policy.windows;
      const restPolicy: RatePolicy = { ...policy, windows: rest };
      let s = states.get(identity);
      if (!s) states.set(identity, (s = { log: [], head: 0, fixed: newRateState(restPolicy), retryAt: 0, strikes: 0, bannedUntil: 0 }));
      const w = minute!;
      if (s.bannedUntil > now) {
        return {
          outcome: 'banned',
          limit: w.limit,
          remaining: 0,
          resetSeconds: Math.ceil(s.bannedUntil / 1000),
          retryAfterSeconds: Math.ceil((s.bannedUntil - now) / 1000),
        };
      }
      if (s.bannedUntil !== 0)
        Object.assign(s, { log: [], head: 0, fixed: newRateState(restPolicy), retryAt: 0, strikes: 0, bannedUntil: 0 });
      while (s.head < s.log.length && s.log[s.head]! + w.ms <= now) s.head++;
      if (s.head > 1024) (s.log = s.log.slice(s.head)), (s.head = 0);
      const inWindow = s.log.length - s.head;
      const refuse = (freeAt: number, limit: number): RateDecision => {
        if (now < s!.retryAt && ++s!.strikes >= policy.banThreshold) {
          s!.bannedUntil = now + policy.banMs;
          return {
            outcome: 'banned',
            limit: w.limit,
            remaining: 0,
            resetSeconds: Math.ceil(s!.bannedUntil / 1000),
            retryAfterSeconds: Math.ceil(policy.banMs / 1000),
          };
        }
        if (now >= s!.retryAt) s!.strikes = 0;
        s!.retryAt = freeAt;
        return {
          outcome: 'limited',
          limit,
          remaining: 0,
          resetSeconds: Math.ceil(freeAt / 1000),
          retryAfterSeconds: Math.ceil((freeAt - now) / 1000),
        };
      };
      if (inWindow >= w.limit) return refuse(s.log[s.head]! + w.ms, w.limit);
      if (rest.length) {
        const probe = structuredClone(s.fixed);
        const d = decide(probe, restPolicy, now);
        if (d.outcome !== 'admitted') return refuse(d.resetSeconds * 1000, d.limit);
        s.fixed = probe;
      }
      s.log.push(now);
      s.strikes = 0;
      return {
        outcome: 'admitted',
        limit: w.limit,
        remaining: w.limit - inWindow - 1,
        resetSeconds: Math.ceil((now + w.ms) / 1000),
        retryAfterSeconds: 0,
      };
    },
  };
}

/**
 * Admits Limit + 1 requests per window with headers consistent with what it admits: the window's
 * first request is not counted, so `X-RateLimit-Remaining` equals `X-RateLimit-Limit` after it
 * and then counts down to 0 as usual. Only counting every admission of the window from its first
 * request, probes included, shows the over-admission.
 */
export function uncountedFirstStore(): RateLimitStore {
  return new MapStore((state, policy, now) => {
    const d = decide(state, widened(policy, 1, 1), now);
    return { ...d, limit: d.limit - 1 };
  });
}

/**
 * A conformant token-bucket limiter (a legitimate choice where the spec is silent): the first
 * window's limit is the bucket's capacity, refilled at limit per window, continuously or (with
 * `tickMs`) in whole ticks, as payment and cloud APIs meter it; later windows (per day) stay
 * fixed. Headers: Limit the capacity, Remaining the whole tokens left, Reset when the bucket is
 * full again; a refusal's `Retry-After` is when the next whole token arrives, rounded up, so
 * waiting it always suffices. It never bans.
 */
export function tokenBucketStore(options: { tickMs?: number } = {}): RateLimitStore {
  interface Bucket {
    tokens: number;
    at: number;
    fixed: RateState;
  }
  const tickMs = options.tickMs ?? 0;
  const buckets = new Map<string, Bucket>();
  return {
    hit(identity, policy, now) {
      const [w, ...rest] = policy.windows;
      const bucketWindow = w!;
      const restPolicy: RatePolicy = { ...policy, windows: rest };
      const perMs = bucketWindow.limit / bucketWindow.ms;
      let b = buckets.get(identity);
      if (!b) buckets.set(identity, (b = { tokens: bucketWindow.limit, at: now, fixed: newRateState(restPolicy) }));
      refillBucket(b, bucketWindow.limit, perMs, tickMs, now);
      /** When the bucket holds `wanted` tokens (ms). */
      const when = (wanted: number) =>
        tickMs > 0
          ? b.at + Math.max(0, Math.ceil((wanted - b.tokens) / (perMs * tickMs) - 1e-9)) * tickMs
          : now + Math.max(0, wanted - b.tokens) / perMs;
      if (b.tokens < 1) {
        return {
          outcome: 'limited',
          limit: bucketWindow.limit,
          remaining: 0,
          resetSeconds: Math.ceil(when(bucketWindow.limit) / 1000),
          retryAfterSeconds: Math.max(1, Math.ceil((when(1) - now) / 1000)),
        };
      }
      if (rest.length) {
        const probe = structuredClone(b.fixed);
        const d = decide(probe, restPolicy, now);
        if (d.outcome !== 'admitted') return d;
        b.fixed = probe;
      }
      b.tokens -= 1;
      return {
        outcome: 'admitted',
        limit: bucketWindow.limit,
        remaining: Math.floor(b.tokens + 1e-9),
        resetSeconds: Math.ceil(when(bucketWindow.limit) / 1000),
        retryAfterSeconds: 0,
      };
    },
  };
}

/** Adds the tokens earned since the bucket's last refill: continuously, or in whole ticks of `tickMs`. */
function refillBucket(b: { tokens: number; at: number }, capacity: number, perMs: number, tickMs: number, now: number): void {
  if (tickMs <= 0) {
    b.tokens = Math.min(capacity, b.tokens + (now - b.at) * perMs);
    b.at = now;
    return;
  }
  const ticks = Math.floor((now - b.at) / tickMs);
  if (ticks <= 0) return;
  b.tokens = Math.min(capacity, b.tokens + ticks * tickMs * perMs);
  b.at += ticks * tickMs;
}

/**
 * One bucket for every key (a gateway that counts per account, per address or per route, not per
 * key): every identity's requests count in one state, so a key's Remaining falls with other keys'
 * traffic and a 429 can come on a key whose own Remaining said there was room.
 */
export function sharedBucketStore(): RateLimitStore {
  let state: RateState | undefined;
  return { hit: (_identity, policy, now) => decide((state ??= newRateState(policy)), policy, now) };
}

/**
 * The reference server's limiter with a minute window of at most `limit` requests: a sequential
 * drive reaches the limit within one short window even on a slow runner.
 */
export function smallMinuteLimitStore(limit = 10): RateLimitStore {
  return new MapStore((state, policy, now) =>
    decide(
      state,
      { ...policy, windows: policy.windows.map((w) => (w.name === 'minute' ? { ...w, limit: Math.min(w.limit, limit) } : w)) },
      now,
    ),
  );
}
