/**
 * The overload check's recording (suites/load/overload-check.ts): what one run saw on the key and
 * the other key, kept in its context, and the summary that judges it into findings and figures.
 */
import { finding, type Finding } from '../../core/finding.ts';
import type { LoadFigures, RecordedResponse } from './engine.ts';
import { parseRateLimitHeaders, secondsUntilReset } from '../lib/rate-limit.ts';
import { spreadFinding } from './burst-spread.ts';
import { outsidePlan } from './outside-plan.ts';
import { heldFinding, join } from './http.ts';
import { judgeWindows, lostDetailOf, slowBurstFinding } from './overload-judges.ts';
import { KEY, OTHER, type LostKinds, OVERLOAD, type OtherKeyFigures, type OverloadConfig, type OverloadFigures } from './overload-types.ts';

/** One overload check as it goes. */
export interface Ctx {
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
  lostKinds: LostKinds;
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

export function newCtx(config: OverloadConfig): Ctx {
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
export function note(ctx: Ctx, r: RecordedResponse, counted = false): void {
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
export function burstLosses(ctx: Ctx, f: LoadFigures, timeoutS: number): void {
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
export function lostOf(ctx: Ctx): number {
  const k = ctx.lostKinds;
  return k.timeouts + k.connectionErrors + k.abandoned + k.probes;
}

/** The judgement over every response, the other key's figures, the evidence lines. */
export function summarize(ctx: Ctx, started: number): void {
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
