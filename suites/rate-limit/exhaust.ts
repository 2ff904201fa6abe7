/**
 * The 429 sequence (spec, Limits rules 3 and 5; Errors, 429): drive one key to its limit, take
 * the 429, wait its Retry-After, send one more. It never earns a ban:
 * - the limit is approached in bursts bounded by what X-RateLimit-Remaining still allows (and by
 *   `maxConcurrency`), so a 1,000-per-minute key is reached over a slow link, and nothing is in
 *   flight when the limit is reached;
 * - the request past the limit is sent alone; after the 429 the run-wide pacer holds the key until
 *   Retry-After has passed, so nothing is sent early, then exactly one request follows.
 * Fixed windows, sliding windows and token buckets are all legitimate: a Remaining that goes back
 * up is a refill or a new window, never a failure. Over-admission is counted over the whole window
 * from its first request, probes included: more 2xx with one X-RateLimit-Reset than its Limit, or
 * a 2xx past Remaining 0 in the same window.
 * It records what it saw; the checks of `retry-after.spec.ts` judge the record, one requirement
 * each. The sender is injected, so the logic is testable without a server.
 */
import { getHeader } from '../lib/headers.ts';
import { parseRateLimitHeaders, secondsUntilReset, type RateLimitInfo } from '../lib/rate-limit.ts';
import { parseRetryAfter, type RetryAfterResult } from '../lib/retry-after.ts';

/** The parts of a response the record keeps (serialisable; already redacted by the client). */
export interface Snapshot {
  label: string;
  status: number;
  headers: Record<string, string>;
  text: string;
  receivedAtMs: number;
}

export interface ExhaustRecord {
  /** `<RATE_LIMIT_KEY>` or `<API_KEY>`. */
  key: string;
  sent: number;
  restarts: number;
  /** Bursts sent and the largest one (concurrency). */
  bursts?: number;
  largestBurst?: number;
  /** Why the sequence could not be completed (the server's answers did not allow it; never a key). */
  aborted?: string;
  /** The harness's own limit or a missing prerequisite: the checks are not certified, with this reason. */
  notCertified?: string;
  /** The key was already at its limit at the first request. */
  alreadyLimited?: boolean;
  /** A 429 while Remaining said at least one was left. */
  earlyRefusal?: string;
  /** More admitted in one window than its Limit (probes included), or a 2xx after Remaining reached 0. */
  overAdmission?: string;
  refused?: Snapshot;
  /** Requests of this sequence still in flight when the 429 arrived (0 unless refused early in a burst). */
  inFlightAtRefusal?: number;
  retryAfter?: RetryAfterResult;
  /** Why no request was sent after the 429 (invalid Retry-After). */
  notRetried?: string;
  /** Retry-After beyond MAX_RETRY_AFTER_S: the wait is not certified (never the server's failure). */
  retryNotCertified?: string;
  /** How long the sequence waited after the 429 before the next request (ms). */
  waitedMs?: number;
  after?: Snapshot;
}

export interface ExhaustOptions {
  key: string;
  maxRequests: number;
  maxRetryAfterS: number;
  maxWindowRestarts?: number;
  /** Most requests in flight at once (default 32). */
  maxConcurrency?: number;
  /**
   * Sends up to `count` requests at once on the key, as many as the run-wide pacer grants (at
   * least one, never past Remaining; a request past the limit only alone) and returns every response.
   */
  sendBurst?: (count: number, evidence: boolean) => Promise<Snapshot[]>;
  /** One request at a time (tests); used when `sendBurst` is not given. */
  send?: (evidence: boolean) => Promise<Snapshot>;
  log?: (line: string) => void;
}

export const rateLimitOf = (s: Snapshot): RateLimitInfo => parseRateLimitHeaders(s.headers);
const ok = (s: Snapshot) => s.status >= 200 && s.status < 300;

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
  private admitted = new Map<number, { count: number; limit: number }>();

  add(s: Snapshot): string | undefined {
    if (!ok(s)) return undefined;
    const info = rateLimitOf(s);
    if (info.reset === undefined || info.reset < 1e9 || info.reset > 1e12 || info.limit === undefined) return undefined;
    // In the last second before Reset (Date and Reset have one-second resolution) a sliding
    // window may already have let its oldest request go while Reset still reads the same: not counted.
    if ((info.dateMs ?? s.receivedAtMs) >= (info.reset - 1) * 1000) return undefined;
    const w = this.admitted.get(info.reset) ?? { count: 0, limit: info.limit };
    w.count++;
    w.limit = Math.max(w.limit, info.limit);
    this.admitted.set(info.reset, w);
    if (w.count > w.limit) {
      return `${w.count} requests admitted in the window ending at X-RateLimit-Reset ${info.reset}, counted from this sequence's first request (probes included), more than X-RateLimit-Limit ${w.limit}`;
    }
    return undefined;
  }
}

export async function exhaust(o: ExhaustOptions): Promise<ExhaustRecord> {
  const log = o.log ?? (() => {});
  const maxRestarts = o.maxWindowRestarts ?? 3;
  const maxConcurrency = Math.max(1, o.maxConcurrency ?? 32);
  /** Bursts in a row that did not bring Remaining down before the sequence gives up (not certified). */
  const maxStalls = 8;
  let stalls = 0;
  const rec: ExhaustRecord = { key: o.key, sent: 0, restarts: 0, bursts: 0, largestBurst: 0 };
  const windows = new WindowCounter();
  const sendBurst =
    o.sendBurst ??
    (async (_count: number, evidence: boolean) => {
      if (!o.send) throw new Error('exhaust: give sendBurst or send');
      return [await o.send(evidence)];
    });
  /** Sends a burst and counts its admissions; returns undefined once over-admission is recorded (nothing more is sent). */
  const burst = async (count: number, evidence = false): Promise<Snapshot[]> => {
    const batch = await sendBurst(count, evidence);
    rec.sent += batch.length;
    rec.bursts!++;
    rec.largestBurst = Math.max(rec.largestBurst!, batch.length);
    for (const s of batch) {
      const over = windows.add(s);
      if (over && !rec.overAdmission) rec.overAdmission = over;
    }
    return batch;
  };

  let [res] = await burst(1, true);
  if (res.status === 429) {
    rec.alreadyLimited = true;
    rec.refused = res;
    rec.inFlightAtRefusal = 0;
  } else if (!ok(res)) {
    rec.aborted = `${res.label}: expected a 2xx before the limit, observed ${res.status}`;
    return rec;
  }

  while (!rec.refused) {
    if (rec.overAdmission) return rec;
    /** Reset at the start of this count: unchanged through it means a fixed window (or a sliding one before any expiry). */
    const startReset = rateLimitOf(res).reset;
    let remaining = rateLimitOf(res).remaining;
    if (remaining === undefined) {
      rec.aborted = `${res.label}: no integer X-RateLimit-Remaining (${rateLimitOf(res).raw.remaining ?? 'none'}); the limit cannot be approached by count`;
      return rec;
    }
    if (remaining + 1 > o.maxRequests - rec.sent) {
      rec.notCertified = `X-RateLimit-Remaining is ${remaining} on ${o.key}, more than MAX_EXHAUST_REQUESTS=${o.maxRequests} allows; use a RATE_LIMIT_KEY on a smaller plan or raise MAX_EXHAUST_REQUESTS`;
      return rec;
    }
    log(`[rate-limit] driving ${o.key} to its limit: ${remaining} requests left in this window, at most ${maxConcurrency} at once`);
    while (remaining > 0) {
      const before = remaining;
      const batch = await burst(Math.min(remaining, maxConcurrency));
      if (rec.overAdmission) return rec;
      const refused = batch.find((s) => s.status === 429);
      if (refused) {
        rec.earlyRefusal = `${refused.label}: refused with 429 while X-RateLimit-Remaining said ${before} left (a burst of ${batch.length})`;
        rec.refused = refused;
        rec.inFlightAtRefusal = batch.filter((s) => s.receivedAtMs > refused.receivedAtMs).length;
        break;
      }
      const bad = batch.find((s) => !ok(s));
      if (bad) {
        rec.aborted = `${bad.label}: expected a 2xx while Remaining was ${before}, observed ${bad.status}`;
        return rec;
      }
      res = tightest(batch);
      const next = rateLimitOf(res).remaining;
      if (next === undefined) {
        rec.aborted = `${res.label}: X-RateLimit-Remaining missing mid-way`;
        return rec;
      }
      if (next >= before) {
        // A new window, or a sliding window / token bucket refilling: legitimate, count on. When
        // it refills as fast as the suite can send, the limit is out of the suite's reach: not certified.
        rec.restarts++;
        if (++stalls > maxStalls) {
          rec.notCertified =
            `X-RateLimit-Remaining on ${o.key} did not go down over ${stalls} bursts of up to ${maxConcurrency} (last ${before} → ${next}): ` +
            'the key refills (or a new window begins) as fast as the suite can send, so its limit was not reached';
          return rec;
        }
        log(`[rate-limit] Remaining went from ${before} to ${next} (a new window or a refill); counting on`);
      } else stalls = 0;
      remaining = next;
      const limit = rateLimitOf(res).limit;
      if (limit !== undefined && rec.sent > 2 * limit + maxConcurrency) {
        rec.notCertified =
          `sent ${rec.sent} requests on ${o.key}, more than twice X-RateLimit-Limit ${limit}, without reaching the limit: ` +
          'the key refills (or a new window begins) as fast as the suite can send';
        return rec;
      }
      if (rec.sent + remaining + 1 > o.maxRequests) {
        rec.notCertified = `sent ${rec.sent} requests without reaching the limit (MAX_EXHAUST_REQUESTS=${o.maxRequests})`;
        return rec;
      }
    }
    if (rec.refused) break;
    // Remaining is 0 and nothing is in flight: the request past the limit, alone.
    const last = res;
    [res] = await burst(1, true);
    if (rec.overAdmission) return rec;
    if (res.status === 429) {
      rec.refused = res;
      rec.inFlightAtRefusal = 0;
      break;
    }
    if (!ok(res)) {
      rec.aborted = `${res.label}: expected 429 past the limit, observed ${res.status}`;
      return rec;
    }
    const a = rateLimitOf(last);
    const b = rateLimitOf(res);
    // Only a window whose Reset held still through the count can be judged: a new Reset is a new
    // window, and a Reset that moved during the count is a sliding window or a token bucket, which
    // may let one more in as soon as it refills (Remaining is rounded down). Legitimate: count again.
    const windowMoved =
      b.reset !== a.reset ||
      a.reset !== startReset ||
      ((b.remaining ?? 0) > 0 && (b.dateMs ?? 0) / 1000 >= (a.reset ?? Infinity) - 1);
    if (windowMoved) {
      if (++rec.restarts > maxRestarts) {
        rec.notCertified =
          `a new window began (or the key refilled) each time Remaining reached 0 on ${o.key} (${rec.restarts} times); ` +
          'the limit was not reached inside one window';
        return rec;
      }
      log('[rate-limit] a new window began (or the key refilled) just as Remaining reached 0; counting again');
      continue;
    }
    rec.overAdmission =
      `${res.label}: admitted after X-RateLimit-Remaining reached 0 (Remaining now ${b.raw.remaining ?? 'missing'}, ` +
      `Reset ${a.raw.reset ?? '-'} → ${b.raw.reset ?? '-'})`;
    return rec;
  }

  const r = rec.refused!;
  const info = rateLimitOf(r);
  rec.retryAfter = parseRetryAfter(getHeader(r.headers, 'retry-after'), getHeader(r.headers, 'date'), {
    secondsUntilReset: secondsUntilReset(info),
    nowMs: r.receivedAtMs,
  });
  if (!rec.retryAfter.ok) {
    rec.notRetried = `no valid Retry-After (${rec.retryAfter.reason}); nothing more was sent on ${o.key}`;
    return rec;
  }
  if (rec.retryAfter.seconds > o.maxRetryAfterS) {
    rec.retryNotCertified = `Retry-After asks for ${Math.ceil(rec.retryAfter.seconds)} s, longer than MAX_RETRY_AFTER_S=${o.maxRetryAfterS}; raise MAX_RETRY_AFTER_S to wait it out. Nothing more was sent on ${o.key}`;
    return rec;
  }
  log(`[rate-limit] 429 received; the pacer holds ${o.key} for Retry-After ${Math.ceil(rec.retryAfter.seconds)} s, then one request`);
  [rec.after] = await burst(1, true);
  rec.waitedMs = rec.after.receivedAtMs - r.receivedAtMs;
  return rec;
}
