/**
 * The overload check's core (spec: Limits rules 1, 3 and 5; Errors, 429 row; Authentication rule
 * 5), callable without Playwright so that `tests/load/` can run it against any limiter.
 *
 * A limit checked without earning a ban, repeated over `windows` windows:
 * 1. Fresh window: a probe on `RATE_LIMIT_KEY` at the aimed start of the window (the previous
 *    window's `X-RateLimit-Reset` judged against its response's `Date`, and never before a pending
 *    Retry-After). The first window may be the one the 429 sequence's last request opened
 *    (`opening`): that request counts in it. The run's own requests on the key are accounted by
 *    time, never by the Reset label (a sliding log or a weighted counter still counts what the run
 *    sent before Reset): a probe whose Remaining is below Limit minus everything the run sent on
 *    the key within two window lengths shows another consumer of the limit (another client on the
 *    key, or a limit shared with other keys). The check says so and stops: not certified, never
 *    failed (no conformant algorithm is told apart from a second client by one run).
 * 2. Burst: exactly `Remaining + 1` concurrent requests right after the probe. An exact limiter
 *    admits Remaining and refuses one; a racy one admits more. Nothing is sent after the 429.
 * 3. Judgement (`judgeWindows`): every 2xx of a window counts from its first request, probes
 *    included, grouped by the `X-RateLimit-Reset` they share, except in that Reset's last second
 *    by the server's Date; no group may exceed its `X-RateLimit-Limit`. No conformant algorithm
 *    exceeds it: a fixed window's Reset names one window, a sliding log's names its oldest request
 *    (every 2xx under it before its last second was in the log at once), a bucket's or GCRA's
 *    moves on with each admission. Every refusal is a 429 with a valid Retry-After and the three headers.
 * 4. Recovery: the probe after each burst's Retry-After must succeed (after the last burst one
 *    more request only when no later window showed it).
 * Every request goes through the run-wide pacer (suites/pacing). A wait longer than
 * `maxRetryAfterS`, a burst larger than `burstMax` or an unusable key make LOAD-02 not certified,
 * never failed.
 */
import { finding, type Finding } from '../../core/finding.ts';
import { runLoad, type LoadFigures, type RecordedResponse, type TlsOptions } from './engine.ts';
import { parseRateLimitHeaders, secondsUntilReset, type RateLimitInfo } from '../lib/rate-limit.ts';
import { holdAfter429 } from '../lib/retry-after.ts';
import { PacingNotCertified } from '../pacing/client.ts';
import { describeSpread, spreadFinding } from './burst-spread.ts';
import { outsidePlan, outsidePlanFindings } from './outside-plan.ts';
import { heldFinding, join, observing, probe, waitWithProgress, type Pacer, type ProbeFailure, type ProbeResponse } from './http.ts';

/** Ledger ids and parts this check judges (suites/requirements.yaml). */
export const OVERLOAD = {
  id: 'LOAD-02',
  fairnessId: 'LOAD-03',
  admission: 'admission',
  refusals: 'refusals',
  recovery: 'recovery',
  fairness: 'other key',
} as const;

/** Added to every Retry-After wait (timer and clock granularity). */
export const RETRY_AFTER_MARGIN_MS = 250;
/** Added to a wait for X-RateLimit-Reset (Reset and Date have one-second resolution). */
export const RESET_MARGIN_MS = 1000;
/** Added to the aimed start of a fresh window (Reset judged against the response's Date is already its latest moment). */
export const AIM_MARGIN_MS = 100;

const KEY = '<RATE_LIMIT_KEY>';
const OTHER = '<API_KEY>';

export interface OverloadConfig {
  /** Inventory base address, ending in `/v1`. */
  baseUrl: string;
  /** The key the user accepts to exhaust. */
  rateLimitKey: string;
  /** Another key whose latency is watched during the bursts (should-level); optional. */
  otherKey?: string;
  /** Windows the burst is repeated over (statistical power against a racy limiter). */
  windows: number;
  /** Largest burst (Remaining + 1) the check sends; a larger limit is not certified. */
  burstMax: number;
  /** Most requests of a burst in flight at once. */
  burstConnections: number;
  maxRetryAfterS: number;
  /** The other key's latency threshold (ms), when the user set one. */
  otherKeyThresholdMs?: number;
  timeoutS: number;
  /** Refuse a non-loopback target (the bundled reference server is always loopback). */
  loopbackOnly: boolean;
  tls?: TlsOptions;
  /** The run-wide pacer (suites/pacing): every request is sent under its grant. */
  pacer: Pacer;
  /**
   * The last response on the key before this check (the 429 sequence's request after its
   * Retry-After): its window serves as the first burst window, and its 2xx counts in that window.
   */
  opening?: RecordedResponse;
  /** What the run sent on the key before this check (the 429 sequence): its own, whatever the server's Reset says. */
  earlier?: EarlierRequests;
  /**
   * The per-minute figure of the key's plan (RATE_LIMIT_PLAN), when the user named one: a Limit
   * equal to it is a per-minute limit (spec, Limits), so the run's own requests of the last
   * minutes still count, whatever Reset says (a token bucket or GCRA may show the next token).
   */
  planMinuteLimit?: number;
  progress?: (line: string) => void;
}

/** The run's own requests on the key before this check, by time (local clock). */
export interface EarlierRequests {
  /** When each answer arrived (ms, local clock), 2xx and 429 alike: a limiter may count a refused request too. */
  answeredAtMs: readonly number[];
  /** The longest `X-RateLimit-Reset` − `Date` those answers showed (s): a lower bound of the window length. */
  longestResetS?: number;
}

export interface WindowCount {
  /** The `X-RateLimit-Reset` value the window's successes share, or `(none)`. */
  reset: string;
  successes: number;
  /** Largest `X-RateLimit-Limit` among them (null when none was given). */
  limit: number | null;
}

/** One burst: the probe that opened its window, and what the burst got. */
export interface BurstFigures {
  remainingAtProbe: number;
  size: number;
  admitted: number;
  refused: number;
  lost: number;
  durationS: number;
  /** The `X-RateLimit-Reset` values the burst's 2xx responses carried: the window(s) it landed in. */
  resets: string[];
  /** First byte of the first request to first byte of the last, ms (burst-spread.ts). */
  sendSpreadMs: number | null;
  /** First byte of the first request to the burst's first complete answer, ms. */
  firstAnswerMs: number | null;
}

export interface OtherKeyFigures {
  probes: number;
  statuses: number[];
  latenciesMs: number[];
  maxLatencyMs: number | null;
  thresholdMs: number | null;
}

export interface OverloadFigures {
  limit: number | null;
  bursts: BurstFigures[];
  windows: WindowCount[];
  successes: number;
  refused: number;
  refusedByStatus: Record<string, number>;
  largestRetryAfterS: number | null;
  waitedS: number;
  /** Requests the run did not send counted on the key (another client, or a limit shared between keys): at most one entry, the check stops there. */
  foreign: { window: string; requests: number }[];
  recovered: boolean | null;
  otherKey: OtherKeyFigures | null;
  tls: LoadFigures['tls'];
  requests: { total: number; probes: number; burst: number; otherKey: number };
  durationS: number;
}

export interface OverloadOutcome {
  findings: Finding[];
  /** Headline figures for `evidence` annotations. */
  evidence: string[];
  figures: OverloadFigures;
}

export interface WindowJudgement {
  findings: Finding[];
  windows: WindowCount[];
  successes: number;
  refused: number;
  refusedByStatus: Record<string, number>;
  count5xx: number;
  /** Local epoch ms before which no request may be sent (0: no 429 seen). */
  notBefore: number;
  /** Largest wait any 429 asked for, in seconds (null: no 429). */
  largestRetryAfterS: number | null;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** What the responses on the key add up to, before judgement. */
interface Tally {
  /** Successes counted under the `X-RateLimit-Reset` they share. */
  groups: Map<string, WindowCount>;
  /** Responses without some X-RateLimit header, by the names missing: how many, and one status. */
  missingHeaders: Map<string, { count: number; example: number }>;
  /** 429s without a usable Retry-After, by reason. */
  badRetryAfter: Map<string, number>;
  refusedByStatus: Record<string, number>;
  successes: number;
  refused: number;
  count5xx: number;
  notBefore: number;
  largestRetryAfterS: number | null;
}

/** Counts one 2xx under its Reset, only before that Reset's last second on the server's clock (its Date): in the last second a sliding log may have freed a slot under the same Reset. */
function countSuccess(groups: Map<string, WindowCount>, info: RateLimitInfo): void {
  if (info.reset !== undefined && (info.dateMs === undefined || info.dateMs >= (info.reset - 1) * 1000)) return;
  const key = info.raw.reset ?? '(none)';
  const group = groups.get(key) ?? { reset: key, successes: 0, limit: null };
  group.successes++;
  if (info.limit !== undefined) group.limit = Math.max(group.limit ?? 0, info.limit);
  groups.set(key, group);
}

/** Holds the key after one 429 until its Retry-After (RFC 9110 §10.2.3), or without a usable one until the reported reset, else a conservative minute. */
function tallyHold(t: Tally, r: RecordedResponse, info: RateLimitInfo): void {
  const { holdMs, parsed } = holdAfter429({
    retryAfter: r.headers['retry-after'],
    date: r.headers.date,
    receivedAtMs: r.receivedAt,
    secondsUntilReset: secondsUntilReset(info),
    retryAfterMarginMs: RETRY_AFTER_MARGIN_MS,
    resetMarginMs: RESET_MARGIN_MS,
    fallbackMs: 60_000,
  });
  if (parsed.ok) t.largestRetryAfterS = Math.max(t.largestRetryAfterS ?? 0, parsed.seconds);
  else t.badRetryAfter.set(parsed.reason, (t.badRetryAfter.get(parsed.reason) ?? 0) + 1);
  t.notBefore = Math.max(t.notBefore, r.receivedAt + holdMs);
}

/** Adds up every response on the key, in order: successes per window, refusals per status, missing headers, the holds the 429s ask for. */
function tallyResponses(responses: readonly RecordedResponse[]): Tally {
  const t: Tally = {
    groups: new Map(),
    missingHeaders: new Map(),
    badRetryAfter: new Map(),
    refusedByStatus: {},
    successes: 0,
    refused: 0,
    count5xx: 0,
    notBefore: 0,
    largestRetryAfterS: null,
  };
  for (const r of responses) {
    const info = parseRateLimitHeaders(r.headers);
    if (info.missing.length) {
      const entry = t.missingHeaders.get(info.missing.join(', ')) ?? { count: 0, example: r.status };
      entry.count++;
      t.missingHeaders.set(info.missing.join(', '), entry);
    }
    if (r.status >= 200 && r.status < 300) {
      t.successes++;
      countSuccess(t.groups, info);
      continue;
    }
    t.refused++;
    t.refusedByStatus[r.status] = (t.refusedByStatus[r.status] ?? 0) + 1;
    if (r.status >= 500) t.count5xx++;
    if (r.status === 429) tallyHold(t, r, info);
  }
  return t;
}

/** No window admits more than its `X-RateLimit-Limit` (or `limitHint` where none was given). */
function admissionFindings(windows: readonly WindowCount[], limitHint: number | undefined): Finding[] {
  const findings: Finding[] = [];
  for (const w of windows) {
    const limit = w.limit ?? limitHint;
    if (limit !== undefined && w.successes > limit) {
      findings.push(
        finding({
          id: OVERLOAD.id,
          part: OVERLOAD.admission,
          level: 'fail',
          message: `over-admission in the window whose X-RateLimit-Reset is ${w.reset} (probes included)`,
          expected: `at most X-RateLimit-Limit ${limit} requests admitted`,
          observed: `${plural(w.successes, 'request')} admitted`,
        }),
      );
    }
  }
  return findings;
}

/** Every refusal is a 429 with a valid Retry-After, every response carries the three headers, every request is answered. */
function refusalFindings(t: Tally, lost: number, lostDetail?: string): Finding[] {
  const { id, refusals } = OVERLOAD;
  const findings: Finding[] = [];
  if (t.count5xx > 0) {
    const codes = Object.entries(t.refusedByStatus)
      .filter(([c]) => Number(c) >= 500)
      .map(([c, n]) => `${c} ×${n}`)
      .join(', ');
    findings.push(
      finding({ id, part: refusals, level: 'fail', message: 'responses to the bursts were 5xx', expected: '2xx or 429', observed: codes }),
    );
  }
  const other = Object.entries(t.refusedByStatus).filter(([c]) => c !== '429' && Number(c) < 500);
  if (other.length) {
    findings.push(
      finding({
        id,
        part: refusals,
        level: 'fail',
        message: 'refused requests must be 429 Too Many Requests',
        expected: '429',
        observed: other.map(([c, n]) => `${c} ×${n}`).join(', '),
      }),
    );
  }
  for (const [reason, count] of t.badRetryAfter) {
    findings.push(
      finding({
        id,
        part: refusals,
        level: 'fail',
        message: `${plural(count, '429 response')} without a valid Retry-After`,
        expected: 'Retry-After as delta-seconds or an HTTP-date',
        observed: reason,
      }),
    );
  }
  for (const [missing, { count, example }] of t.missingHeaders) {
    findings.push(
      finding({
        id,
        part: refusals,
        level: 'fail',
        message: `${plural(count, 'response')} (e.g. a ${example}) lacked headers`,
        expected: 'the three X-RateLimit-* headers on every response',
        observed: `${missing} missing`,
      }),
    );
  }
  if (lost > 0) {
    findings.push(
      finding({
        id,
        part: refusals,
        level: 'fail',
        message: 'requests of the bursts got no answer within the request timeout',
        expected: 'every request answered (a refusal with 429)',
        observed: `${plural(lost, 'request')} unanswered${lostDetail ? ` (${lostDetail})` : ''}`,
      }),
    );
  }
  return findings;
}

/**
 * Judges every response on the key over the check (probes and bursts, in order). Pure: responses
 * carry lowercased headers and their receipt time; `lost` counts requests without an answer.
 */
export function judgeWindows(
  responses: readonly RecordedResponse[],
  options: { limitHint?: number; lost?: number; lostDetail?: string } = {},
): WindowJudgement {
  const t = tallyResponses(responses);
  const windows = [...t.groups.values()].sort((a, b) => a.reset.localeCompare(b.reset));
  const findings = [...admissionFindings(windows, options.limitHint), ...refusalFindings(t, options.lost ?? 0, options.lostDetail)];
  const { successes, refused, refusedByStatus, count5xx, notBefore, largestRetryAfterS } = t;
  return { findings, windows, successes, refused, refusedByStatus, count5xx, notBefore, largestRetryAfterS };
}

const SHOWN_HEADERS: ReadonlyArray<[string, string]> = [
  ['x-ratelimit-limit', 'X-RateLimit-Limit'],
  ['x-ratelimit-remaining', 'X-RateLimit-Remaining'],
  ['x-ratelimit-reset', 'X-RateLimit-Reset'],
  ['retry-after', 'Retry-After'],
  ['date', 'Date'],
];

/** One evidence line for a probe: status and the rate-limit headers (never a key). */
export function describeProbe(what: string, r: ProbeResponse | ProbeFailure): string {
  if (!r.ok) return `${what} → no response (${r.error})`;
  const parts = [`${what} → ${r.status}`];
  for (const [name, shown] of SHOWN_HEADERS) {
    if (r.headers[name] !== undefined) parts.push(`${shown}: ${r.headers[name]}`);
  }
  return parts.join(', ');
}

/** Thrown inside the check to end it with a finding (never escapes `runOverloadCheck`). */
class Stop extends Error {
  readonly f: Finding;
  constructor(f: Finding) {
    super(f.message);
    this.f = f;
  }
}

/** One overload check as it goes. */
interface Ctx {
  config: OverloadConfig;
  progress: (line: string) => void;
  findings: Finding[];
  evidence: string[];
  figures: OverloadFigures;
  authorization: string;
  listUrl: string;
  listPath: string;
  /** Every response on the key, in order (the opening response, probes and bursts). */
  seen: RecordedResponse[];
  /** When each answer on the key arrived (local ms): the run's own requests, the 429 sequence's included. */
  ownAt: number[];
  /** The longest Reset − Date seen on the key (s): a lower bound of its window length. */
  longestResetS: number;
  /**
   * Requests without an answer that are evidence against the server (`lostOf`), by kind, and the
   * slowest answer of the bursts that lost requests (for the finding).
   */
  lostKinds: { timeouts: number; connectionErrors: number; abandoned: number; probes: number; slowestAnswerMs: number };
  /** Requests without an answer in time whose timeout a process held from running judged (not evidence), and the longest hold. */
  held: { count: number; longestMs: number };
  /**
   * Requests without an answer in time in bursts whose answers took more than half of
   * LOAD_TIMEOUT_S (not evidence: `burstLosses`), and the slowest of those answers.
   */
  slow: { count: number; slowestMs: number };
  /** Local time before which nothing is sent on the key (a 429's Retry-After). */
  notBefore: number;
  /** Local time at which the latest window seen resets (its Reset judged against the response's Date). */
  resetAt: number;
  /** A burst's 429 is pending: the next probe after it judges the recovery. */
  refusedSinceProbe: boolean;
  /** 429s outside the plan (no X-RateLimit-* at all: another limit than the key's, outside-plan.ts): never judged as the key's refusals. */
  outside: RecordedResponse[];
  other: OtherKeyFigures | null;
}

function newCtx(config: OverloadConfig): Ctx {
  const listUrl = join(config.baseUrl, 'inventory');
  return {
    config,
    progress: config.progress ?? ((line: string) => console.log(line)),
    findings: [],
    evidence: [],
    figures: {
      limit: null,
      bursts: [],
      windows: [],
      successes: 0,
      refused: 0,
      refusedByStatus: {},
      largestRetryAfterS: null,
      waitedS: 0,
      foreign: [],
      recovered: null,
      otherKey: null,
      tls: new URL(config.baseUrl).protocol !== 'https:' ? 'none' : config.tls?.insecure ? 'not verified' : 'verified',
      requests: { total: 0, probes: 0, burst: 0, otherKey: 0 },
      durationS: 0,
    },
    authorization: `Bearer ${config.rateLimitKey}`,
    listUrl,
    listPath: new URL(listUrl).pathname,
    seen: [],
    ownAt: [...(config.earlier?.answeredAtMs ?? [])],
    longestResetS: config.earlier?.longestResetS ?? 1,
    lostKinds: { timeouts: 0, connectionErrors: 0, abandoned: 0, probes: 0, slowestAnswerMs: 0 },
    held: { count: 0, longestMs: 0 },
    slow: { count: 0, slowestMs: 0 },
    notBefore: 0,
    resetAt: 0,
    refusedSinceProbe: false,
    outside: [],
    other: config.otherKey
      ? { probes: 0, statuses: [], latenciesMs: [], maxLatencyMs: null, thresholdMs: config.otherKeyThresholdMs ?? null }
      : null,
  };
}

/** Takes one response on the key into account (`counted`: already among `earlier`): the run's own requests, a 429's hold, the window's reset. */
function note(ctx: Ctx, r: RecordedResponse, counted = false): void {
  if (!counted) ctx.ownAt.push(r.receivedAt);
  if (outsidePlan(r)) return void ctx.outside.push(r);
  const ok = r.status >= 200 && r.status < 300;
  if (!ok && r.status !== 429) return;
  ctx.seen.push(r);
  const info = parseRateLimitHeaders(r.headers);
  if (!ok) {
    ctx.notBefore = Math.max(ctx.notBefore, judgeWindows([r]).notBefore);
    ctx.refusedSinceProbe = true;
  }
  const untilReset = secondsUntilReset(info);
  if (untilReset !== undefined) {
    ctx.resetAt = Math.max(ctx.resetAt, r.receivedAt + untilReset * 1000);
    ctx.longestResetS = Math.max(ctx.longestResetS, Math.min(untilReset, ctx.config.maxRetryAfterS));
  }
}

/**
 * The window length the run's own requests are accounted over (s): the longest Reset − Date seen
 * (a lower bound), and a minute when the Limit is the per-minute figure of the plan the user named
 * (spec, Limits: "Requests per minute"), since a bucket or GCRA may show only its next token in
 * Reset. A longer window counts more of the run's requests as its own: it can only leave another
 * client unseen, never invent one.
 */
export function accountingWindowS(longestResetS: number, limit: number, planMinuteLimit: number | undefined): number {
  return planMinuteLimit !== undefined && limit === planMinuteLimit ? Math.max(longestResetS, 60) : longestResetS;
}

/**
 * The run's own requests on the key that may still count at `atMs`: every answer within two
 * window lengths before it (a weighted counter still weighs the previous window; a sliding log,
 * a bucket and GCRA forget within one), plus a second for the resolution of Reset and Date.
 */
export function ownRequestsAt(answeredAtMs: readonly number[], atMs: number, windowS: number): number {
  const since = atMs - (2 * windowS + 1) * 1000;
  return answeredAtMs.filter((t) => t > since && t <= atMs).length;
}

/** Waits until `untilMs`, sending nothing; a wait beyond MAX_RETRY_AFTER_S stops the check, not certified. */
async function wait(ctx: Ctx, untilMs: number, what: string): Promise<void> {
  const ms = untilMs - Date.now();
  if (ms <= 0) return;
  if (ms > ctx.config.maxRetryAfterS * 1000) {
    throw new Stop(
      finding({
        id: OVERLOAD.id,
        part: OVERLOAD.recovery,
        level: 'not-certified',
        message: `${KEY} must wait for ${what} before the next request; the check stops there and sends nothing more on it`,
        expected: `a wait of at most MAX_RETRY_AFTER_S=${ctx.config.maxRetryAfterS} s`,
        observed: `${Math.ceil(ms / 1000)} s`,
      }),
    );
  }
  await waitWithProgress(ms, `${what} on ${KEY}`, ctx.progress);
  ctx.figures.waitedS += ms / 1000;
}

function certificateStop(observed: string): Stop {
  return new Stop(
    finding({
      id: OVERLOAD.id,
      part: OVERLOAD.refusals,
      level: 'fail',
      message: `the target's TLS certificate was refused; nothing carrying ${KEY} was sent`,
      expected: 'a certificate trusted by Node (NODE_EXTRA_CA_CERTS for a private CA), or INSECURE_TLS=1',
      observed,
    }),
  );
}

/** One request on the key, after every pending Retry-After, under its own grant. */
async function probeKey(ctx: Ctx, what: string): Promise<ProbeResponse> {
  await wait(ctx, ctx.notBefore, 'the Retry-After of a 429');
  const lease = observing(await ctx.config.pacer.acquire(KEY, { mode: 'exhaust', count: 1 }), ctx.config.baseUrl);
  ctx.figures.requests.probes++;
  const r = await probe({ url: ctx.listUrl, authorization: ctx.authorization, timeoutS: ctx.config.timeoutS, tls: ctx.config.tls });
  if (r.ok) lease.observe(r);
  await lease.release();
  ctx.evidence.push(describeProbe(`${what}: GET ${ctx.listPath} (${KEY})`, r));
  if (!r.ok) {
    if (r.certificate) throw certificateStop(r.error);
    if (r.heldMs !== undefined) throw new Stop(heldFinding(OVERLOAD.id, OVERLOAD.refusals, 1, r.heldMs));
    const other = r.timedOut ? await listOnOtherKey(ctx) : undefined;
    if (r.timedOut && !answeredAtOnce(other, ctx.config.timeoutS)) throw new Stop(slowProbeFinding(r.error, other));
    ctx.lostKinds.probes++;
    throw new Stop(
      finding({
        id: OVERLOAD.id,
        part: OVERLOAD.refusals,
        level: 'fail',
        message: `the probe got no answer`,
        expected: 'an answer within the request timeout',
        observed: other?.ok
          ? `${r.error}; the list on ${OTHER}, asked for right after it, came back in ${Math.round(other.latencyMs)} ms`
          : r.error,
      }),
    );
  }
  // A probe answered otherwise (an unusable key, a 5xx) ends the check with its own finding.
  note(ctx, { step: 'probe', status: r.status, headers: r.headers, receivedAt: r.receivedAt });
  if (ctx.outside.length) throw stopOutside(ctx, what);
  return r;
}

/** The probe's status as the check needs it: a 2xx with usable Limit and Remaining, else a Stop. */
function usableProbe(ctx: Ctx, first: ProbeResponse, n: number): { limit: number; remaining: number; window: string } {
  const { id, admission, refusals, recovery } = OVERLOAD;
  if (first.status === 429) {
    throw new Stop(
      finding({
        id,
        part: recovery,
        level: 'fail',
        message: `after waiting its Retry-After the key still got 429`,
        expected: '2xx once Retry-After has passed',
        observed: describeProbe(`window ${n}, probe`, first),
      }),
    );
  }
  if (first.status >= 500)
    throw new Stop(
      finding({
        id,
        part: refusals,
        level: 'fail',
        message: 'the probe before a burst got a 5xx',
        expected: '2xx or 429',
        observed: String(first.status),
      }),
    );
  if (first.status < 200 || first.status >= 300) {
    throw new Stop(
      finding({
        id,
        part: admission,
        level: 'not-certified',
        message: `RATE_LIMIT_KEY must be a valid key; the burst was not sent`,
        expected: `GET ${ctx.listPath} with it answers 2xx`,
        observed: `${first.status}`,
      }),
    );
  }
  const info = parseRateLimitHeaders(first.headers);
  if (info.limit === undefined || info.remaining === undefined) {
    throw new Stop(
      finding({
        id,
        part: refusals,
        level: 'fail',
        message: `the probe's rate-limit headers cannot size the burst`,
        expected: 'X-RateLimit-Limit and X-RateLimit-Remaining as integers',
        observed: `${info.missing.join(', ') || 'present'}${info.problems.length ? `; ${info.problems.join('; ')}` : ''}`,
      }),
    );
  }
  return { limit: info.limit, remaining: info.remaining, window: info.raw.reset ?? '(none)' };
}

/**
 * Opens window `n` for a burst: waits for its aimed start (the latest of every pending
 * Retry-After and the previous window's Reset, judged against its response's Date), probes, and
 * accepts the window unless its Remaining is below what the run's own requests explain
 * (`ownRequestsAt`): then another consumer uses the limit, and the check stops, not certified.
 * A partly used window whose Reset lies beyond MAX_RETRY_AFTER_S (a longer quota, such as the
 * day's, spent by earlier runs) is named as that, not certified too.
 */
async function openWindow(ctx: Ctx, n: number): Promise<{ limit: number; remaining: number }> {
  const pending = ctx.refusedSinceProbe;
  if (n > 1) await wait(ctx, Math.max(ctx.notBefore, ctx.resetAt + AIM_MARGIN_MS), 'the start of a fresh window (X-RateLimit-Reset)');
  let first = await probeKey(ctx, `window ${n}, probe`);
  // Refused (the key was limited already): its Retry-After is waited out (nothing sent before) and the key tried once more.
  if (first.status === 429) first = await probeKey(ctx, `window ${n}, after Retry-After`);
  const probe = usableProbe(ctx, first, n);
  if (pending) ctx.figures.recovered ??= true;
  ctx.refusedSinceProbe = false;
  const windowS = accountingWindowS(ctx.longestResetS, probe.limit, ctx.config.planMinuteLimit);
  const own = ownRequestsAt(ctx.ownAt, first.receivedAt, windowS);
  const unexplained = probe.limit - own - probe.remaining;
  if (unexplained <= 0) return probe;
  ctx.figures.foreign.push({ window: probe.window, requests: unexplained });
  const untilReset = secondsUntilReset(parseRateLimitHeaders(first.headers));
  if (untilReset !== undefined && untilReset > ctx.config.maxRetryAfterS)
    await wait(ctx, first.receivedAt + untilReset * 1000, partlyUsed(first, probe));
  throw new Stop(
    finding({
      id: OVERLOAD.id,
      part: OVERLOAD.admission,
      level: 'not-certified',
      message: `${KEY} is used by another client, or its limit is shared with other keys (this run sends on API_KEY and LOAD_KEY meanwhile): its X-RateLimit-Remaining fell by ${unexplained} more than this run sent on it; nothing more is sent on it`,
      expected: `X-RateLimit-Remaining ≥ Limit ${probe.limit} − the ${own} requests this run sent on ${KEY} in the last ${2 * windowS + 1} s (two window lengths)`,
      observed: `Remaining ${probe.remaining} (Reset ${probe.window})`,
    }),
  );
}

/** What the wait for the Reset of a partly used window is for (a quota that resets beyond MAX_RETRY_AFTER_S). */
function partlyUsed(first: ProbeResponse, probe: { limit: number; remaining: number }): string {
  const untilReset = secondsUntilReset(parseRateLimitHeaders(first.headers)) ?? 0;
  return `X-RateLimit-Reset of a partly used window (Remaining ${probe.remaining} of ${probe.limit}, a quota the key has partly spent that resets only in ${untilReset} s (for example the plan's day quota, spent by earlier runs on this key: run again after that Reset, or with another RATE_LIMIT_KEY))`;
}

/**
 * The list on the other key, asked for right after a probe on the key got no answer in time (never
 * on the key itself: the probe may have met a 429 the run never saw); undefined without the other
 * key, or when the pacer holds it at its reserve.
 */
async function listOnOtherKey(ctx: Ctx): Promise<ProbeResponse | ProbeFailure | undefined> {
  const { config } = ctx;
  if (!config.otherKey) return undefined;
  let lease;
  try {
    lease = observing(await config.pacer.acquire(OTHER, { mode: 'paced', count: 1 }), config.baseUrl);
  } catch {
    return undefined;
  }
  ctx.figures.requests.otherKey++;
  const r = await probe({ url: ctx.listUrl, authorization: `Bearer ${config.otherKey}`, timeoutS: config.timeoutS, tls: config.tls });
  if (r.ok) lease.observe(r);
  await lease.release();
  return r;
}

/** The server answers other requests: `other` came back within half of LOAD_TIMEOUT_S. */
function answeredAtOnce(other: ProbeResponse | ProbeFailure | undefined, timeoutS: number): boolean {
  return !!other?.ok && other.latencyMs <= (timeoutS * 1000) / 2;
}

/**
 * A probe on the key without an answer in time, when the list on the other key, asked for right
 * after it, did not come back within half of LOAD_TIMEOUT_S either (or could not be asked for):
 * the run cannot tell a hang of the probe from a server, or a runner, too slow to answer any
 * request. As the suites judge a request that timed out (suites/fixtures/api.ts).
 */
function slowProbeFinding(error: string, other: ProbeResponse | ProbeFailure | undefined): Finding {
  const list = `the list on ${OTHER}, asked for right after it,`;
  const seen = !other
    ? `${list} could not be asked for (no ${OTHER}, or it is at its reserve)`
    : other.ok
      ? `${list} took ${Math.round(other.latencyMs)} ms, more than half of LOAD_TIMEOUT_S`
      : `${list} got no answer either (${other.error})`;
  return finding({
    id: OVERLOAD.id,
    part: OVERLOAD.refusals,
    level: 'not-certified',
    message: `the probe got no answer (${error}), and ${seen}: the run cannot tell a hang of the probe from a server too slow, too busy or down to answer any request`,
    expected: 'an answer within the request timeout; one without fails LOAD-02 when the server answers other requests at once',
    observed: error,
  });
}

/** One paced request on the other key while a burst runs (never meeting a 429 on it). */
async function watchOtherKey(ctx: Ctx): Promise<void> {
  const { other } = ctx;
  if (!other) return;
  // None when the other key is at its reserve: it is not spent on a should-level check.
  const r = await listOnOtherKey(ctx);
  if (!r) return;
  other.probes++;
  other.latenciesMs.push(r.latencyMs);
  other.statuses.push(r.ok ? r.status : 0);
}

/** Burst `n`: exactly Remaining + 1 concurrent requests, nothing more once a 429 arrived. */
async function burst(ctx: Ctx, n: number, remaining: number): Promise<void> {
  const { config } = ctx;
  const size = remaining + 1;
  if (size > config.burstMax) {
    throw new Stop(
      finding({
        id: OVERLOAD.id,
        part: OVERLOAD.admission,
        level: 'not-certified',
        message: `the burst would exceed LOAD_BURST_MAX`,
        expected: `Remaining + 1 ≤ LOAD_BURST_MAX=${config.burstMax}`,
        observed: `Remaining + 1 = ${size}`,
      }),
    );
  }
  const lease = observing(await config.pacer.acquire(KEY, { mode: 'exhaust', count: size }), config.baseUrl);
  if (lease.granted < size) {
    await lease.release();
    const why = lease.limitedBy
      ? `the run-wide pacer did not grant the whole burst at once: ${lease.limitedBy}`
      : 'the run-wide pacer did not grant the whole burst at once';
    throw new Stop(
      finding({
        id: OVERLOAD.id,
        part: OVERLOAD.admission,
        level: 'not-certified',
        message: why,
        expected: `Remaining + 1 = ${size} requests granted together`,
        observed: `${lease.granted} granted`,
      }),
    );
  }
  const connections = Math.min(config.burstConnections, size);
  const run = runLoad({
    label: `overload burst ${n}/${config.windows}`,
    url: config.baseUrl,
    steps: [{ name: `GET ${ctx.listPath}`, path: ctx.listPath }],
    authorization: ctx.authorization,
    model: { kind: 'burst', count: size },
    connections,
    maxRequests: size,
    // A larger burst goes in waves, one after another (engine.ts): each may take a request timeout.
    maxDurationS: Math.ceil(size / connections) * config.timeoutS + 5,
    timeoutS: config.timeoutS,
    recordAll: true,
    sampleSize: 0,
    loopbackOnly: config.loopbackOnly,
    tls: config.tls,
    progress: ctx.progress,
    stopOnStatus: [429],
    onResponse: (r) => lease.observe(r),
  });
  let result;
  try {
    [result] = await Promise.all([run, n === 1 ? watchOtherKey(ctx) : Promise.resolve()]);
  } finally {
    await lease.release();
  }
  ctx.figures.requests.burst += result.figures.sent;
  if (result.tlsError) throw certificateStop(result.tlsError);
  const f = result.figures;
  const burstLost = f.socketErrors + f.timeouts + f.unanswered;
  burstLosses(ctx, f, config.timeoutS);
  for (const r of result.responses) note(ctx, r);
  // A request without an answer may have counted too: the run's own, as of the burst's end.
  for (let i = 0; i < burstLost; i++) ctx.ownAt.push(Date.now());
  const resets = [
    ...new Set(
      result.responses.filter((r) => r.status >= 200 && r.status < 300).map((r) => parseRateLimitHeaders(r.headers).raw.reset ?? '(none)'),
    ),
  ];
  ctx.figures.bursts.push({
    remainingAtProbe: remaining,
    size,
    admitted: f.count2xx,
    refused: f.requests - f.count2xx,
    lost: burstLost,
    durationS: f.durationS,
    resets,
    sendSpreadMs: f.sendSpreadMs,
    firstAnswerMs: f.firstAnswerMs,
  });
  ctx.evidence.push(
    `window ${n}: burst of Remaining + 1 = ${size} × GET ${ctx.listPath} on ${f.connections} connections in ${f.durationS} s: ` +
      `${f.count2xx} × 2xx, ${
        Object.entries(f.statusCodes)
          .filter(([c]) => !c.startsWith('2'))
          .map(([c, k]) => `${k} × ${c}`)
          .join(', ') || 'no refusal'
      }` +
      `${f.sent < size ? ` (${size - f.sent} not sent after the 429)` : ''}, lost ${burstLost}; ${describeSpread(f)}`,
  );
  if (ctx.outside.length) throw stopOutside(ctx, `burst ${n}`);
}

/** A 429 outside the plan met in `what`: what it breaks joins the findings, the check stops not certified. */
function stopOutside(ctx: Ctx, what: string): Stop {
  const [stop, ...broken] = outsidePlanFindings(ctx.outside, {
    id: OVERLOAD.id,
    what,
    listUrl: ctx.listUrl,
    listPath: ctx.listPath,
    keyLabel: KEY,
  });
  ctx.findings.push(...broken);
  return new Stop(stop!);
}

/**
 * Counts a burst's requests without an answer (`ctx.lostKinds`, evidence against the server) and those
 * that are not evidence:
 * - a timeout judged by a process held from running is the runner's delay (`ctx.held`);
 * - a request not answered in time beside answers that themselves took more than half of the
 *   timeout (`ctx.slow`): the server answered the burst, only slowly, and the run cannot tell a
 *   request it lost from one a server, or a runner, too slow for a burst of this size would have
 *   answered later. Beside answers within half of it, the server answered the rest of the burst
 *   at once, and a request it left unanswered is its own (HTTP rules: never a hang). A burst that
 *   got no answer at all is judged as before: lost.
 * A connection error is the server's in either case.
 */
function burstLosses(ctx: Ctx, f: LoadFigures, timeoutS: number): void {
  const notAnswered = f.timeouts - f.heldTimeouts + f.unanswered;
  const slowAnswers = f.requests > 0 && f.latencyMs.max > (timeoutS * 1000) / 2;
  ctx.held.count += f.heldTimeouts;
  ctx.held.longestMs = Math.max(ctx.held.longestMs, f.longestHoldMs);
  ctx.lostKinds.connectionErrors += f.socketErrors;
  if (notAnswered > 0 && slowAnswers) {
    ctx.slow.count += notAnswered;
    ctx.slow.slowestMs = Math.max(ctx.slow.slowestMs, Math.round(f.latencyMs.max));
  } else {
    ctx.lostKinds.timeouts += f.timeouts - f.heldTimeouts;
    ctx.lostKinds.abandoned += f.unanswered;
  }
  if (f.socketErrors + notAnswered > 0)
    ctx.lostKinds.slowestAnswerMs = Math.max(ctx.lostKinds.slowestAnswerMs, Math.round(f.latencyMs.max));
}

/** The requests without an answer that are evidence against the server: every kind of `lostKinds`. */
function lostOf(ctx: Ctx): number {
  const k = ctx.lostKinds;
  return k.timeouts + k.connectionErrors + k.abandoned + k.probes;
}

/** What the requests without an answer were, in words (the finding's observed value). */
function lostDetailOf(k: Ctx['lostKinds']): string {
  const parts = [
    `timeouts ${k.timeouts}`,
    `connection errors ${k.connectionErrors}`,
    `abandoned ${k.abandoned}`,
    ...(k.probes ? [`probes ${k.probes}`] : []),
  ];
  return `${parts.join(', ')}; the slowest answer of those bursts ${k.slowestAnswerMs} ms`;
}

/** A burst's requests without an answer in time beside slow answers (`burstLosses`): not certified, never failed. */
function slowBurstFinding(count: number, slowestMs: number, timeoutS: number): Finding {
  return finding({
    id: OVERLOAD.id,
    part: OVERLOAD.refusals,
    level: 'not-certified',
    message: `${plural(count, 'request')} of the bursts got no answer within LOAD_TIMEOUT_S=${timeoutS}, while the answers the bursts did get took up to ${slowestMs} ms, more than half of it: the run cannot tell a request the server lost from one a server, or a runner, too slow for a burst of this size would have answered later`,
    expected: 'every request answered; one without an answer fails LOAD-02 beside answers within half of LOAD_TIMEOUT_S',
    observed: `${plural(count, 'request')} unanswered, the slowest answer ${slowestMs} ms`,
  });
}

/** After the last burst, when no later probe judged it: its Retry-After waited out (nothing sent before), then one request. */
async function recover(ctx: Ctx): Promise<void> {
  if (ctx.figures.recovered !== null) return;
  const pending = ctx.refusedSinceProbe;
  let after = await probeKey(ctx, `after the last burst's Retry-After`);
  // No 429 was pending (a limiter that refilled during the burst admitted it all): a 429 now is
  // the limit itself, not a failed recovery; its Retry-After is waited out and the key tried once more.
  if (!pending && after.status === 429) after = await probeKey(ctx, `after the Retry-After of that 429`);
  ctx.figures.recovered = after.status >= 200 && after.status < 300;
  if (!ctx.figures.recovered) {
    ctx.findings.push(
      finding({
        id: OVERLOAD.id,
        part: OVERLOAD.recovery,
        level: 'fail',
        message: `after waiting the largest Retry-After the key did not work again`,
        expected: '2xx',
        observed: describeProbe('probe', after),
      }),
    );
  }
}

/** The judgement over every response, the other key's figures, the evidence lines. */
function summarize(ctx: Ctx, started: number): void {
  const { figures, findings, evidence, other } = ctx;
  const lost = lostOf(ctx);
  const judgement = judgeWindows(ctx.seen, {
    limitHint: figures.limit ?? undefined,
    lost,
    lostDetail: lostDetailOf(ctx.lostKinds),
  });
  findings.push(...judgement.findings);
  const overAdmitted = judgement.findings.some((f) => f.part === OVERLOAD.admission && f.level === 'fail');
  const spread = spreadFinding(figures.bursts, overAdmitted, OVERLOAD.id, OVERLOAD.admission);
  if (spread) findings.push(spread);
  if (ctx.held.count > 0 && lost === 0) findings.push(heldFinding(OVERLOAD.id, OVERLOAD.refusals, ctx.held.count, ctx.held.longestMs));
  if (ctx.slow.count > 0 && lost === 0) findings.push(slowBurstFinding(ctx.slow.count, ctx.slow.slowestMs, ctx.config.timeoutS));
  Object.assign(figures, {
    windows: judgement.windows,
    successes: judgement.successes,
    refused: judgement.refused,
    refusedByStatus: judgement.refusedByStatus,
    largestRetryAfterS: judgement.largestRetryAfterS,
  });
  if (figures.bursts.length) {
    evidence.push(
      `admitted per window vs X-RateLimit-Limit (the opening response and probes included): ${judgement.windows.map((w) => `Reset ${w.reset}: ${w.successes}/${w.limit ?? figures.limit}`).join('; ')}`,
    );
  }
  if (figures.tls === 'not verified') {
    findings.push(
      finding({
        id: OVERLOAD.id,
        level: 'note',
        message: `the target's TLS certificate was not verified`,
        expected: 'a verified certificate',
        observed: 'INSECURE_TLS=1 (the user opted out of verification)',
      }),
    );
  }
  if (other) {
    other.maxLatencyMs = other.latenciesMs.length ? Math.max(...other.latenciesMs) : null;
    figures.otherKey = other;
    evidence.push(
      `${OTHER} during the first burst: ${other.probes} request(s), statuses ${other.statuses.join(', ') || 'none'}, latency max ${other.maxLatencyMs ?? 'n/a'} ms`,
    );
    if (other.thresholdMs !== null && other.maxLatencyMs !== null && other.maxLatencyMs >= other.thresholdMs) {
      findings.push(
        finding({
          id: OVERLOAD.fairnessId,
          part: OVERLOAD.fairness,
          level: 'warn',
          message: `while ${KEY} was exhausted, ${OTHER} waited longer than LOAD_P99_MS`,
          expected: `< ${other.thresholdMs} ms`,
          observed: `${other.maxLatencyMs} ms`,
        }),
      );
    }
    if (other.statuses.some((s) => s === 0 || s >= 500)) {
      findings.push(
        finding({
          id: OVERLOAD.fairnessId,
          part: OVERLOAD.fairness,
          level: 'warn',
          message: `${OTHER} got no answer or a 5xx during the burst`,
          expected: '2xx',
          observed: `statuses ${other.statuses.join(', ')}`,
        }),
      );
    }
  } else {
    findings.push(
      finding({
        id: OVERLOAD.fairnessId,
        part: OVERLOAD.fairness,
        level: 'note',
        message: 'not measured',
        expected: 'API_KEY set and distinct from RATE_LIMIT_KEY',
        observed: 'not set (or the same key)',
      }),
    );
  }
  const requests = figures.requests;
  requests.total = requests.probes + requests.burst + requests.otherKey;
  figures.durationS = Math.round((Date.now() - started) / 100) / 10;
  evidence.push(
    `spent by the overload check: ${requests.probes + requests.burst} requests on ${KEY} (probes ${requests.probes}, bursts ${requests.burst}), ${requests.otherKey} on ${OTHER}, ${figures.durationS} s (waits ${figures.waitedS.toFixed(1)} s)`,
  );
  ctx.progress(`[load] overload: ${requests.total} requests sent in ${figures.durationS} s`);
}

/** Runs the whole overload check against `config.baseUrl`. Never throws for what the server does. */
export async function runOverloadCheck(config: OverloadConfig): Promise<OverloadOutcome> {
  const ctx = newCtx(config);
  const started = Date.now();
  if (config.opening) {
    note(ctx, config.opening, config.earlier !== undefined);
    ctx.evidence.push(
      describeProbe(`the first burst window opens with the last request sent on ${KEY} before this check`, {
        ok: true,
        status: config.opening.status,
        headers: config.opening.headers,
        body: '',
        receivedAt: config.opening.receivedAt,
        latencyMs: 0,
      }),
    );
  }
  try {
    for (let n = 1; n <= config.windows; n++) {
      const { limit, remaining } = await openWindow(ctx, n);
      ctx.figures.limit = limit;
      await burst(ctx, n, remaining);
    }
    await recover(ctx);
  } catch (error) {
    if (error instanceof Stop) ctx.findings.push(error.f);
    else if (error instanceof PacingNotCertified) {
      ctx.findings.push(
        finding({
          id: OVERLOAD.id,
          part: OVERLOAD.recovery,
          level: 'not-certified',
          message: 'the pacer would have to wait longer than MAX_RETRY_AFTER_S',
          expected: `a wait of at most ${config.maxRetryAfterS} s`,
          observed: error.message,
        }),
      );
    } else
      ctx.findings.push(
        finding({
          id: OVERLOAD.id,
          part: OVERLOAD.admission,
          level: 'fail',
          message: 'the check could not run',
          expected: 'a completed run',
          observed: (error as Error).message,
        }),
      );
  }
  summarize(ctx, started);
  return { findings: ctx.findings, evidence: ctx.evidence, figures: ctx.figures };
}
