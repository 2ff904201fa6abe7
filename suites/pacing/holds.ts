/** What `KeyPacer` (pacer.ts) reads of a 429's timing beside its Retry-After. */
import { getHeader } from '../lib/headers.ts';
import type { RateLimitInfo } from '../lib/rate-limit.ts';
import { holdAfter429 } from '../lib/retry-after.ts';
import type { Observation, PacerOptions, RunTraffic } from './pacer-types.ts';

/** An X-RateLimit-Reset in epoch seconds (not a delta, not milliseconds): only then can it be placed in time. */
export function resetUsable(info: RateLimitInfo): boolean {
  return info.reset !== undefined && info.reset >= 1e9 && info.reset <= 1e12;
}

/**
 * The hold after a 429 that says neither how long (Retry-After) nor until when (Reset): a fixed
 * hold, at most `maxWaitMs` the first time, doubled at each such 429 of the run (spec, Limits rule
 * 4: exponential backoff). Uncapped here: `refusalHold` caps it and stops the run past `maxWaitMs`.
 */
export function fixedHoldMs(o: { fallbackHoldMs: number; maxWaitMs: number }, traffic: RunTraffic, atMs: number): number {
  // The 429s of one burst, met while the last fixed hold still holds, are that hold's, not new ones.
  const held = traffic.fixedHoldUntilMs !== undefined && atMs < traffic.fixedHoldUntilMs;
  const n = Math.max(0, (traffic.fixedHolds ?? 0) - (held ? 1 : 0));
  return Math.min(o.fallbackHoldMs, o.maxWaitMs) * 2 ** Math.min(20, n);
}

/**
 * How long a 429 holds its key: its Retry-After (delta-seconds whatever their size), else its
 * Reset, else the run's fixed hold (`fixedHoldMs`), at most `maxWaitMs`. When that backoff would
 * pass `maxWaitMs`, waiting gives no more evidence: `stop` says why, and the run sends nothing more
 * but its restores, once the (capped) hold has passed.
 */
export function refusalHold(
  o: Required<PacerOptions>,
  traffic: RunTraffic,
  obs: Observation,
  info: RateLimitInfo,
): ReturnType<typeof holdAfter429> & { stop?: string } {
  const untilReset =
    info.reset !== undefined && info.dateMs !== undefined && resetUsable(info) ? info.reset - Math.floor(info.dateMs / 1000) : undefined;
  const backoffMs = fixedHoldMs(o, traffic, obs.receivedAtMs);
  const hold = holdAfter429({
    retryAfter: getHeader(obs.headers, 'retry-after'),
    date: getHeader(obs.headers, 'date'),
    receivedAtMs: obs.receivedAtMs,
    secondsUntilReset: untilReset,
    retryAfterMarginMs: o.retryAfterMarginMs,
    resetMarginMs: o.resetMarginMs,
    fallbackMs: Math.min(backoffMs, o.maxWaitMs),
  });
  if (!hold.fixed) return hold;
  if (!(obs.receivedAtMs < (traffic.fixedHoldUntilMs ?? 0))) {
    traffic.fixedHolds = (traffic.fixedHolds ?? 0) + 1;
    traffic.fixedHoldUntilMs = obs.receivedAtMs + hold.holdMs;
  }
  if (backoffMs <= o.maxWaitMs) return hold;
  const s = (ms: number) => `${Math.round(ms / 1000)} s`;
  return {
    ...hold,
    stop:
      `${traffic.fixedHolds} 429s without Retry-After nor a usable X-RateLimit-Reset: the run's backoff (${s(Math.min(o.fallbackHoldMs, o.maxWaitMs))}, doubled at each) ` +
      `would wait ${s(backoffMs)}, longer than ${o.maxWaitVariable}=${s(o.maxWaitMs)}, so waiting gives no more evidence: every key waits ${s(hold.holdMs)}, then only the run's restores are sent`,
  };
}
