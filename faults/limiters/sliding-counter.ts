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

/** The counts of the current and the previous clock-aligned window, rolled at each request. */
interface Counts {
  start: number;
  previous: number;
  current: number;
}

/** Moves `c` to the window holding `now`: the current count becomes the previous one, or both start over. */
function roll(c: Counts, ms: number, now: number): void {
  const s = now - (now % ms);
  if (s === c.start) return;
  [c.previous, c.current] = s === c.start + ms ? [c.current, 0] : [0, 0];
  c.start = s;
}

/** What a counter kind decides over the counts: the weighted count, the first moment with room, Remaining. */
interface Weighing {
  weighted(c: Counts, t: number): number;
  firstRoom(c: Counts, now: number): number;
  remaining(c: Counts, now: number): number;
}

/** A sliding-window counter: a request is admitted when one more stays within Limit; Reset is the current window's end. */
function counterLimiter(w: Parameters<Algorithm>[0], k: Weighing): ReturnType<Algorithm> {
  const c: Counts = { start: -Infinity, previous: 0, current: 0 };
  return {
    check(now) {
      roll(c, w.ms, now);
      if (k.weighted(c, now) + 1 <= w.limit) return { ok: true };
      return { ok: false, retryAtMs: k.firstRoom(c, now), resetMs: c.start + w.ms };
    },
    take(now) {
      roll(c, w.ms, now);
      c.current++;
      return { remaining: k.remaining(c, now), resetMs: c.start + w.ms };
    },
  };
}

export const slidingCounter: Algorithm = (w) => {
  /** Requests counted at `t` (same or following window of the current state), without rolling it. */
  const weighted = (c: Counts, t: number) => {
    const s = t - (t % w.ms);
    const [prev, cur] = s === c.start ? [c.previous, c.current] : s === c.start + w.ms ? [c.current, 0] : [0, 0];
    return Math.floor(prev * (1 - (t - s) / w.ms)) + cur;
  };
  /** First moment from `now` at which one more request fits. */
  const firstRoom = (c: Counts, now: number) => {
    const nextStart = c.start + w.ms;
    const inCurrent = c.previous > 0 ? c.start + Math.floor(w.ms * (1 - (w.limit - c.current) / c.previous)) : nextStart;
    const inNext = c.current > 0 ? nextStart + Math.floor(w.ms * (1 - w.limit / c.current)) : nextStart;
    let t = Math.max(now, c.current < w.limit && inCurrent < nextStart ? inCurrent : Math.max(nextStart, inNext));
    while (weighted(c, t) + 1 > w.limit) t++; // float rounding: step to the exact millisecond
    return t;
  };
  return counterLimiter(w, { weighted, firstRoom, remaining: (c, now) => Math.max(0, w.limit - weighted(c, now)) });
};

/**
 * The same counter with the weight kept exact (`previous × (1 − p) + current`, a fraction) and
 * Remaining rounded to the nearest integer, as the limiter notes describe a hosted counter
 * ("Limit − (previous × (1 − elapsed/W) + current), rounded"): a request is admitted when one more
 * stays within Limit, so after `Remaining: 1` (a weighted count of, say, Limit − 0.6) the next
 * request can be refused while the previous window still weighs.
 */
export const slidingCounterRounded: Algorithm = (w) => {
  const weighted = (c: Counts, t: number) => c.previous * (1 - (t - c.start) / w.ms) + c.current;
  /** First millisecond from `now` at which one more request fits (in this window or, failing that, the next one). */
  const firstRoom = (c: Counts, now: number) => {
    const nextStart = c.start + w.ms;
    let t = now;
    while (t < nextStart && weighted(c, t) + 1 > w.limit) t++;
    if (t < nextStart) return t;
    const inNext = (u: number) => c.current * (1 - (u - nextStart) / w.ms) + 1 > w.limit;
    for (t = nextStart; inNext(t); t++);
    return t;
  };
  return counterLimiter(w, { weighted, firstRoom, remaining: (c, now) => Math.max(0, Math.round(w.limit - weighted(c, now))) });
};
