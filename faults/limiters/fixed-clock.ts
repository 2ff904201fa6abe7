/**
 * Fixed window aligned to the clock, as gateways count per calendar minute: every key's window is
 * [k·W, (k+1)·W) on the server's clock. Remaining counts the requests since the window's start;
 * Reset is the window's end, the same for every key; after the limit a whole window of requests
 * is admitted at Reset, so `Retry-After` is the time until it.
 */
import type { Algorithm } from './limiter.ts';

export const fixedClock: Algorithm = (w) => {
  let start = -1;
  let count = 0;
  const roll = (now: number) => {
    const s = now - (now % w.ms);
    if (s !== start) [start, count] = [s, 0];
  };
  return {
    check(now) {
      roll(now);
      return count < w.limit ? { ok: true } : { ok: false, retryAtMs: start + w.ms, resetMs: start + w.ms };
    },
    take(now) {
      roll(now);
      count++;
      return { remaining: w.limit - count, resetMs: start + w.ms };
    },
  };
};
