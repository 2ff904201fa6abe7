/**
 * Token bucket refilled once a second, as payment and cloud APIs meter it: capacity Limit, and
 * every whole second since the last refill adds Limit × 1 s / W tokens (never past the capacity).
 * Remaining is the whole tokens left; Reset is when the bucket is full again; after the limit about
 * one second's refill is admitted at a time, never a full burst at once. `Retry-After` is the
 * refill at which a whole token is there.
 */
import type { Algorithm } from './limiter.ts';

const TICK_MS = 1000;

export const tokenBucket: Algorithm = (w, first) => {
  const perTick = (w.limit * TICK_MS) / w.ms;
  let tokens = w.limit;
  let tick = first;
  const refill = (now: number) => {
    const ticks = Math.floor((now - tick) / TICK_MS);
    if (ticks <= 0) return;
    tokens = Math.min(w.limit, tokens + ticks * perTick);
    tick += ticks * TICK_MS;
  };
  /** The refill at which the bucket holds `wanted` tokens. */
  const when = (wanted: number) => tick + Math.ceil((wanted - tokens) / perTick - 1e-9) * TICK_MS;
  return {
    check(now) {
      refill(now);
      if (tokens >= 1) return { ok: true };
      return { ok: false, retryAtMs: when(1), resetMs: when(w.limit) };
    },
    take(now) {
      refill(now);
      tokens -= 1;
      return { remaining: Math.floor(tokens + 1e-9), resetMs: when(w.limit) };
    },
  };
};
