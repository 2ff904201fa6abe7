/**
 * Sliding-window counter, as CDNs and hosted limiters build it (Cloudflare's, Upstash's
 * `slidingWindow`): counters per clock-aligned window; a request at a fraction p of the current
 * window sees floor(previous × (1 − p)) + current requests, and is admitted when one more stays
 * within Limit. Remaining is Limit minus that weighted count; Reset is the current window's end;
 * right after Reset the previous window still weighs on the new one, so Remaining can be well
 * below Limit. `Retry-After` is the first millisecond at which the weight has fallen far enough for
 * one more request.
 */
import type { Algorithm } from './limiter.ts';

export const slidingCounter: Algorithm = (w) => {
  let start = -Infinity;
  let previous = 0;
  let current = 0;
  const roll = (now: number) => {
    const s = now - (now % w.ms);
    if (s === start) return;
    [previous, current] = s === start + w.ms ? [current, 0] : [0, 0];
    start = s;
  };
  /** Requests counted at `t` (same or following window of the current state), without rolling it. */
  const weighted = (t: number) => {
    const s = t - (t % w.ms);
    const [prev, cur] = s === start ? [previous, current] : s === start + w.ms ? [current, 0] : [0, 0];
    return Math.floor(prev * (1 - (t - s) / w.ms)) + cur;
  };
  /** First moment from `now` at which one more request fits. */
  const firstRoom = (now: number) => {
    const nextStart = start + w.ms;
    const inCurrent = previous > 0 ? start + Math.floor(w.ms * (1 - (w.limit - current) / previous)) : nextStart;
    const inNext = current > 0 ? nextStart + Math.floor(w.ms * (1 - w.limit / current)) : nextStart;
    let t = Math.max(now, current < w.limit && inCurrent < nextStart ? inCurrent : Math.max(nextStart, inNext));
    while (weighted(t) + 1 > w.limit) t++; // float rounding: step to the exact millisecond
    return t;
  };
  return {
    check(now) {
      roll(now);
      if (weighted(now) + 1 <= w.limit) return { ok: true };
      return { ok: false, retryAtMs: firstRoom(now), resetMs: start + w.ms };
    },
    take(now) {
      roll(now);
      current++;
      return { remaining: Math.max(0, w.limit - weighted(now)), resetMs: start + w.ms };
    },
  };
};

/**
 * The same counter with the weight kept exact (`previous × (1 − p) + current`, a fraction) and
 * Remaining rounded to the nearest integer, as the limiter notes describe a hosted counter
 * ("Limit − (previous × (1 − elapsed/W) + current), rounded"): a request is admitted when one more
 * stays within Limit, so after `Remaining: 1` (a weighted count of, say, Limit − 0.6) the next
 * request can be refused while the previous window still weighs.
 */
export const slidingCounterRounded: Algorithm = (w) => {
  let start = -Infinity;
  let previous = 0;
  let current = 0;
  const roll = (now: number) => {
    const s = now - (now % w.ms);
    if (s === start) return;
    [previous, current] = s === start + w.ms ? [current, 0] : [0, 0];
    start = s;
  };
  const weighted = (t: number) => previous * (1 - (t - start) / w.ms) + current;
  /** First millisecond from `now` at which one more request fits (in this window or, failing that, the next one). */
  const firstRoom = (now: number) => {
    const nextStart = start + w.ms;
    let t = now;
    while (t < nextStart && weighted(t) + 1 > w.limit) t++;
    if (t < nextStart) return t;
    const inNext = (u: number) => current * (1 - (u - nextStart) / w.ms) + 1 > w.limit;
    for (t = nextStart; inNext(t); t++);
    return t;
  };
  return {
    check(now) {
      roll(now);
      if (weighted(now) + 1 <= w.limit) return { ok: true };
      return { ok: false, retryAtMs: firstRoom(now), resetMs: start + w.ms };
    },
    take(now) {
      roll(now);
      current++;
      return { remaining: Math.max(0, Math.round(w.limit - weighted(now))), resetMs: start + w.ms };
    },
  };
};
