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
 * 4: exponential backoff), and how many such holds came before it.
 */
export function fixedHoldMs(
  o: { fallbackHoldMs: number; maxWaitMs: number },
  traffic: RunTraffic,
  atMs: number,
): { ms: number; before: number } {
  // The 429s of one burst, met while the last fixed hold still holds, are that hold's, not new ones.
  const held = traffic.fixedHoldUntilMs !== undefined && atMs < traffic.fixedHoldUntilMs;
  const before = Math.max(0, (traffic.fixedHolds ?? 0) - (held ? 1 : 0));
  return { ms: Math.min(o.fallbackHoldMs, o.maxWaitMs) * 2 ** Math.min(20, before), before };
}

/**
 * How long a 429 holds its key: its Retry-After (delta-seconds whatever their size), else its
 * Reset, else the run's fixed hold (`fixedHoldMs`), at most `maxWaitMs`. Such a 429 once more after
 * the first fixed hold has passed shows that waiting gives no more evidence (the refusal outlasts
 * the run's backoff): `stop` says why, and the run sends nothing more but its restores, once that
 * (doubled, capped) hold has passed. The run's fixed waits are so bounded by twice `maxWaitMs`.
 */
export function refusalHold(
  o: Required<PacerOptions>,
  traffic: RunTraffic,
  obs: Observation,
  info: RateLimitInfo,
): ReturnType<typeof holdAfter429> & { stop?: string } {
  const untilReset =
    info.reset !== undefined && info.dateMs !== undefined && resetUsable(info) ? info.reset - Math.floor(info.dateMs / 1000) : undefined;
  const backoff = fixedHoldMs(o, traffic, obs.receivedAtMs);
  const hold = holdAfter429({
    retryAfter: getHeader(obs.headers, 'retry-after'),
    date: getHeader(obs.headers, 'date'),
    receivedAtMs: obs.receivedAtMs,
    secondsUntilReset: untilReset,
    retryAfterMarginMs: o.retryAfterMarginMs,
    resetMarginMs: o.resetMarginMs,
    fallbackMs: Math.min(backoff.ms, o.maxWaitMs),
  });
  if (!hold.fixed) return hold;
  if (!(obs.receivedAtMs < (traffic.fixedHoldUntilMs ?? 0))) {
    traffic.fixedHolds = (traffic.fixedHolds ?? 0) + 1;
    traffic.fixedHoldUntilMs = obs.receivedAtMs + hold.holdMs;
  }
  if (backoff.before === 0) return hold;
  const s = (ms: number) => `${Math.round(ms / 1000)} s`;
  return {
    ...hold,
    stop:
      `a 429 without Retry-After nor a usable X-RateLimit-Reset came again after the run's hold of ${s(Math.min(o.fallbackHoldMs, o.maxWaitMs))} had passed ` +
      `(${traffic.fixedHolds} such holds), so waiting gives no more evidence: every key waits ${s(hold.holdMs)} (the hold doubled, at most ${o.maxWaitVariable}=${s(o.maxWaitMs)}), then only the run's restores are sent`,
  };
}
