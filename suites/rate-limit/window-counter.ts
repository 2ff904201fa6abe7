/** The answers a 429 sequence keeps, and its count of 2xx per window (spec, Limits rule 3). */
import { parseRateLimitHeaders, type RateLimitInfo } from '../lib/rate-limit.ts';
/** The parts of a response the record keeps (serialisable; already redacted by the client). */
export interface Snapshot {
  label: string;
  status: number;
  headers: Record<string, string>;
  text: string;
  receivedAtMs: number;
  /** A curl command reproducing the request (keys written as `$API_KEY`), for the failure that cites this answer. */
  curl?: string;
}

export const rateLimitOf = (s: Snapshot): RateLimitInfo => parseRateLimitHeaders(s.headers);
export const ok = (s: Snapshot) => s.status >= 200 && s.status < 300;

/** The response that says least is left in the newest window among `batch` (by Reset, then Remaining). */
export function tightest(batch: readonly Snapshot[]): Snapshot {
  return [...batch].sort((a, b) => {
    const ra = rateLimitOf(a);
    const rb = rateLimitOf(b);
    if ((rb.reset ?? 0) !== (ra.reset ?? 0)) return (rb.reset ?? 0) - (ra.reset ?? 0);
    return (ra.remaining ?? Infinity) - (rb.remaining ?? Infinity);
  })[0];
}

/**
 * Counts 2xx per window (same X-RateLimit-Reset, epoch seconds) from the sequence's first
 * request; returns the over-admission found, if any.
 */
export class WindowCounter {
  private admitted = new Map<number, { count: number; limit: number; uncounted: number }>();

  add(s: Snapshot): string | undefined {
    const info = rateLimitOf(s);
    if (!ok(s)) return undefined;
    if (info.reset === undefined || info.reset < 1e9 || info.reset > 1e12 || info.limit === undefined) return undefined;
    const w = this.admitted.get(info.reset) ?? { count: 0, limit: info.limit, uncounted: 0 };
    this.admitted.set(info.reset, w);
    // In the last second before Reset (Date and Reset have one-second resolution) a sliding
    // window may already have let its oldest request go while Reset still reads the same: not
    // counted. Without the server's Date, Reset cannot be placed on its clock: not counted either.
    if (info.dateMs === undefined || info.dateMs >= (info.reset - 1) * 1000) {
      w.uncounted++;
      return undefined;
    }
    w.count++;
    w.limit = Math.max(w.limit, info.limit);
    if (w.count > w.limit) {
      return `${w.count} requests admitted in the window ending at X-RateLimit-Reset ${info.reset}, counted from this sequence's first request (probes included), more than X-RateLimit-Limit ${w.limit}`;
    }
    return undefined;
  }

  /**
   * Why the window ending at `reset` may have admitted more than its Limit without the count
   * showing it: within the Limit as counted, beyond it with the answers of its last second (or
   * without a Date) that `add` leaves out. Undefined when the count settles it either way.
   */
  unconfirmed(reset: number | undefined): string | undefined {
    const w = reset === undefined ? undefined : this.admitted.get(reset);
    if (!w || w.count > w.limit || w.count + w.uncounted <= w.limit) return undefined;
    return (
      `${w.count} requests counted as admitted in the window ending at X-RateLimit-Reset ${reset} and ${w.uncounted} more answered in its last second ` +
      `(or without a Date), when a sliding window may already have freed some: whether it admitted more than X-RateLimit-Limit ${w.limit} cannot be told ` +
      '(the answers came late in the window: a busy runner or a slow link)'
    );
  }
}
