/**
 * The overload check's pure judges (suites/load/overload-check.ts): the responses on the key added
 * up per window and judged (spec: Limits rules 1, 3 and 5; Errors, 429 row), the accounting of the
 * run's own requests, and the findings of slow or lost answers. No traffic, no clock.
 */
import { finding, type Finding } from '../../core/finding.ts';
import type { RecordedResponse } from './engine.ts';
import { parseRateLimitHeaders, secondsUntilReset, type RateLimitInfo } from '../lib/rate-limit.ts';
import { holdAfter429 } from '../lib/retry-after.ts';
import type { ProbeFailure, ProbeResponse } from './http.ts';
import {
  KEY,
  type LostKinds,
  OTHER,
  OVERLOAD,
  RESET_MARGIN_MS,
  RETRY_AFTER_MARGIN_MS,
  Stop,
  type WindowCount,
  type WindowJudgement,
  plural,
} from './overload-types.ts';

/** What the responses on the key add up to, before judgement. */
export interface Tally {
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
export function countSuccess(groups: Map<string, WindowCount>, info: RateLimitInfo): void {
  if (info.reset !== undefined && (info.dateMs === undefined || info.dateMs >= (info.reset - 1) * 1000)) return;
  const key = info.raw.reset ?? '(none)';
  const group = groups.get(key) ?? { reset: key, successes: 0, limit: null };
  group.successes++;
  if (info.limit !== undefined) group.limit = Math.max(group.limit ?? 0, info.limit);
  groups.set(key, group);
}

/** Holds the key after one 429 until its Retry-After (RFC 9110 §10.2.3), or without a usable one until the reported reset, else a conservative minute. */
export function tallyHold(t: Tally, r: RecordedResponse, info: RateLimitInfo): void {
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
export function tallyResponses(responses: readonly RecordedResponse[]): Tally {
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
export function admissionFindings(windows: readonly WindowCount[], limitHint: number | undefined): Finding[] {
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
export function refusalFindings(t: Tally, lost: number, lostDetail?: string): Finding[] {
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

export const SHOWN_HEADERS: ReadonlyArray<[string, string]> = [
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

export function certificateStop(observed: string): Stop {
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

/** What the wait for the Reset of a partly used window is for (a quota that resets beyond MAX_RETRY_AFTER_S). */
export function partlyUsed(first: ProbeResponse, probe: { limit: number; remaining: number }): string {
  const untilReset = secondsUntilReset(parseRateLimitHeaders(first.headers)) ?? 0;
  return `X-RateLimit-Reset of a partly used window (Remaining ${probe.remaining} of ${probe.limit}, a quota the key has partly spent that resets only in ${untilReset} s (for example the plan's day quota, spent by earlier runs on this key: run again after that Reset, or with another RATE_LIMIT_KEY))`;
}

/** The server answers other requests: `other` came back within half of LOAD_TIMEOUT_S. */
export function answeredAtOnce(other: ProbeResponse | ProbeFailure | undefined, timeoutS: number): boolean {
  return !!other?.ok && other.latencyMs <= (timeoutS * 1000) / 2;
}

/**
 * A probe on the key without an answer in time, when the list on the other key, asked for right
 * after it, did not come back within half of LOAD_TIMEOUT_S either (or could not be asked for):
 * the run cannot tell a hang of the probe from a server, or a runner, too slow to answer any
 * request. As the suites judge a request that timed out (suites/fixtures/pipeline/classify.ts).
 */
export function slowProbeFinding(error: string, other: ProbeResponse | ProbeFailure | undefined): Finding {
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

/** What the requests without an answer were, in words (the finding's observed value). */
export function lostDetailOf(k: LostKinds): string {
  const parts = [
    `timeouts ${k.timeouts}`,
    `connection errors ${k.connectionErrors}`,
    `abandoned ${k.abandoned}`,
    ...(k.probes ? [`probes ${k.probes}`] : []),
  ];
  return `${parts.join(', ')}; the slowest answer of those bursts ${k.slowestAnswerMs} ms`;
}

/** A burst's requests without an answer in time beside slow answers (`burstLosses`): not certified, never failed. */
export function slowBurstFinding(count: number, slowestMs: number, timeoutS: number): Finding {
  return finding({
    id: OVERLOAD.id,
    part: OVERLOAD.refusals,
    level: 'not-certified',
    message: `${plural(count, 'request')} of the bursts got no answer within LOAD_TIMEOUT_S=${timeoutS}, while the answers the bursts did get took up to ${slowestMs} ms, more than half of it: the run cannot tell a request the server lost from one a server, or a runner, too slow for a burst of this size would have answered later`,
    expected: 'every request answered; one without an answer fails LOAD-02 beside answers within half of LOAD_TIMEOUT_S',
    observed: `${plural(count, 'request')} unanswered, the slowest answer ${slowestMs} ms`,
  });
}
