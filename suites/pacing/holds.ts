/** What `KeyPacer` (pacer.ts) reads of a 429's timing beside its Retry-After. */
import type { RateLimitInfo } from '../lib/rate-limit.ts';
import type { RunTraffic } from './pacer-types.ts';

/** An X-RateLimit-Reset in epoch seconds (not a delta, not milliseconds): only then can it be placed in time. */
export function resetUsable(info: RateLimitInfo): boolean {
  return info.reset !== undefined && info.reset >= 1e9 && info.reset <= 1e12;
}

/**
 * The hold after a 429 that says neither how long (Retry-After) nor until when (Reset): a fixed
 * hold, at most `maxWaitMs` the first time, doubled at each such 429 of the run (spec, Limits rule
 * 4: exponential backoff); one past `maxWaitMs` closes the keys: waiting gives no more evidence.
 */
export function fixedHoldMs(o: { fallbackHoldMs: number; maxWaitMs: number }, traffic: RunTraffic, atMs: number): number {
  // The 429s of one burst, met while the last fixed hold still holds, are that hold's, not new ones.
  const held = traffic.fixedHoldUntilMs !== undefined && atMs < traffic.fixedHoldUntilMs;
  const n = Math.max(0, (traffic.fixedHolds ?? 0) - (held ? 1 : 0));
  return Math.min(o.fallbackHoldMs, o.maxWaitMs) * 2 ** Math.min(20, n);
}
