/**
 * The rate-limit state of one key and the decision "may N more requests be sent now?" (spec,
 * Limits rules 1-5; Errors, 429). Pure logic with an injected clock: the run's coordinator
 * (`coordinator.ts`) owns one `KeyPacer` per key label and is the only place this state lives.
 *
 * - Nothing is granted while a 429 on the key is pending (its Retry-After, or the reported reset,
 *   or a fixed, stated hold when neither is usable, at most `maxWaitMs`).
 * - With usable headers (integer Remaining, Reset in epoch seconds) grants are bounded by
 *   Remaining minus what is in flight: `paced` keeps a reserve, `exhaust` spends it. With nothing
 *   in flight, an `exhaust` grant may add the single request past the limit: a caller asking
 *   `count > Remaining` gets the burst of `Remaining + 1` (sent together, nothing follows until
 *   the answers are in); `count ≤ Remaining` drives the key to 0, then the request past the
 *   limit alone. After a 429 its Remaining did not predict, the request past the limit goes only
 *   alone (a second early refusal in a burst could reach the server after the first 429).
 * - With missing or malformed headers: one request at a time, at the nominal rate per minute.
 * - A wait longer than `maxWaitMs` is `not-certified`; a 429's (Retry-After, RFC 9110 §10.2.3) or
 *   a run-wide hold's closes the key: only restores (`GrantRequest.restore`) go on it after that.
 * - A 429 that the key's own X-RateLimit-Remaining did not predict (Remaining unknown, or more
 *   than the requests in flight) says the key may not be the unit of the limit: `observe` answers
 *   `holdAll`, and the coordinator holds every key of the run (`hold`) until its Retry-After.
 * - A count the run cannot read as the key's own (`untrusted`: Remaining fell with the run's other
 *   keys' requests, or a counted 2xx showed Remaining at Limit twice in a row) makes the run's keys
 *   one bucket: one request at a time on every key, and every 429 on any key holds them all. A
 *   fall beyond everything the run sent (another client on the key) does so for that key alone.
 */
import { getHeader } from '../lib/headers.ts';
import { parseRateLimitHeaders, type RateLimitInfo } from '../lib/rate-limit.ts';
import { refusalHold, resetUsable } from './holds.ts';
import type { Decision, GrantRequest, KeyReport, Observation, ObserveResult, PaceMode, PacerOptions, RunTraffic } from './pacer-types.ts';

export type { Decision, GrantRequest, KeyReport, Observation, ObserveResult, PaceMode, PacerOptions, RunTraffic } from './pacer-types.ts';
const clampInt = (n: number) => Math.max(0, Math.floor(n));

/** The label of requests that carry no key (spec, Authentication: the server limits them by address). */
const ANONYMOUS = '<anonymous>';

/** A moment nothing was in flight on a key: one service's Remaining was at least `remaining`, and the run had sent `sentBefore` requests. */
interface QuietMoment {
  remaining: number;
  sentBefore: number;
  /** Requests granted on this key alone by then (none in flight). */
  ownSentBefore: number;
  limit: number | undefined;
}

export class KeyPacer {
  readonly options: Required<PacerOptions>;
  private remaining?: number;
  private resetServerMs?: number;
  /** Server clock minus local clock, from `Date`. */
  private skewMs = 0;
  private blockedUntilMs = 0;
  /** Why the current block holds (a 429 on this key, or a run-wide hold from another key's 429). */
  private blockReason = '';
  /** Set once a block is longer than `maxWaitMs`: nothing more on this key for the rest of the run. */
  private closedReason?: string;
  /** The block of the last 429 ended; the next response tells whether the key recovered. */
  private afterBlock = false;
  private headersUsable?: boolean;
  private limitHeader?: number;
  private nominalHint?: number;
  private lastGrantMs = -Infinity;
  private fallbackRemaining?: { value: number; atMs: number };
  private inflight = 0;
  /** Requests overlapped in flight since the key last had none: their answers may come in any order. */
  private overlapped = false;
  /**
   * Set by the first 429 this key's known Remaining did not predict: its headers announce more than the
   * server admits, so no burst goes past the announced limit on it again (a second refusal in the
   * same burst could reach the server after the first 429 was sent).
   */
  private unpredictedSince?: string;
  /**
   * The last moment nothing was in flight on this key: the lowest Remaining read since the moment
   * before (the state then is at least that: the last request counted said no less, and limiters
   * only refill with time) and the requests granted so far. Every answer read later is to a request
   * granted after it (see `otherConsumer`).
   */
  private readonly quiet = new Map<string, QuietMoment>();
  /** The lowest Remaining read since the last quiet moment, by service: a lower bound of the state when nothing is in flight again. */
  private readonly batchLowest = new Map<string, { remaining: number; limit: number | undefined }>();
  /** The run's requests (any label) answered when the batch since the last quiet moment began. */
  private batchStartSent?: number;
  /** This key's answered requests when that batch began. */
  private batchStartOwn?: number;
  /** The largest fall of Remaining beyond what the run sent since a quiet moment. */
  private largestForeignFall = 0;
  /** A counted 2xx showed Remaining at Limit: one request at a time until the next one says whether it falls. */
  private staticSuspect = false;
  /** This key's count is not its own (another client on it): one request at a time on it, its 429s hold every key. */
  private untrustedReason?: string;
  private stats: KeyReport;
  /** The run's requests on every label (default: this key's alone). */
  private readonly traffic: RunTraffic;
  constructor(options: PacerOptions, traffic: RunTraffic = { granted: 0, inflight: 0 }) {
    this.traffic = traffic;
    this.options = {
      reserve: 3,
      maxWaitMs: 120_000,
      resetMarginMs: 1000,
      retryAfterMarginMs: 20,
      nominalPerMinute: 60,
      fallbackHoldMs: 10_000,
      maxWaitVariable: 'MAX_RETRY_AFTER_S',
      ...options,
    };
    this.stats = {
      label: options.label,
      granted: 0,
      observed: 0,
      released: 0,
      refused: 0,
      unplanned429: 0,
      inFlightAt429: 0,
      suspectedBans: 0,
      earlyGrants: 0,
      longestWaitMs: 0,
      fallbackResponses: 0,
      unpredicted429: 0,
      notCertified: [],
    };
  }

  /** Whether `count` requests (or fewer) may be sent now in `mode`, else how long to wait. */
  decide(nowMs: number, req: GrantRequest): Decision {
    const count = Math.max(1, clampInt(req.count ?? 1));
    if (req.nominalPerMinute && req.nominalPerMinute > 0) this.nominalHint = req.nominalPerMinute;
    const label = this.options.label;
    if (this.traffic.closed !== undefined) this.close(this.traffic.closed);
    if (this.closedReason !== undefined && !req.restore) return { kind: 'not-certified', reason: this.closedReason };
    if (this.blockedUntilMs > nowMs) {
      const d = this.waitFor(this.blockedUntilMs - nowMs, this.blockReason || `a 429 on ${label} asked to wait (Retry-After)`);
      if (d.kind === 'not-certified') {
        if (req.restore) return d;
        this.closedReason = `${d.reason}; nothing more is sent on ${label} for the rest of the run`;
        this.stats.closed = this.closedReason;
        return { kind: 'not-certified', reason: this.closedReason };
      }
      return d;
    }
    if (this.closedReason !== undefined) return this.restoreOnClosed();
    const single = this.oneAtATime();
    if (single && (single.runWide ? this.traffic.inflight : this.inflight) > 0)
      return { kind: 'wait', reason: `${label}: one request at a time on ${single.runWide ? 'every key' : label}, ${single.reason}` };
    const d = this.decideCounted(nowMs, req, count);
    if (!single || d.kind !== 'grant') return d;
    return { kind: 'grant', count: 1, ...(count > 1 ? { limitedBy: `one request at a time: ${single.reason}` } : {}) };
  }

  /** A restore on a closed key, its holds passed: alone on the key (in the run, while the keys are one bucket). */
  private restoreOnClosed(): Decision {
    if ((this.traffic.untrusted ? this.traffic.inflight : this.inflight) === 0) return { kind: 'grant', count: 1 };
    return { kind: 'wait', reason: `${this.options.label}: a restore goes alone once its holds have passed` };
  }

  /** Whether requests go one at a time (a count the run cannot trust is not spent in bursts), and why. */
  private oneAtATime(): { runWide: boolean; reason: string } | undefined {
    if (this.traffic.untrusted) return { runWide: true, reason: this.traffic.untrusted };
    if (this.untrustedReason) return { runWide: false, reason: this.untrustedReason };
    // Once at Limit is only suspect: a burst of Remaining + 1 still goes at once (an off-by-one limiter shows it; http-rules.md).
    return undefined;
  }

  /** `decide` once neither a block nor a closed key stops it: what Remaining (or the fallback rate) allows. */
  private decideCounted(nowMs: number, req: GrantRequest, count: number): Decision {
    const label = this.options.label;
    if (this.inflight > 0 && this.headersUsable !== true) {
      // Nothing known yet, or headers unusable: one request at a time.
      return { kind: 'wait', reason: `pacing ${label} one request at a time (no usable X-RateLimit-Remaining/Reset)` };
    }
    if (this.headersUsable === false) return this.decideFallback(nowMs, req.mode);
    if (this.headersUsable === undefined) return { kind: 'grant', count: 1 };
    // Usable headers: is what Remaining said still about the current window?
    if (this.resetServerMs !== undefined && nowMs + this.skewMs >= this.resetServerMs + this.options.resetMarginMs) {
      this.remaining = undefined;
      this.resetServerMs = undefined;
    }
    if (this.remaining === undefined) {
      return this.inflight > 0 ? { kind: 'wait', reason: `learning ${label}'s new window from one request` } : { kind: 'grant', count: 1 };
    }
    const left = this.remaining - this.inflight;
    if (req.mode === 'exhaust') {
      if (left >= 1) return this.exhaustGrant(count, left, req.withinRemaining === true);
      if (this.inflight > 0) return { kind: 'wait', reason: `${label}: the requests in flight spend what Remaining allows` };
      return { kind: 'grant', count: 1 }; // the request past the limit, sent alone
    }
    const budget = left - this.options.reserve;
    if (budget >= 1) return { kind: 'grant', count: Math.min(count, budget) };
    if (this.inflight > 0) return { kind: 'wait', reason: `${label}: at the reserve with requests in flight` };
    const untilReset = (this.resetServerMs ?? nowMs) - (nowMs + this.skewMs) + this.options.resetMarginMs;
    return this.waitFor(
      untilReset,
      `X-RateLimit-Remaining ${this.remaining} on ${label} is at the reserve of ${this.options.reserve}; waiting for X-RateLimit-Reset`,
    );
  }

  /**
   * An `exhaust` grant with `left` ≥ 1: nothing in flight, the request past the limit may join
   * them (a burst of Remaining + 1 at once), unless the caller keeps within Remaining or this
   * key's Remaining has already failed to predict a 429.
   */
  private exhaustGrant(count: number, left: number, withinRemaining: boolean): Decision {
    const joinPast = this.inflight === 0 && !withinRemaining;
    if (joinPast && this.unpredictedSince === undefined) return { kind: 'grant', count: Math.min(count, left + 1) };
    const granted = Math.min(count, left);
    if (!joinPast || count <= left) return { kind: 'grant', count: granted };
    return {
      kind: 'grant',
      count: granted,
      limitedBy: `${this.unpredictedSince}; so no burst goes past the announced limit on ${this.options.label} (a second early refusal in it could reach the server after the first 429)`,
    };
  }

  private decideFallback(nowMs: number, mode: PaceMode): Decision {
    const label = this.options.label;
    const fr = this.fallbackRemaining;
    if (mode === 'paced' && fr && fr.value <= this.options.reserve) {
      const until = fr.atMs + 60_000 - nowMs;
      if (until > 0) {
        return this.waitFor(
          until,
          `X-RateLimit-Remaining ${fr.value} on ${label} is at the reserve and X-RateLimit-Reset is not usable; waiting a nominal minute`,
        );
      }
      this.fallbackRemaining = undefined;
    }
    const perMinute = this.limitHeader && this.limitHeader > 0 ? this.limitHeader : (this.nominalHint ?? this.options.nominalPerMinute);
    const interval = 60_000 / perMinute;
    const next = this.lastGrantMs + interval;
    if (next > nowMs)
      return {
        kind: 'wait',
        waitMs: Math.ceil(next - nowMs),
        reason: `pacing ${label} at ${perMinute} requests per minute (headers not usable)`,
      };
    return { kind: 'grant', count: 1 };
  }

  private waitFor(waitMs: number, reason: string): Decision {
    const ms = Math.max(0, Math.ceil(waitMs));
    if (ms > this.options.maxWaitMs) {
      const why =
        `${reason}: ${Math.round(ms / 1000)} s is longer than ${this.options.maxWaitVariable}=` +
        `${Math.round(this.options.maxWaitMs / 1000)} s (raise ${this.options.maxWaitVariable} to wait it out)`;
      this.stats.notCertified.push(why);
      return { kind: 'not-certified', reason: why };
    }
    this.stats.longestWaitMs = Math.max(this.stats.longestWaitMs, ms);
    return { kind: 'wait', waitMs: ms, reason };
  }

  /** `count` requests were handed out at `nowMs`. */
  granted(nowMs: number, count: number): void {
    if (this.blockedUntilMs > nowMs) this.stats.earlyGrants += count;
    this.batchStartSent ??= this.traffic.granted - this.traffic.inflight;
    this.batchStartOwn ??= this.stats.granted - this.inflight;
    this.inflight += count;
    this.traffic.granted += count;
    this.traffic.inflight += count;
    if (this.inflight > 1) this.overlapped = true;
    this.stats.granted += count;
    this.lastGrantMs = nowMs;
  }

  /** `count` granted requests were not sent, or ended without a response. */
  release(count = 1): void {
    const n = Math.min(this.inflight, clampInt(count));
    this.inflight -= n;
    this.traffic.inflight = Math.max(0, this.traffic.inflight - n);
    if (this.inflight === 0) this.overlapped = false;
    this.stats.released += n;
  }

  /** Closes the key for the rest of the run: every later ask is not certified, with `reason`. */
  close(reason: string): void {
    if (this.closedReason !== undefined) return;
    this.closedReason = `${reason}; nothing more is sent on ${this.options.label} for the rest of the run`;
    this.stats.closed = this.closedReason;
    this.stats.notCertified.push(reason);
  }

  /**
   * Holds every request on this key until `untilMs` (local clock), for `reason`: a run-wide hold
   * after another key's unpredicted 429. A hold beyond `maxWaitMs` closes the key at its next ask.
   */
  hold(untilMs: number, reason: string): void {
    if (untilMs <= this.blockedUntilMs) return;
    this.blockedUntilMs = untilMs;
    this.blockReason = reason;
  }

  /** Every response on this key, 429 included. */
  observe(obs: Observation): ObserveResult {
    // Whether this key's own Remaining foretold a 429: it said no more than the requests in flight.
    const known = this.remaining ?? this.fallbackRemaining?.value;
    const predicted = known !== undefined && known < this.inflight;
    // The only request in flight since nothing was: no other answer can overtake it, so it is the newest state.
    const alone = this.inflight === 1 && !this.overlapped;
    if (this.inflight > 0) this.traffic.inflight = Math.max(0, this.traffic.inflight - 1);
    this.inflight = Math.max(0, this.inflight - 1);
    if (this.inflight === 0) this.overlapped = false;
    this.stats.observed++;
    const info = parseRateLimitHeaders(obs.headers);
    if (info.dateMs !== undefined) this.skewMs = info.dateMs - obs.receivedAtMs;
    // A 401 to a request that carried a key (in a form the server refused: another scheme, the
    // bare key, another letter case) was not counted as that key: its X-RateLimit-* may describe
    // the limit the server keeps for unauthenticated callers (by address), so they say nothing of
    // the key's. Without a key, a 401 is the normal answer and its headers are the label's own.
    const describesKey = !(obs.status === 401 && this.options.label !== ANONYMOUS);
    if (describesKey) this.learn(info, obs, alone);
    if (obs.status === 429) this.fallbackRemaining = undefined; // after a 429, Retry-After rules
    const wasAfterBlock = this.afterBlock;
    this.afterBlock = false;
    if (obs.status !== 429) return {};
    return this.refusal(obs, info, { known, predicted, wasAfterBlock });
  }

  /** What one answer's X-RateLimit-* say of the key: its Remaining and Reset, or that they are not usable. */
  private learn(info: RateLimitInfo, obs: Observation, alone: boolean): void {
    if (info.limit !== undefined) this.limitHeader = info.limit;
    const resetOk = resetUsable(info);
    if (info.remaining !== undefined && resetOk) {
      this.otherConsumer(info.remaining, info.limit, obs.service ?? '');
      if (obs.status >= 200 && obs.status < 300) this.staticRemaining(info.remaining, info.limit);
      this.headersUsable = true;
      const resetMs = info.reset! * 1000;
      // The highest Reset is the newest state: a new fixed window, or a sliding window or token
      // bucket that has spent more (its Reset moves on with what it spent). Within one Reset,
      // answers may arrive out of order: keep the lowest Remaining, unless this answer was the only
      // one in flight (a token bucket, GCRA or weighted counter refills under the same Reset). An
      // older Reset is a late answer.
      if (this.remaining !== undefined && this.resetServerMs === resetMs) {
        this.remaining = alone ? info.remaining : Math.min(this.remaining, info.remaining);
      } else if (this.remaining === undefined || this.resetServerMs === undefined || resetMs > this.resetServerMs) {
        this.remaining = info.remaining;
        this.resetServerMs = resetMs;
      }
    } else {
      this.headersUsable = false;
      this.stats.fallbackResponses++;
      this.remaining = undefined;
      this.resetServerMs = undefined;
      this.fallbackRemaining = info.remaining !== undefined ? { value: info.remaining, atMs: obs.receivedAtMs } : undefined;
    }
  }

  /** A 429: how long the key is held, and whether its own Remaining foretold it. */
  private refusal(
    obs: Observation,
    info: RateLimitInfo,
    { known, predicted, wasAfterBlock }: { known: number | undefined; predicted: boolean; wasAfterBlock: boolean },
  ): ObserveResult {
    this.stats.refused++;
    if (obs.mode !== 'exhaust') this.stats.unplanned429++;
    this.stats.inFlightAt429 += this.inflight;
    if (wasAfterBlock) this.stats.suspectedBans++;
    const hold = refusalHold(this.options, this.traffic, obs, info);
    if (hold.stop) this.traffic.closed ??= hold.stop;
    const retryAfterProblem = hold.parsed.ok ? undefined : hold.parsed.reason;
    const blockedForMs = hold.holdMs;
    const label = this.options.label;
    const until = obs.receivedAtMs + blockedForMs;
    if (until >= this.blockedUntilMs) {
      this.blockedUntilMs = until;
      this.blockReason = `a 429 on ${label} asked to wait (Retry-After: ${getHeader(obs.headers, 'retry-after') ?? 'missing'})`;
    }
    // A 429 right after a hold the server stated looks like a ban; after a fixed hold of the run's own, nothing was promised.
    this.afterBlock = !hold.fixed;
    // After a 429 the window's count is what the server says next; forget Remaining.
    this.remaining = undefined;
    this.resetServerMs = undefined;
    const untrusted = this.traffic.untrusted ?? this.untrustedReason;
    if (predicted && untrusted)
      return {
        blockedForMs,
        retryAfterProblem,
        holdAll: {
          untilMs: until,
          reason: `a 429 on ${label}, whose count the run cannot read as its own (${untrusted}): every key of the run waits its Retry-After`,
        },
      };
    if (predicted) return { blockedForMs, retryAfterProblem };
    this.stats.unpredicted429 = (this.stats.unpredicted429 ?? 0) + 1;
    // Only a Remaining that said there was room is contradicted; an unknown one predicts nothing.
    if (known !== undefined)
      this.unpredictedSince ??= `a 429 on ${label} came while its X-RateLimit-Remaining said ${known} with ${this.inflight + 1} in flight`;
    const reason = hold.fixed
      ? `a 429 on ${label} without Retry-After nor a usable X-RateLimit-Reset (a front door's own gate, or the server's): it says neither ` +
        `how long nor whose limit, so every key of the run waits a fixed ${Math.round(blockedForMs / 1000)} s`
      : `a 429 on ${label} that its own X-RateLimit-Remaining (${known ?? 'unknown'}) did not predict: the limit may be ` +
        `shared by several keys, so every key of the run waits its Retry-After`;
    return { blockedForMs, retryAfterProblem, holdAll: { untilMs: until, reason } };
  }

  /**
   * Another consumer of the key's limit: a Remaining below the last quiet moment's lowest reading
   * minus every request the run sent since (any label, either service; no limiter lowers Remaining
   * otherwise: limiters.md, "A fall in Remaining beyond what it sent"). docs/pacing.md says why.
   */
  private otherConsumer(remaining: number, limit: number | undefined, service: string): void {
    const quiet = this.quiet.get(service);
    if (quiet && quiet.limit !== limit) {
      this.quiet.delete(service);
      this.batchLowest.delete(service);
    } else if (quiet) {
      const sent = this.traffic.granted - quiet.sentBefore;
      const fall = quiet.remaining - remaining;
      this.notOwnCount(fall, sent, this.stats.granted - quiet.ownSentBefore, quiet.remaining, remaining);
      if (fall - sent > this.largestForeignFall) {
        this.largestForeignFall = fall - sent;
        this.stats.anotherClient =
          `X-RateLimit-Remaining on ${this.options.label} fell from ${quiet.remaining} to ${remaining} while this run sent ${sent} request(s) on it: ` +
          `${fall - sent} more were spent by another client on the key, or by others sharing its limit`;
      }
    }
    const lowest = this.batchLowest.get(service);
    const sameLimit = lowest !== undefined && lowest.limit === limit;
    this.batchLowest.set(service, { remaining: sameLimit ? Math.min(lowest.remaining, remaining) : remaining, limit });
    if (this.inflight === 0) {
      // Any request granted since the batch began, but the one read, may be counted after its lowest reading.
      const sentBefore = this.batchStartSent !== undefined ? this.batchStartSent + 1 : this.traffic.granted - this.traffic.inflight;
      const ownSentBefore = this.batchStartOwn !== undefined ? this.batchStartOwn + 1 : this.stats.granted;
      for (const [s, b] of this.batchLowest) this.quiet.set(s, { remaining: b.remaining, sentBefore, ownSentBefore, limit: b.limit });
      this.batchLowest.clear();
      this.batchStartSent = undefined;
      this.batchStartOwn = undefined;
    }
  }

  /**
   * A fall of Remaining by more than this key's own requests since a quiet moment: the count is not
   * the key's own. Within what the run sent on every key, it moved with the run's other keys (one
   * bucket, run-wide); beyond, another client spends it (this key alone). Requests without a key
   * are limited by address (spec, Authentication), so theirs is never the key's count.
   */
  private notOwnCount(fall: number, runSent: number, ownSent: number, from: number, to: number): void {
    const label = this.options.label;
    if (label === ANONYMOUS || fall <= ownSent) return;
    const why = `X-RateLimit-Remaining on ${label} fell from ${from} to ${to} while the run sent ${ownSent} request(s) on it`;
    if (fall <= runSent) this.untrust(`${why} and ${runSent - ownSent} on its other keys: the limit is shared with other keys`, true);
    else this.untrust(`${why}: another client spends its limit`, false);
  }

  /**
   * Remaining at Limit on a 2xx: every limiter that counted the request shows at most Limit - 1
   * after it. Once is suspect (a server may leave a request uncounted); twice in a row, the count
   * does not fall as the run sends and is not trusted.
   */
  private staticRemaining(remaining: number, limit: number | undefined): void {
    if (this.options.label === ANONYMOUS || limit === undefined || remaining < limit) {
      this.staticSuspect = false;
      return;
    }
    if (this.staticSuspect)
      this.untrust(
        `X-RateLimit-Remaining on ${this.options.label} stayed at X-RateLimit-Limit ${limit} on two counted responses in a row: it does not fall as the run sends`,
        true,
      );
    this.staticSuspect = true;
  }

  private untrust(reason: string, runWide: boolean): void {
    if (runWide) this.traffic.untrusted ??= reason;
    else this.untrustedReason ??= reason;
    this.stats.untrusted ??= reason;
  }

  /** Local time until which every request on this key is held (0 when not held). */
  get blockedUntil(): number {
    return this.blockedUntilMs;
  }

  get inFlight(): number {
    return this.inflight;
  }

  /** Last known Remaining (usable headers only). */
  get lastRemaining(): number | undefined {
    return this.remaining;
  }

  report(): KeyReport {
    return { ...this.stats, notCertified: [...this.stats.notCertified], blockedUntilMs: this.blockedUntilMs };
  }
}
