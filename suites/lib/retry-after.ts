/**
 * `Retry-After` (RFC 9110 §10.2.3): `delta-seconds` (`1*DIGIT`, `0` valid) or an HTTP-date in
 * any of the three formats, judged against the response's `Date`. Pure functions.
 */
import { parseHttpDate, type HttpDateFormat } from './http-date.ts';

export type RetryAfterResult =
  | {
      ok: true;
      /** Seconds to wait from the moment the response was received (never negative). */
      seconds: number;
      kind: 'delta' | 'date';
      format?: HttpDateFormat;
      /** What an HTTP-date was judged against: the response `Date`, or the local clock when `Date` is absent. */
      basis?: 'date-header' | 'local-clock';
    }
  | { ok: false; reason: string };

export interface RetryAfterContext {
  /** Seconds until `X-RateLimit-Reset` as judged against `Date`, when known: used to spot milliseconds. */
  secondsUntilReset?: number;
  /** The local clock, for an HTTP-date when the response has no `Date` (default `Date.now()`). */
  nowMs?: number;
}

/**
 * Parses and judges a `Retry-After` value. Rejects `2.0`, negative numbers, units, values that
 * look like milliseconds (about 1000 times the time left until `X-RateLimit-Reset`), and
 * malformed dates. Delta-seconds are seconds whatever their size (RFC 9110 §10.2.3): a large
 * value is never taken for a timestamp. How long a sender waits is `retryAfterWaitSeconds`.
 */
export function parseRetryAfter(
  value: string | undefined,
  dateHeader: string | undefined,
  context: RetryAfterContext = {},
): RetryAfterResult {
  if (value === undefined) return { ok: false, reason: 'Retry-After is missing' };
  const v = value.trim();
  if (v === '') return { ok: false, reason: 'Retry-After is empty' };
  if (/^\d+$/.test(v)) {
    const seconds = Number(v);
    const reset = context.secondsUntilReset;
    if (seconds >= 1000 && reset !== undefined && reset >= 0 && seconds > reset * 100 + 100 && Math.abs(seconds / 1000 - reset) <= 2) {
      return {
        ok: false,
        reason: `Retry-After "${v}" looks like milliseconds (X-RateLimit-Reset is ${reset} s away)`,
      };
    }
    return { ok: true, seconds, kind: 'delta' };
  }
  if (/^[+-]?\d*\.\d*$|^-\d+$|^\+\d+$/.test(v)) {
    return { ok: false, reason: `Retry-After "${v}" is not delta-seconds (1*DIGIT): no sign, no fraction` };
  }
  if (/^\d+\s*[a-z]+$/i.test(v)) {
    return { ok: false, reason: `Retry-After "${v}" carries a unit; delta-seconds is bare digits` };
  }
  const local = context.nowMs ?? Date.now();
  const date = parseHttpDate(v, local);
  if (!date) return { ok: false, reason: `Retry-After "${v}" is neither delta-seconds nor an HTTP-date` };
  const responseDate = parseHttpDate(dateHeader, local);
  const basisMs = responseDate ? responseDate.ms : local;
  return {
    ok: true,
    seconds: Math.max(0, (date.ms - basisMs) / 1000),
    kind: 'date',
    format: date.format,
    basis: responseDate ? 'date-header' : 'local-clock',
  };
}

/**
 * How long a sender waits after a 429, in seconds (RFC 9110 §10.2.3; Errors, 429: "the client
 * must wait for the time given in the `Retry-After` header"): delta-seconds are seconds whatever
 * their size (even those `parseRetryAfter` judges to look like milliseconds: waiting longer never
 * earns a ban); an HTTP-date is judged against `Date`. `undefined` when there is no usable value.
 */
export function retryAfterWaitSeconds(value: string | undefined, dateHeader: string | undefined, nowMs = Date.now()): number | undefined {
  const v = value?.trim();
  if (v === undefined || v === '') return undefined;
  if (/^\d+$/.test(v)) return Number(v);
  const parsed = parseRetryAfter(v, dateHeader, { nowMs });
  return parsed.ok ? parsed.seconds : undefined;
}

/** What `holdAfter429` reads of one 429, and the margins of its caller. */
export interface HoldInput {
  retryAfter: string | undefined;
  date: string | undefined;
  /** When the 429 arrived (local clock, ms). */
  receivedAtMs: number;
  /** Seconds until `X-RateLimit-Reset` as judged against `Date`, when known and usable. */
  secondsUntilReset: number | undefined;
  /** Added to a `Retry-After` wait (the wait counts from the 429's arrival, after the server wrote it). */
  retryAfterMarginMs: number;
  /** Added to a wait until the reported reset. */
  resetMarginMs: number;
  /** The hold without a usable `Retry-After` nor reset (a conservative minute). */
  fallbackMs: number;
}

/**
 * How long a key is held after a 429, one rule for the pacer that enforces it and the checks that
 * wait by it (Errors, 429: "the client must wait for the time given in the `Retry-After` header";
 * RFC 9110 §10.2.3): its `Retry-After` (delta-seconds whatever their size, `retryAfterWaitSeconds`)
 * plus a margin; without a usable one, until the reported reset plus a margin; else the fallback.
 * `parsed` is the value as judged (`parseRetryAfter`), for the checks that report it.
 */
export function holdAfter429(o: HoldInput): { holdMs: number; parsed: RetryAfterResult; fixed?: true } {
  const parsed = parseRetryAfter(o.retryAfter, o.date, { secondsUntilReset: o.secondsUntilReset, nowMs: o.receivedAtMs });
  const waitS = retryAfterWaitSeconds(o.retryAfter, o.date, o.receivedAtMs);
  if (waitS !== undefined) return { holdMs: waitS * 1000 + o.retryAfterMarginMs, parsed };
  const reset = o.secondsUntilReset;
  if (reset !== undefined && reset > 0) return { holdMs: reset * 1000 + o.resetMarginMs, parsed };
  // Neither says how long: a fixed hold (`fixed`), stated by the caller.
  return { holdMs: o.fallbackMs, parsed, fixed: true };
}
