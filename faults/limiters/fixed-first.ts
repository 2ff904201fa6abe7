/**
 * Fixed window that opens at a key's first request, as the in-memory stores of common middleware
 * keep it (express-rate-limit's MemoryStore, rate-limiter-flexible's points with a duration): the
 * window is [first, first + W); the first request after it opens the next one. Remaining counts the
 * requests since the key's window opened; Reset is that key's own window end, so windows of
 * different keys do not line up.
 */
import type { Algorithm } from './limiter.ts';

export const fixedFirst: Algorithm = (w) => {
  let start = -Infinity;
  let count = 0;
  const expired = (now: number) => now >= start + w.ms;
  return {
    check(now) {
      if (expired(now) || count < w.limit) return { ok: true };
      return { ok: false, retryAtMs: start + w.ms, resetMs: start + w.ms };
    },
    take(now) {
      if (expired(now)) [start, count] = [now, 0];
      count++;
      return { remaining: w.limit - count, resetMs: start + w.ms };
    },
  };
};
