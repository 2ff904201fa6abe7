/**
 * Where the limiter keeps its counters.
 *
 * Spec: [Limits](spec/inventory-service.md#limits). The in-memory default is exact under
 * any concurrency: `hit` runs `decide` synchronously, so no two requests of one identity interleave
 * between reading and writing a counter. A shared store (several server processes) implements the
 * same interface and must keep that atomicity itself (a transaction, a compare-and-set loop, a
 * script); `hit` may return a Promise for that.
 */
import { decide, newRateState, type RateDecision, type RatePolicy, type RateState } from './policy.ts';

export interface RateLimitStore {
  /**
   * Counts one request of `identity` (never a raw API key) at `now` (epoch ms) under `policy`,
   * atomically, and returns the decision. Implementations normally delegate to `decide()`.
   */
  hit(identity: string, policy: RatePolicy, now: number): RateDecision | Promise<RateDecision>;
  /** Releases timers or connections; called by `close()` of the server. */
  close?(): void | Promise<void>;
}

/** The default store: one `RateState` per identity in a Map; idle entries are swept. */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly states = new Map<string, RateState>();
  private readonly maxIdentities: number;

  constructor(options: { maxIdentities?: number } = {}) {
    this.maxIdentities = options.maxIdentities ?? 100_000;
  }

  hit(identity: string, policy: RatePolicy, now: number): RateDecision {
    let state = this.states.get(identity);
    if (state === undefined) {
      if (this.states.size >= this.maxIdentities) this.sweep(policy, now);
      state = newRateState(policy);
      this.states.set(identity, state);
    }
    return decide(state, policy, now);
  }

  /** Drops identities with no ban, no pending retry and no window still open. */
  private sweep(policy: RatePolicy, now: number): void {
    const longest = Math.max(...policy.windows.map((w) => w.ms));
    for (const [identity, state] of this.states) {
      if (state.bannedUntil > now || state.retryAt > now) continue;
      if (state.starts.every((start) => start + longest <= now)) this.states.delete(identity);
    }
  }

  /** Number of identities tracked (for tests). */
  get size(): number {
    return this.states.size;
  }
}
