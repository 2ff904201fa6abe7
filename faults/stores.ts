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
  constructor(private readonly decideFn: (state: RateState, policy: RatePolicy, now: number) => RateDecision) {}
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
