/**
 * Self-pacing of the suite (safety rules: never meet an unplanned 429, never send a request after
 * a 429 before its `Retry-After` has passed). Pure logic with an injected clock: the fixture owns
 * one `Pacer` per key per worker, sleeps for `plan().waitMs`, then reports every response to
 * `observe()`.
 */
import { getHeader, type HeaderSource } from './headers.ts';
import { parseRateLimitHeaders } from './rate-limit.ts';
import { parseRetryAfter } from './retry-after.ts';

export interface PacerOptions {
  /** Requests kept in hand: a request that would bring Remaining below this waits for the reset. */
  reserve: number;
  /** Longest wait the pacer accepts before it refuses (fails the test) instead of waiting. */
  maxWaitMs: number;
  /** Added to a wait for `X-RateLimit-Reset` (Reset and `Date` have one-second resolution). */
  resetMarginMs?: number;
  /**
   * Added to a wait for `Retry-After` (default 250 ms). The wait counts from when the 429
   * arrived, after the server wrote it, so no margin is needed for safety; the suites' fixture
   * uses 20 ms so that a rounded-down Retry-After stays detectable (RL-08).
   */
  retryAfterMarginMs?: number;
  /** How the key is named in messages, e.g. `<API_KEY>`; never the key. */
  label: string;
  /** Name of the variable that raises `maxWaitMs`, for messages. */
  maxWaitVariable?: string;
}

/** `paced` keeps the reserve; `exhaust` (the 429 checks) spends it, but still honours Retry-After. */
export type PaceMode = 'paced' | 'exhaust';

export interface PacePlan {
  waitMs: number;
  reason?: string;
}

export interface Observation {
  status: number;
  headers: HeaderSource;
  /** Local clock when the response arrived. */
  receivedAtMs: number;
}

export interface ObserveResult {
  /** Present for a 429: how long the pacer now holds every request on this key. */
  blockedForMs?: number;
  /** Present for a 429 whose Retry-After is missing or invalid. */
  retryAfterProblem?: string;
}

export class PacerWaitTooLong extends Error {}

export class Pacer {
  readonly options: Required<PacerOptions>;
  private remaining?: number;
  private resetServerMs?: number;
  private skewMs = 0;
  private blockedUntilMs = 0;
  private inflight = 0;

  constructor(options: PacerOptions) {
    this.options = { resetMarginMs: 1000, retryAfterMarginMs: 250, maxWaitVariable: 'MAX_RETRY_AFTER_S', ...options };
  }

  /** How long to wait (local ms) before the next request in `mode`. Throws `PacerWaitTooLong` past `maxWaitMs`. */
  plan(nowMs: number, mode: PaceMode = 'paced'): PacePlan {
    let waitMs = 0;
    let reason: string | undefined;
    if (this.blockedUntilMs > nowMs) {
      waitMs = this.blockedUntilMs - nowMs;
      reason = `a 429 on ${this.options.label} asked to wait (Retry-After)`;
    }
    if (mode === 'paced' && this.remaining !== undefined && this.resetServerMs !== undefined) {
      const left = this.remaining - this.inflight;
      if (left <= this.options.reserve) {
        const untilReset = this.resetServerMs - (nowMs + this.skewMs) + this.options.resetMarginMs;
        if (untilReset > waitMs) {
          waitMs = untilReset;
          reason =
            `X-RateLimit-Remaining ${this.remaining} on ${this.options.label} is at the reserve of ` +
            `${this.options.reserve}; waiting for X-RateLimit-Reset`;
        }
      }
    }
    if (waitMs > this.options.maxWaitMs) {
      throw new PacerWaitTooLong(
        `${reason}: ${Math.ceil(waitMs / 1000)} s is longer than ${this.options.maxWaitVariable}=` +
          `${Math.round(this.options.maxWaitMs / 1000)} s; raise ${this.options.maxWaitVariable} or use a key with ` +
          `more requests left`,
      );
    }
    return { waitMs: Math.max(0, Math.ceil(waitMs)), reason };
  }

  /** After waiting `plan().waitMs`: a reset wait is over, so what Remaining was is no longer known. */
  waited(nowMs: number): void {
    if (this.resetServerMs !== undefined && nowMs + this.skewMs >= this.resetServerMs) {
      this.remaining = undefined;
      this.resetServerMs = undefined;
    }
  }

  /** A request is on the wire. */
  begin(): void {
    this.inflight++;
  }

  /** A request ended without a response (network error). */
  abort(): void {
    this.inflight = Math.max(0, this.inflight - 1);
  }

  /** Every response on this key, 429 included. */
  observe(obs: Observation): ObserveResult {
    this.inflight = Math.max(0, this.inflight - 1);
    const info = parseRateLimitHeaders(obs.headers);
    if (info.dateMs !== undefined) this.skewMs = info.dateMs - obs.receivedAtMs;
    if (info.remaining !== undefined && info.reset !== undefined && info.reset >= 1e9 && info.reset <= 1e12) {
      const resetMs = info.reset * 1000;
      if (this.resetServerMs === resetMs && this.remaining !== undefined) {
        this.remaining = Math.min(this.remaining, info.remaining);
      } else {
        this.remaining = info.remaining;
        this.resetServerMs = resetMs;
      }
    }
    if (obs.status !== 429) return {};
    const untilReset =
      info.reset !== undefined && info.dateMs !== undefined ? info.reset - Math.floor(info.dateMs / 1000) : undefined;
    const retryAfter = parseRetryAfter(getHeader(obs.headers, 'retry-after'), getHeader(obs.headers, 'date'), {
      secondsUntilReset: untilReset,
      nowMs: obs.receivedAtMs,
    });
    let blockedForMs: number;
    let retryAfterProblem: string | undefined;
    if (retryAfter.ok) {
      blockedForMs = retryAfter.seconds * 1000 + this.options.retryAfterMarginMs;
    } else {
      retryAfterProblem = retryAfter.reason;
      // No usable Retry-After: hold until the reported reset, else a conservative minute.
      blockedForMs =
        untilReset !== undefined && untilReset > 0 ? untilReset * 1000 + this.options.resetMarginMs : 60_000;
    }
    this.blockedUntilMs = Math.max(this.blockedUntilMs, obs.receivedAtMs + blockedForMs);
    return { blockedForMs, retryAfterProblem };
  }

  /** Local time until which every request on this key is held (0 when not held). */
  get blockedUntil(): number {
    return this.blockedUntilMs;
  }

  /** Last known Remaining, for evidence and the 429 checks. */
  get lastRemaining(): number | undefined {
    return this.remaining;
  }
}
