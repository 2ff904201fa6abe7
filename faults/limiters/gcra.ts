/**
 * GCRA, the generic cell rate algorithm (redis-cell's CL.THROTTLE, throttled's Lua script): one
 * theoretical arrival time (TAT) per key, an emission interval T = W / Limit, a burst of Limit.
 * A request at `now` is admitted when max(TAT, now) + T − Limit·T ≤ now; TAT then moves to
 * max(TAT, now) + T. Remaining is the whole cells between now and that bound; Reset is when TAT
 * returns to now (the bucket is full again); `Retry-After` is exactly when one cell is free.
 */
import type { Algorithm } from './limiter.ts';

export const gcra: Algorithm = (w) => {
  const T = w.ms / w.limit;
  const capacity = w.limit * T;
  let tat = -Infinity;
  const next = (now: number) => Math.max(tat, now) + T;
  return {
    check(now) {
      const allowAt = next(now) - capacity;
      if (allowAt <= now + 1e-6) return { ok: true };
      return { ok: false, retryAtMs: Math.ceil(allowAt), resetMs: Math.ceil(Math.max(tat, now)) };
    },
    take(now) {
      tat = next(now);
      const remaining = Math.floor((now - (tat - capacity)) / T + 1e-9);
      return { remaining: Math.max(0, remaining), resetMs: Math.ceil(tat) };
    },
  };
};
