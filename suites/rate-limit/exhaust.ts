/**
 * The 429 sequence (spec, Limits rule 3; Errors, 429): drive one key to its limit with
 * sequential requests, take the 429, wait its Retry-After (the sender's pacer holds the key until
 * then, so nothing is sent early), send one more. It records what it saw; the checks of
 * `retry-after.spec.ts` judge the record, one requirement each. The sender is injected, so the
 * logic is testable without a server.
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
  /** Why the sequence could not be completed (never a key). */
  aborted?: string;
  /** The harness's own limit or a missing prerequisite: the checks are not certified, with this reason. */
  notCertified?: string;
  /** The key was already at its limit at the first request. */
  alreadyLimited?: boolean;
  /** A 429 while Remaining said at least one was left. */
  earlyRefusal?: string;
  /** A request admitted after Remaining reached 0, in the same window. */
  overAdmission?: string;
  refused?: Snapshot;
  retryAfter?: RetryAfterResult;
  /** Why no request was sent after the 429 (invalid or too long Retry-After). */
  notRetried?: string;
  /** How long the sequence waited after the 429 before the next request (ms). */
  waitedMs?: number;
  after?: Snapshot;
}

export interface ExhaustOptions {
  key: string;
  maxRequests: number;
  maxRetryAfterS: number;
  maxWindowRestarts?: number;
  /** Sends one request on the key (the client paces it and honours Retry-After). */
  send: (evidence: boolean) => Promise<Snapshot>;
  log?: (line: string) => void;
}

export const rateLimitOf = (s: Snapshot): RateLimitInfo => parseRateLimitHeaders(s.headers);
const ok = (s: Snapshot) => s.status >= 200 && s.status < 300;

export async function exhaust(o: ExhaustOptions): Promise<ExhaustRecord> {
  const log = o.log ?? (() => {});
  const maxRestarts = o.maxWindowRestarts ?? 3;
  const rec: ExhaustRecord = { key: o.key, sent: 0, restarts: 0 };
  const send = async (evidence = false) => {
    rec.sent++;
    return o.send(evidence);
  };

  let res = await send(true);
  if (res.status === 429) {
    rec.alreadyLimited = true;
    rec.refused = res;
  } else if (!ok(res)) {
    rec.aborted = `${res.label}: expected a 2xx before the limit, observed ${res.status}`;
    return rec;
  }

  while (!rec.refused) {
    let remaining = rateLimitOf(res).remaining;
    if (remaining === undefined) {
      rec.aborted = `${res.label}: no integer X-RateLimit-Remaining (${rateLimitOf(res).raw.remaining ?? 'none'}); the limit cannot be approached by count`;
      return rec;
    }
    if (remaining > o.maxRequests - rec.sent) {
      rec.aborted = `X-RateLimit-Remaining is ${remaining} on ${o.key}, more than MAX_EXHAUST_REQUESTS=${o.maxRequests} allows; use a RATE_LIMIT_KEY on a smaller plan or raise MAX_EXHAUST_REQUESTS`;
      return rec;
    }
    log(`[rate-limit] driving ${o.key} to its limit: ${remaining} requests left in this window`);
    while (remaining > 0) {
      const before = remaining;
      res = await send();
      if (res.status === 429) {
        rec.earlyRefusal = `${res.label}: refused with 429 while X-RateLimit-Remaining said ${before} left`;
        rec.refused = res;
        break;
      }
      if (!ok(res)) {
        rec.aborted = `${res.label}: expected a 2xx while Remaining was ${before}, observed ${res.status}`;
        return rec;
      }
      const next = rateLimitOf(res).remaining;
      if (next === undefined) {
        rec.aborted = `${res.label}: X-RateLimit-Remaining missing mid-way`;
        return rec;
      }
      if (next >= before) {
        if (++rec.restarts > maxRestarts) {
          rec.aborted = `X-RateLimit-Remaining on ${o.key} went back up ${rec.restarts} times (${before} → ${next}); the limit was not reached inside one window`;
          return rec;
        }
        log(`[rate-limit] the window reset (Remaining ${before} → ${next}); counting again`);
      }
      remaining = next;
      if (rec.sent >= o.maxRequests) {
        rec.aborted = `sent ${rec.sent} requests without reaching the limit (MAX_EXHAUST_REQUESTS=${o.maxRequests})`;
        return rec;
      }
    }
    if (rec.refused) break;
    const last = res;
    res = await send(true);
    if (res.status === 429) {
      rec.refused = res;
      break;
    }
    if (!ok(res)) {
      rec.aborted = `${res.label}: expected 429 past the limit, observed ${res.status}`;
      return rec;
    }
    const a = rateLimitOf(last);
    const b = rateLimitOf(res);
    const windowMoved =
      (b.remaining ?? 0) > 0 && (b.reset !== a.reset || (b.dateMs ?? 0) / 1000 >= (a.reset ?? Infinity) - 1);
    if (windowMoved) {
      if (++rec.restarts > maxRestarts) {
        rec.aborted = `a new window began each time Remaining reached 0 on ${o.key} (${rec.restarts} times); the limit was not reached inside one window`;
        return rec;
      }
      log('[rate-limit] a new window began just as Remaining reached 0; counting again');
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
    rec.notRetried = `Retry-After asks for ${Math.ceil(rec.retryAfter.seconds)} s, longer than MAX_RETRY_AFTER_S=${o.maxRetryAfterS}; raise MAX_RETRY_AFTER_S to wait it out. Nothing more was sent on ${o.key}`;
    return rec;
  }
  log(`[rate-limit] 429 received; waiting Retry-After ${Math.ceil(rec.retryAfter.seconds)} s before the next request on ${o.key}`);
  rec.after = await send(true);
  rec.waitedMs = rec.after.receivedAtMs - r.receivedAtMs;
  return rec;
}
