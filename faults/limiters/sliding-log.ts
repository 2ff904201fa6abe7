/**
 * Sliding log, as a sorted set of timestamps per key: a request is admitted when fewer than Limit
 * admitted requests lie in the last window length. Remaining counts the slots left in that log;
 * Reset is the moment the oldest logged request leaves the window, freeing one slot (a burst at
 * Reset finds the rest of the log, the client's own earlier requests included, still counted);
 * `Retry-After` after a refusal is that same moment.
 */
import type { Algorithm } from './limiter.ts';

export const slidingLog: Algorithm = (w) => {
  let log: number[] = [];
  const prune = (now: number) => {
    let i = 0;
    while (i < log.length && log[i]! + w.ms <= now) i++;
    if (i) log = log.slice(i);
  };
  return {
    check(now) {
      prune(now);
      if (log.length < w.limit) return { ok: true };
      return { ok: false, retryAtMs: log[0]! + w.ms, resetMs: log[0]! + w.ms };
    },
    take(now) {
      prune(now);
      log.push(now);
      return { remaining: w.limit - log.length, resetMs: log[0]! + w.ms };
    },
  };
};
