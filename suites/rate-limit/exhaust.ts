/**
 * The 429 sequence (spec, Limits rules 3 and 5; Errors, 429): drive one key to its limit in bursts
 * bounded by X-RateLimit-Remaining, take the 429, wait its Retry-After, send one more; never a ban.
 * How it counts windows and why it cannot fail a conformant limiter: docs/rate-limit-sequence.md.
 */
import { getHeader } from '../lib/headers.ts';
import { secondsUntilReset } from '../lib/rate-limit.ts';
import { parseRetryAfter, type RetryAfterResult } from '../lib/retry-after.ts';
import { ok, rateLimitOf, tightest, WindowCounter, type Snapshot } from './window-counter.ts';

export { rateLimitOf, tightest, WindowCounter, type Snapshot };

export interface ExhaustRecord {
  /** `<RATE_LIMIT_KEY>` or `<API_KEY>`. */
  key: string;
  sent: number;
  restarts: number;
  /** When each answer on the key arrived (local ms), in order: the run's own requests on it, by time. */
  answeredAtMs?: number[];
  /** The longest X-RateLimit-Reset − Date (s) the answers showed: a lower bound of the key's window length. */
  longestResetS?: number;
  /** Bursts sent and the largest one (concurrency). */
  bursts?: number;
  largestBurst?: number;
  /** Why the sequence could not be completed (the server's answers did not allow it; never a key). */
  aborted?: string;
  /** The harness's own limit or a missing prerequisite: the checks are not certified, with this reason. */
  notCertified?: string;
  /** The key was already at its limit at the first request. */
  alreadyLimited?: boolean;
  /** Another consumer of the key's limit, seen as a Remaining that fell by more than this run sent (then not certified). */
  anotherClient?: string;
  /** A 429 while Remaining said at least one was left, in both drives to the limit. */
  earlyRefusal?: string;
  /** The early refusal fell short by exactly one: one 429 in a burst that spent all Remaining announced. */
  earlyRefusalByOne?: boolean;
  /** A 429 while Remaining said some were left that was not seen again (or could not be tried again): off by one, and a 429 after the wait, are not certified. */
  earlyRefusalUnconfirmed?: string;
  /** More admitted in one window than its Limit (probes included), or a 2xx after Remaining reached 0. */
  overAdmission?: string;
  /**
   * The 429's window admitted more than its Limit only if answers of its last second are counted,
   * which the count leaves out (a sliding window may already have freed requests then): whether it
   * over-admitted cannot be told, so RL-05 and RL-10 are not certified (`WindowCounter.unconfirmed`).
   */
  admissionUnconfirmed?: string;
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
  /** Waits `ms` (tests inject a clock); default a timer. */
  sleep?: (ms: number) => Promise<void>;
  /** One request at a time (tests); used when `sendBurst` is not given. */
  send?: (evidence: boolean) => Promise<Snapshot>;
  log?: (line: string) => void;
  /**
   * Answers the run already had on the key just before (the countdown, `countdown.ts`): the run's
   * own requests, counted in their windows like the sequence's, probes included.
   */
  earlier?: readonly Snapshot[];
}

/** Added to the wait for a Reset that is less than a second away (Date and Reset have one-second resolution). */
const LAST_SECOND_MARGIN_MS = 250;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Bursts of the largest size in a row that did not bring Remaining down before the sequence gives up (not certified), counted in requests. */
const MAX_STALLS = 8;

/** One run of the sequence: its options, its record, and where the count stands. */
interface Sequence {
  o: ExhaustOptions;
  rec: ExhaustRecord;
  log: (line: string) => void;
  maxRestarts: number;
  maxConcurrency: number;
  /** Sends a burst and counts its admissions (over-admission is recorded in `rec`). */
  burst: (count: number, evidence?: boolean) => Promise<Snapshot[]>;
  /** Requests in a row whose bursts did not bring Remaining down. */
  stalls: number;
  /** The response the count goes by (the tightest of the last burst). */
  res: Snapshot;
  /** The sequence's count per X-RateLimit-Reset (over-admission, first response with each). */
  windows: WindowCounter;
  /** Requests let in past Remaining 0 under the same Reset (probed again, at most Limit times). */
  withinSecond: number;
}

/** The burst sender of a sequence: sends, counts what was sent and the largest burst, and records the first over-admission of any window. */
function burster(o: ExhaustOptions, rec: ExhaustRecord, windows: WindowCounter): Sequence['burst'] {
  const sendBurst =
    o.sendBurst ??
    (async (_count: number, evidence: boolean) => {
      if (!o.send) throw new Error('exhaust: give sendBurst or send');
      return [await o.send(evidence)];
    });
  return async (count: number, evidence = false): Promise<Snapshot[]> => {
    const batch = await sendBurst(count, evidence);
    rec.sent += batch.length;
    rec.bursts!++;
    rec.largestBurst = Math.max(rec.largestBurst!, batch.length);
    for (const s of batch) {
      rec.answeredAtMs!.push(s.receivedAtMs);
      const untilReset = secondsUntilReset(rateLimitOf(s));
      if (untilReset !== undefined) rec.longestResetS = Math.max(rec.longestResetS ?? 0, untilReset);
      const over = windows.add(s);
      if (over && !rec.overAdmission) rec.overAdmission = over;
    }
    return batch;
  };
}

/** Remaining at the start of a count, when the limit can be approached by count within MAX_EXHAUST_REQUESTS; undefined (recorded why) otherwise. */
function remainingAtStart(q: Sequence): number | undefined {
  const { o, rec, res } = q;
  const remaining = rateLimitOf(res).remaining;
  if (remaining === undefined) {
    rec.aborted = `${res.label}: no integer X-RateLimit-Remaining (${rateLimitOf(res).raw.remaining ?? 'none'}); the limit cannot be approached by count`;
    return undefined;
  }
  if (remaining + 1 > o.maxRequests - rec.sent) {
    rec.notCertified = `X-RateLimit-Remaining is ${remaining} on ${o.key}, more than MAX_EXHAUST_REQUESTS=${o.maxRequests} allows; use a RATE_LIMIT_KEY on a smaller plan or raise MAX_EXHAUST_REQUESTS`;
    return undefined;
  }
  return remaining;
}

/**
 * Spends Remaining in bursts bounded by it and by `maxConcurrency`: `done` when Remaining is 0
 * (nothing in flight) or a 429 came early; `stop` when the record is final.
 */
async function countToZero(q: Sequence, start: number): Promise<'done' | 'stop'> {
  const { o, rec } = q;
  let remaining = start;
  while (remaining > 0) {
    const before = remaining;
    const batch = await q.burst(Math.min(remaining, q.maxConcurrency));
    if (rec.overAdmission) return 'stop';
    // Another consumer first: a 429 beside its traffic is no off-by-one of the server.
    const foreign = fellMoreThanSent(batch, before);
    if (foreign) {
      rec.anotherClient = foreign;
      rec.notCertified = `${o.key} is used by another client, or its limit is shared with other keys: ${foreign}; nothing more is sent on it`;
      return 'stop';
    }
    const refused = batch.find((s) => s.status === 429);
    if (refused) {
      rec.earlyRefusal = `${refused.label}: refused with 429 while X-RateLimit-Remaining said ${before} left (a burst of ${batch.length})`;
      rec.earlyRefusalByOne = batch.length === before && batch.filter((s) => s.status === 429).length === 1;
      rec.refused = refused;
      rec.inFlightAtRefusal = batch.filter((s) => s.receivedAtMs > refused.receivedAtMs).length;
      return 'done';
    }
    const bad = batch.find((s) => !ok(s));
    if (bad) {
      rec.aborted = `${bad.label}: expected a 2xx while Remaining was ${before}, observed ${bad.status}`;
      return 'stop';
    }
    q.res = tightest(batch);
    const next = rateLimitOf(q.res).remaining;
    if (next === undefined) {
      rec.aborted = `${q.res.label}: X-RateLimit-Remaining missing mid-way`;
      return 'stop';
    }
    if (!countOn(q, before, next, batch.length)) return 'stop';
    remaining = next;
    const limit = rateLimitOf(q.res).limit;
    if (limit !== undefined && rec.sent > 2 * limit + q.maxConcurrency) {
      rec.notCertified =
        `sent ${rec.sent} requests on ${o.key}, more than twice X-RateLimit-Limit ${limit}, without reaching the limit: ` +
        'the key refills (or a new window begins) as fast as the suite can send';
      return 'stop';
    }
    if (rec.sent + remaining + 1 > o.maxRequests) {
      rec.notCertified = `sent ${rec.sent} requests without reaching the limit (MAX_EXHAUST_REQUESTS=${o.maxRequests})`;
      return 'stop';
    }
  }
  return 'done';
}

/**
 * Another consumer of the key's limit, if `batch` shows one: a 2xx whose Remaining is below what
 * the previous burst left (`before`, every answer of it read) minus this burst's own requests.
 * Without requests no conformant limiter's Remaining falls (a window resets, a log forgets, a
 * bucket refills); 429s are left out, their Remaining 0 is the refusal itself.
 */
export function fellMoreThanSent(batch: readonly Snapshot[], before: number): string | undefined {
  for (const s of batch) {
    const remaining = rateLimitOf(s).remaining;
    if (!ok(s) || remaining === undefined || remaining >= before - batch.length) continue;
    return `X-RateLimit-Remaining fell from ${before} to ${remaining} while this run sent ${batch.length} request${batch.length === 1 ? '' : 's'} on it`;
  }
  return undefined;
}

/**
 * Whether the count goes on after a burst of `sent` took Remaining from `before` to `next`; false
 * (recorded why) when it stalled too long, counted in requests: a count the pacer sends one at a
 * time stalls in bursts of one.
 */
function countOn(q: Sequence, before: number, next: number, sent: number): boolean {
  if (next < before) {
    q.stalls = 0;
    return true;
  }
  // A new window, or a sliding window / token bucket refilling: legitimate, count on. When
  // it refills as fast as the suite can send, the limit is out of the suite's reach: not certified.
  q.rec.restarts++;
  q.stalls += sent;
  if (q.stalls > MAX_STALLS * q.maxConcurrency) {
    q.rec.notCertified =
      `X-RateLimit-Remaining on ${q.o.key} did not go down over ${q.stalls} requests in bursts of up to ${q.maxConcurrency} (last ${before} → ${next}): ` +
      'the key refills (or a new window begins) as fast as the suite can send, so its limit was not reached';
    return false;
  }
  q.log(`[rate-limit] Remaining went from ${before} to ${next} (a new window or a refill); counting on`);
  return true;
}

/**
 * Remaining is 0 and nothing is in flight: the request past the limit, alone. `refused` on its
 * 429; `again` when the window moved (count again); `stop` when the record is final.
 */
async function pastTheLimit(q: Sequence, startReset: number | undefined): Promise<'refused' | 'again' | 'stop'> {
  const { rec } = q;
  const last = q.res;
  [q.res] = await q.burst(1, true);
  const res = q.res;
  if (rec.overAdmission) return 'stop';
  if (res.status === 429) {
    rec.refused = res;
    rec.inFlightAtRefusal = 0;
    return 'refused';
  }
  if (!ok(res)) {
    rec.aborted = `${res.label}: expected 429 past the limit, observed ${res.status}`;
    return 'stop';
  }
  return await admittedPastZero(q, last, res, startReset);
}

/**
 * A request was let in past Remaining 0 (`last` said 0, `res` is the 2xx). Never over-admission
 * by itself: a GCRA or a token bucket refilling more than once a second frees a request within the
 * second its Reset shows, and a sliding log frees one as an old request leaves, so a Reset that
 * "held still" proves no fixed window. Only more 2xx under one Reset than its Limit (the window
 * count, `WindowCounter`) is. The request past the limit is probed again, at most Limit times;
 * a key that keeps admitting it is not certified.
 */
async function admittedPastZero(q: Sequence, last: Snapshot, res: Snapshot, startReset: number | undefined): Promise<'again' | 'stop'> {
  const { o, rec } = q;
  const a = rateLimitOf(last);
  const b = rateLimitOf(res);
  const windowMoved =
    b.reset !== a.reset || a.reset !== startReset || ((b.remaining ?? 0) > 0 && (b.dateMs ?? 0) / 1000 >= (a.reset ?? Infinity) - 1);
  if (windowMoved) {
    if (++rec.restarts > q.maxRestarts) {
      rec.notCertified =
        `a new window began (or the key refilled) each time Remaining reached 0 on ${o.key} (${rec.restarts} times); ` +
        'the limit was not reached inside one window';
      return 'stop';
    }
    q.log('[rate-limit] a new window began (or the key refilled) just as Remaining reached 0; counting again');
    return 'again';
  }
  // In the last second before its Reset (or without Date) the 2xx is not counted (`WindowCounter`):
  // the count goes on in the next window, once that Reset has passed.
  if (b.dateMs === undefined || b.reset === undefined || b.dateMs >= (b.reset - 1) * 1000) {
    const ms =
      b.reset !== undefined && b.dateMs !== undefined ? b.reset * 1000 - b.dateMs + LAST_SECOND_MARGIN_MS : 1000 + LAST_SECOND_MARGIN_MS;
    q.log(
      '[rate-limit] one more was let in past Remaining 0 in the last second before its Reset; counting again once that Reset has passed',
    );
    await (o.sleep ?? sleep)(Math.min(ms, 1000 + LAST_SECOND_MARGIN_MS));
    return 'again';
  }
  if (q.withinSecond++ < (b.limit ?? a.limit ?? 0)) {
    q.log(
      '[rate-limit] one more was let in past Remaining 0 under the same Reset (a refilling or sliding limiter frees a request as time passes); probing again',
    );
    return 'again';
  }
  rec.notCertified =
    `${o.key} let ${q.withinSecond} requests in past X-RateLimit-Remaining 0, one at a time, without more 2xx under one Reset than its Limit ` +
    '(a refilling or sliding limiter does so): its limit was not reached';
  return 'stop';
}

/** Drives the key until a 429 (true) or until the record is final without one (false). */
async function driveToLimit(q: Sequence): Promise<boolean> {
  while (!q.rec.refused) {
    if (q.rec.overAdmission) return false;
    /** Reset at the start of this count: unchanged through it means a fixed window (or a sliding one before any expiry). */
    const startReset = rateLimitOf(q.res).reset;
    const remaining = remainingAtStart(q);
    if (remaining === undefined) return false;
    q.log(`[rate-limit] driving ${q.o.key} to its limit: ${remaining} requests left in this window, at most ${q.maxConcurrency} at once`);
    if ((await countToZero(q, remaining)) === 'stop') return false;
    if (q.rec.refused) break;
    const past = await pastTheLimit(q, startReset);
    if (past === 'stop') return false;
    if (past === 'refused') break;
  }
  return true;
}

/** After the 429: a valid Retry-After within MAX_RETRY_AFTER_S is waited out (the pacer holds the key), then exactly one request. */
async function retryAfterRefusal(q: Sequence): Promise<void> {
  const { o, rec } = q;
  const r = rec.refused!;
  const info = rateLimitOf(r);
  rec.retryAfter = parseRetryAfter(getHeader(r.headers, 'retry-after'), getHeader(r.headers, 'date'), {
    secondsUntilReset: secondsUntilReset(info),
    nowMs: r.receivedAtMs,
  });
  if (!rec.retryAfter.ok) {
    rec.notRetried = `no valid Retry-After (${rec.retryAfter.reason}); nothing more was sent on ${o.key}`;
    return;
  }
  if (rec.retryAfter.seconds > o.maxRetryAfterS) {
    rec.retryNotCertified = `Retry-After asks for ${Math.ceil(rec.retryAfter.seconds)} s, longer than MAX_RETRY_AFTER_S=${o.maxRetryAfterS}; raise MAX_RETRY_AFTER_S to wait it out. Nothing more was sent on ${o.key}`;
    return;
  }
  q.log(`[rate-limit] 429 received; the pacer holds ${o.key} for Retry-After ${Math.ceil(rec.retryAfter.seconds)} s, then one request`);
  [rec.after] = await q.burst(1, true);
  rec.waitedMs = rec.after.receivedAtMs - r.receivedAtMs;
}

/** Runs the 429 sequence on one key and returns its record (see the file's comment). */
export async function exhaust(o: ExhaustOptions): Promise<ExhaustRecord> {
  const rec: ExhaustRecord = { key: o.key, sent: 0, restarts: 0, bursts: 0, largestBurst: 0, answeredAtMs: [] };
  const windows = new WindowCounter();
  for (const s of o.earlier ?? []) {
    rec.answeredAtMs!.push(s.receivedAtMs);
    rec.overAdmission ??= windows.add(s);
  }
  const burst = burster(o, rec, windows);
  const [res] = await burst(1, true);
  const q: Sequence = {
    o,
    rec,
    burst,
    res,
    stalls: 0,
    windows,
    withinSecond: 0,
    log: o.log ?? (() => {}),
    maxRestarts: o.maxWindowRestarts ?? 3,
    maxConcurrency: Math.max(1, o.maxConcurrency ?? 32),
  };
  if (res.status === 429) {
    rec.alreadyLimited = true;
    rec.refused = res;
    rec.inFlightAtRefusal = 0;
  } else if (!ok(res)) {
    rec.aborted = `${res.label}: expected a 2xx before the limit, observed ${res.status}`;
    return rec;
  }
  if (await driveToLimit(q)) await retryAfterRefusal(q);
  if (rec.earlyRefusal && rec.after && ok(rec.after)) await confirmEarlyRefusal(q);
  else if (rec.earlyRefusal && rec.after) {
    // Refused early, and again after an honest wait: another client taking what the key frees
    // cannot be told from a server that refuses early and answers Retry-After wrong.
    rec.earlyRefusalUnconfirmed =
      `${rec.earlyRefusal}, and the request after its Retry-After was refused too: another client on ${o.key} ` +
      '(or a limit shared with other keys) cannot be told apart from a server that refuses early';
  }
  if (!rec.overAdmission && rec.refused) {
    const unconfirmed = windows.unconfirmed(rateLimitOf(rec.refused).reset);
    if (unconfirmed) rec.admissionUnconfirmed = unconfirmed;
  }
  return rec;
}

/**
 * A 429 while Remaining said some were left is off by one only if it happens again: another
 * client on the key (or a limit shared with other keys) can take the last requests Remaining
 * announced, once, without this run seeing a fall. After the Retry-After the key is driven to its
 * limit once more (one more window of requests); the record then describes that second drive, and
 * an early refusal that did not recur is `earlyRefusalUnconfirmed` (RL-10 not certified).
 * A recurrence short by exactly one is off by one only in a window that began whole (the request
 * after Retry-After left Limit − 1): a sliding-window counter rounds its weighted count (limiter
 * notes: "Limit − (previous × (1 − elapsed/W) + current), rounded"), so while an earlier window
 * still weighs on the key, `Remaining: 1` can precede a conformant 429 (`shortByOneWhileWeighed`).
 */
async function confirmEarlyRefusal(q: Sequence): Promise<void> {
  const { rec } = q;
  const first = rec.earlyRefusal!;
  const whole = rateLimitOf(rec.after!);
  const wholeWindow = whole.limit !== undefined && whole.remaining === whole.limit - 1;
  q.log(`[rate-limit] ${first}; driving ${q.o.key} to its limit once more to tell an off-by-one limiter from another client`);
  q.res = rec.after!;
  q.withinSecond = 0;
  for (const k of [
    'earlyRefusal',
    'earlyRefusalByOne',
    'refused',
    'inFlightAtRefusal',
    'retryAfter',
    'notRetried',
    'retryNotCertified',
    'waitedMs',
    'after',
  ] as const)
    delete rec[k];
  if (await driveToLimit(q)) await retryAfterRefusal(q);
  if (rec.earlyRefusal && rec.earlyRefusalByOne && !wholeWindow) shortByOneWhileWeighed(rec, first, whole.remaining);
  else if (rec.earlyRefusal) rec.earlyRefusal = `${first}; again when driven to the limit once more: ${rec.earlyRefusal}`;
  else if (!rec.notCertified && !rec.aborted && !rec.overAdmission) {
    rec.earlyRefusalUnconfirmed =
      `a 429 came while X-RateLimit-Remaining said some were left (${first}), but not when ${q.o.key} was driven to its limit once more: ` +
      'another client on the key, or a limit shared with other keys, may have taken what Remaining announced';
  }
}

/**
 * The second drive fell short by one too, but it began in a window an earlier one still weighed
 * on (the request after Retry-After left `remaining`, not Limit − 1): a sliding-window counter that
 * rounds its weighted count shows that, so RL-10 is not certified, never failed.
 */
function shortByOneWhileWeighed(rec: ExhaustRecord, first: string, remaining: number | undefined): void {
  rec.earlyRefusalUnconfirmed =
    `${first}; again when driven to the limit once more: ${rec.earlyRefusal}; but that drive began with X-RateLimit-Remaining ${remaining ?? 'unknown'}, ` +
    'not Limit − 1: an earlier window still weighed on the key, and a sliding-window counter that rounds its weighted count refuses so by one';
  delete rec.earlyRefusal;
}
