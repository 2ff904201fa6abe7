/**
 * The overload check's core (spec: Limits rules 1, 3 and 5; Errors, 429 row; Authentication rule
 * 5), callable without Playwright so that `tests/load/` can run it against any limiter.
 *
 * A limit checked without earning a ban, repeated over `windows` windows:
 * 1. Fresh window: a probe on `RATE_LIMIT_KEY` after the previous window's Reset (and every
 *    pending Retry-After) has passed; a partly used window is waited out until its Reset.
 * 2. Burst: exactly `Remaining + 1` concurrent requests right after the probe. An exact limiter
 *    admits Remaining and refuses one; a racy one admits more. Nothing is sent after the 429.
 * 3. Judgement (`judgeWindows`): every 2xx of a window counts from its first request, probes
 *    included, grouped by the `X-RateLimit-Reset` they share (a fixed window; sliding windows and
 *    token buckets move it, and are never failed for that); no group may exceed its
 *    `X-RateLimit-Limit`. Every refusal is a 429 with a valid Retry-After and the three headers.
 * 4. Recovery: after the last burst its Retry-After is waited out, then one request must succeed.
 * The load lock is set aside during every wait (a capacity run fits there, never during a burst).
 * Every request goes through the pacer (`pacing.ts`). A wait longer than `maxRetryAfterS`, a burst
 * larger than `burstMax` or an unusable key make LOAD-02 not certified, never failed.
 */
import { finding, type Finding } from '../lib/finding.ts';
import { runLoad, type LoadFigures, type RecordedResponse, type TlsOptions } from '../lib/load.ts';
import { parseRateLimitHeaders, secondsUntilReset } from '../lib/rate-limit.ts';
import { parseRetryAfter } from '../lib/retry-after.ts';
import { join, probe, waitWithProgress, type ProbeFailure, type ProbeResponse } from './http.ts';
import { isPacerWaitTooLong, processPacer, type LoadPacer } from './pacing.ts';
import type { LoadLock } from './shared.ts';

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
  /** The run-wide pacer (default: one for this process). */
  pacer?: LoadPacer;
  /**
   * The load lock this check holds (`shared.ts`): set aside while it waits out a Retry-After or a
   * Reset, sending nothing, so that a capacity run fits in the wait and never overlaps a burst.
   */
  lock?: LoadLock;
  progress?: (line: string) => void;
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

/**
 * Judges every response on the key over the check (probes and bursts, in order). Pure: responses
 * carry lowercased headers and their receipt time; `lost` counts requests without an answer.
 */
export function judgeWindows(responses: readonly RecordedResponse[], options: { limitHint?: number; lost?: number } = {}): WindowJudgement {
  const { id, admission, refusals } = OVERLOAD;
  const findings: Finding[] = [];
  const groups = new Map<string, WindowCount>();
  const missingHeaders = new Map<string, { count: number; example: number }>();
  const badRetryAfter = new Map<string, number>();
  const refusedByStatus: Record<string, number> = {};
  let successes = 0;
  let refused = 0;
  let count5xx = 0;
  let notBefore = 0;
  let largestRetryAfterS: number | null = null;

  for (const r of responses) {
    const info = parseRateLimitHeaders(r.headers);
    if (info.missing.length) {
      const entry = missingHeaders.get(info.missing.join(', ')) ?? { count: 0, example: r.status };
      entry.count++;
      missingHeaders.set(info.missing.join(', '), entry);
    }
    if (r.status >= 200 && r.status < 300) {
      successes++;
      const key = info.raw.reset ?? '(none)';
      const group = groups.get(key) ?? { reset: key, successes: 0, limit: null };
      group.successes++;
      if (info.limit !== undefined) group.limit = Math.max(group.limit ?? 0, info.limit);
      groups.set(key, group);
      continue;
    }
    refused++;
    refusedByStatus[r.status] = (refusedByStatus[r.status] ?? 0) + 1;
    if (r.status >= 500) count5xx++;
    if (r.status !== 429) continue;
    const untilReset = secondsUntilReset(info);
    const retry = parseRetryAfter(r.headers['retry-after'], r.headers.date, { secondsUntilReset: untilReset, nowMs: r.receivedAt });
    let until: number;
    if (retry.ok) {
      until = r.receivedAt + retry.seconds * 1000 + RETRY_AFTER_MARGIN_MS;
      largestRetryAfterS = Math.max(largestRetryAfterS ?? 0, retry.seconds);
    } else {
      badRetryAfter.set(retry.reason, (badRetryAfter.get(retry.reason) ?? 0) + 1);
      // No usable Retry-After: hold until the reported reset, else a conservative minute.
      until = r.receivedAt + (untilReset !== undefined && untilReset > 0 ? untilReset * 1000 + RESET_MARGIN_MS : 60_000);
    }
    notBefore = Math.max(notBefore, until);
  }

  const windows = [...groups.values()].sort((a, b) => a.reset.localeCompare(b.reset));
  for (const w of windows) {
    const limit = w.limit ?? options.limitHint;
    if (limit !== undefined && w.successes > limit) {
      findings.push(
        finding(id, admission, 'fail', `over-admission in the window whose X-RateLimit-Reset is ${w.reset} (probes included)`,
          `at most X-RateLimit-Limit ${limit} requests admitted`, `${plural(w.successes, 'request')} admitted`),
      );
    }
  }
  if (count5xx > 0) {
    const codes = Object.entries(refusedByStatus).filter(([c]) => Number(c) >= 500).map(([c, n]) => `${c} ×${n}`).join(', ');
    findings.push(finding(id, refusals, 'fail', 'responses to the bursts were 5xx', '2xx or 429', codes));
  }
  const other = Object.entries(refusedByStatus).filter(([c]) => c !== '429' && Number(c) < 500);
  if (other.length) {
    findings.push(finding(id, refusals, 'fail', 'refused requests must be 429 Too Many Requests', '429', other.map(([c, n]) => `${c} ×${n}`).join(', ')));
  }
  for (const [reason, count] of badRetryAfter) {
    findings.push(finding(id, refusals, 'fail', `${plural(count, '429 response')} without a valid Retry-After`, 'Retry-After as delta-seconds or an HTTP-date', reason));
  }
  for (const [missing, { count, example }] of missingHeaders) {
    findings.push(
      finding(id, refusals, 'fail', `${plural(count, 'response')} (e.g. a ${example}) lacked headers`, 'the three X-RateLimit-* headers on every response', `${missing} missing`),
    );
  }
  const lost = options.lost ?? 0;
  if (lost > 0) {
    findings.push(finding(id, refusals, 'fail', 'requests of the bursts got no answer within the request timeout', 'every request answered (a refusal with 429)', `${plural(lost, 'request')} unanswered`));
  }
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
  constructor(readonly f: Finding) {
    super(f.message);
  }
}

/** Runs the whole overload check against `config.baseUrl`. Never throws for what the server does. */
export async function runOverloadCheck(config: OverloadConfig): Promise<OverloadOutcome> {
  const { id, fairnessId, admission, refusals, recovery, fairness } = OVERLOAD;
  const progress = config.progress ?? ((line: string) => console.log(line));
  const pacer = config.pacer ?? processPacer(config.maxRetryAfterS * 1000);
  const findings: Finding[] = [];
  const evidence: string[] = [];
  const requests = { total: 0, probes: 0, burst: 0, otherKey: 0 };
  const started = Date.now();
  const figures: OverloadFigures = {
    limit: null,
    bursts: [],
    windows: [],
    successes: 0,
    refused: 0,
    refusedByStatus: {},
    largestRetryAfterS: null,
    waitedS: 0,
    recovered: null,
    otherKey: null,
    tls: new URL(config.baseUrl).protocol !== 'https:' ? 'none' : config.tls?.insecure ? 'not verified' : 'verified',
    requests,
    durationS: 0,
  };
  const authorization = `Bearer ${config.rateLimitKey}`;
  const listUrl = join(config.baseUrl, 'inventory');
  const listPath = new URL(listUrl).pathname;
  const maxWaitMs = config.maxRetryAfterS * 1000;
  /** Every response on the key, in order (probes and bursts). */
  const seen: RecordedResponse[] = [];
  let lost = 0;
  /** Local time before which nothing is sent on the key. */
  let notBefore = 0;

  const holdFor429 = (r: RecordedResponse) => {
    if (r.status !== 429) return;
    const j = judgeWindows([r]);
    notBefore = Math.max(notBefore, j.notBefore);
  };
  const wait = async (untilMs: number, what: string, variable = 'MAX_RETRY_AFTER_S') => {
    const ms = untilMs - Date.now();
    if (ms <= 0) return;
    if (ms > maxWaitMs) {
      throw new Stop(
        finding(id, recovery, 'not-certified', `${KEY} must wait for ${what} before the next request; the check stops there and sends nothing more on it`,
          `a wait of at most ${variable}=${config.maxRetryAfterS} s`, `${Math.ceil(ms / 1000)} s`),
      );
    }
    // Nothing is sent on any key by this check while it waits: another load check may run meanwhile.
    const waitOut = () => waitWithProgress(ms, `${what} on ${KEY}`, progress);
    await (config.lock ? config.lock.setAsideWhile(waitOut) : waitOut());
    figures.waitedS += ms / 1000;
  };
  const probeKey = async (what: string): Promise<ProbeResponse> => {
    await wait(notBefore, 'the Retry-After of a 429');
    const lease = await pacer.acquire(KEY, { mode: 'exhaust', count: 1 });
    requests.probes++;
    const r = await probe({ url: listUrl, authorization, timeoutS: config.timeoutS, tls: config.tls });
    if (r.ok) lease.observe(r);
    await lease.release();
    evidence.push(describeProbe(`${what}: GET ${listPath} (${KEY})`, r));
    if (!r.ok) {
      if (r.certificate) {
        throw new Stop(finding(id, refusals, 'fail', `the target's TLS certificate was refused; nothing carrying ${KEY} was sent`, 'a certificate trusted by Node (NODE_EXTRA_CA_CERTS for a private CA), or INSECURE_TLS=1', r.error));
      }
      lost++;
      throw new Stop(finding(id, refusals, 'fail', `the probe got no answer`, 'an answer within the request timeout', r.error));
    }
    const record: RecordedResponse = { step: 'probe', status: r.status, headers: r.headers, receivedAt: r.receivedAt };
    // A probe answered otherwise (an unusable key, a 5xx) ends the check with its own finding.
    if ((r.status >= 200 && r.status < 300) || r.status === 429) seen.push(record);
    holdFor429(record);
    return r;
  };

  /** A probe that opens a fresh window: waits out a pending 429 and a partly used window. */
  const freshWindow = async (n: number): Promise<{ first: ProbeResponse; limit: number; remaining: number }> => {
    let first = await probeKey(`window ${n}, probe`);
    for (let attempt = 0; attempt < 3; attempt++) {
      if (first.status === 429) {
        first = await probeKey(`window ${n}, after Retry-After`);
        if (first.status === 429) {
          throw new Stop(finding(id, recovery, 'fail', `after waiting its Retry-After the key still got 429`, '2xx once Retry-After has passed', describeProbe('probe', first)));
        }
      }
      if (first.status >= 500) {
        throw new Stop(finding(id, refusals, 'fail', 'the probe before a burst got a 5xx', '2xx or 429', String(first.status)));
      }
      if (first.status < 200 || first.status >= 300) {
        throw new Stop(finding(id, admission, 'not-certified', `RATE_LIMIT_KEY must be a valid key; the burst was not sent`, `GET ${listPath} with it answers 2xx`, `${first.status}`));
      }
      const info = parseRateLimitHeaders(first.headers);
      if (info.limit === undefined || info.remaining === undefined) {
        throw new Stop(
          finding(id, refusals, 'fail', `the probe's rate-limit headers cannot size the burst`, 'X-RateLimit-Limit and X-RateLimit-Remaining as integers', `${info.missing.join(', ') || 'present'}${info.problems.length ? `; ${info.problems.join('; ')}` : ''}`),
        );
      }
      if (info.remaining >= info.limit - 1) return { first, limit: info.limit, remaining: info.remaining };
      const untilReset = secondsUntilReset(info);
      if (untilReset === undefined) {
        throw new Stop(finding(id, admission, 'not-certified', 'the window is partly used and its X-RateLimit-Reset is unusable, so no fresh window can be awaited', `Remaining ${info.limit - 1} after the first request of a window`, `Remaining ${info.remaining} of ${info.limit}`));
      }
      // A Reset beyond MAX_RETRY_AFTER_S: the headers describe a longer quota the key has partly
      // spent (a plan's day quota, after earlier runs on the same key); not certified, named so.
      const longer = untilReset > config.maxRetryAfterS
        ? `, a quota the key has partly spent that resets only in ${untilReset} s (for example the plan's day quota, spent by earlier runs on this key: run again after that Reset, or with another RATE_LIMIT_KEY)`
        : '';
      await wait(first.receivedAt + untilReset * 1000 + RESET_MARGIN_MS, `X-RateLimit-Reset of a partly used window (Remaining ${info.remaining} of ${info.limit}${longer})`);
      first = await probeKey(`window ${n}, probe after Reset`);
    }
    throw new Stop(finding(id, admission, 'not-certified', 'no fresh window was reached after waiting three resets', `Remaining ${(figures.limit ?? 1) - 1} after the first request of a window`, describeProbe('probe', first)));
  };

  const other: OtherKeyFigures | null = config.otherKey
    ? { probes: 0, statuses: [], latenciesMs: [], maxLatencyMs: null, thresholdMs: config.otherKeyThresholdMs ?? null }
    : null;
  /** One paced request on the other key while a burst runs (never meeting a 429 on it). */
  const watchOtherKey = async () => {
    if (!other || !config.otherKey) return;
    const last = other.statuses.at(-1);
    if (last === 0 || last === 429) return;
    let lease;
    try {
      lease = await pacer.acquire(OTHER, { mode: 'paced', count: 1 });
    } catch {
      return; // The other key is at its reserve: it is not spent on a should-level check.
    }
    requests.otherKey++;
    other.probes++;
    const r = await probe({ url: listUrl, authorization: `Bearer ${config.otherKey}`, timeoutS: config.timeoutS, tls: config.tls });
    if (r.ok) lease.observe(r);
    await lease.release();
    other.latenciesMs.push(r.latencyMs);
    other.statuses.push(r.ok ? r.status : 0);
  };

  try {
    for (let n = 1; n <= config.windows; n++) {
      const { limit, remaining } = await freshWindow(n);
      figures.limit = limit;
      const size = remaining + 1;
      if (size > config.burstMax) {
        throw new Stop(finding(id, admission, 'not-certified', `the burst would exceed LOAD_BURST_MAX`, `Remaining + 1 ≤ LOAD_BURST_MAX=${config.burstMax}`, `Remaining + 1 = ${size}`));
      }
      const lease = await pacer.acquire(KEY, { mode: 'exhaust', count: size });
      if (lease.granted < size) {
        await lease.release();
        throw new Stop(finding(id, admission, 'not-certified', 'the run-wide pacer did not grant the whole burst at once', `Remaining + 1 = ${size} requests granted together`, `${lease.granted} granted`));
      }
      const burstRun = runLoad({
        label: `overload burst ${n}/${config.windows}`,
        url: config.baseUrl,
        steps: [{ name: `GET ${listPath}`, path: listPath }],
        authorization,
        model: { kind: 'burst', count: size },
        connections: Math.min(config.burstConnections, size),
        maxRequests: size,
        maxDurationS: config.timeoutS + 5,
        timeoutS: config.timeoutS,
        recordAll: true,
        sampleSize: 0,
        loopbackOnly: config.loopbackOnly,
        tls: config.tls,
        progress,
        // Nothing more is written once a 429 has arrived (only requests already sent complete).
        stopOnStatus: [429],
        onResponse: (r) => lease.observe(r),
      });
      let burst;
      try {
        [burst] = await Promise.all([burstRun, n === 1 ? watchOtherKey() : Promise.resolve()]);
      } finally {
        await lease.release();
      }
      requests.burst += burst.figures.sent;
      if (burst.tlsError) {
        throw new Stop(finding(id, refusals, 'fail', `the target's TLS certificate was refused; nothing carrying ${KEY} was sent`, 'a certificate trusted by Node (NODE_EXTRA_CA_CERTS for a private CA), or INSECURE_TLS=1', burst.tlsError));
      }
      const f = burst.figures;
      const burstLost = f.socketErrors + f.timeouts + f.unanswered;
      lost += burstLost;
      seen.push(...burst.responses);
      for (const r of burst.responses) holdFor429(r);
      const resets = [...new Set(burst.responses.filter((r) => r.status >= 200 && r.status < 300).map((r) => parseRateLimitHeaders(r.headers).raw.reset ?? '(none)'))];
      figures.bursts.push({ remainingAtProbe: remaining, size, admitted: f.count2xx, refused: f.requests - f.count2xx, lost: burstLost, durationS: f.durationS, resets });
      evidence.push(
        `window ${n}: burst of Remaining + 1 = ${size} × GET ${listPath} on ${f.connections} connections in ${f.durationS} s: ` +
          `${f.count2xx} × 2xx, ${Object.entries(f.statusCodes).filter(([c]) => !c.startsWith('2')).map(([c, k]) => `${k} × ${c}`).join(', ') || 'no refusal'}` +
          `${f.sent < size ? ` (${size - f.sent} not sent after the 429)` : ''}, lost ${burstLost}`,
      );
    }
    // Recovery: the last burst's Retry-After waited out (nothing sent before), then one request.
    const pending = notBefore > Date.now();
    let after = await probeKey(`after the last burst's Retry-After`);
    // No 429 was pending (a limiter that refilled during the burst admitted it all): a 429 now is
    // the limit itself, not a failed recovery; its Retry-After is waited out and the key tried once more.
    if (!pending && after.status === 429) after = await probeKey(`after the Retry-After of that 429`);
    figures.recovered = after.status >= 200 && after.status < 300;
    if (!figures.recovered) {
      findings.push(finding(id, recovery, 'fail', `after waiting the largest Retry-After the key did not work again`, '2xx', describeProbe('probe', after)));
    }
  } catch (error) {
    if (!(error instanceof Stop)) {
      if (isPacerWaitTooLong(error)) {
        findings.push(finding(id, recovery, 'not-certified', 'the pacer would have to wait longer than MAX_RETRY_AFTER_S', `a wait of at most ${config.maxRetryAfterS} s`, error.message));
      } else {
        findings.push(finding(id, admission, 'fail', 'the check could not run', 'a completed run', (error as Error).message));
      }
    } else findings.push(error.f);
  }

  const judgement = judgeWindows(seen, { limitHint: figures.limit ?? undefined, lost });
  findings.push(...judgement.findings);
  Object.assign(figures, {
    windows: judgement.windows,
    successes: judgement.successes,
    refused: judgement.refused,
    refusedByStatus: judgement.refusedByStatus,
    largestRetryAfterS: judgement.largestRetryAfterS,
  });
  if (figures.bursts.length) {
    evidence.push(`admitted per window vs X-RateLimit-Limit (probes included): ${judgement.windows.map((w) => `Reset ${w.reset}: ${w.successes}/${w.limit ?? figures.limit}`).join('; ')}`);
  }
  if (figures.tls === 'not verified') {
    findings.push(finding(id, undefined, 'note', `the target's TLS certificate was not verified`, 'a verified certificate', 'INSECURE_TLS=1 (the user opted out of verification)'));
  }
  if (other) {
    other.maxLatencyMs = other.latenciesMs.length ? Math.max(...other.latenciesMs) : null;
    figures.otherKey = other;
    evidence.push(`${OTHER} during the first burst: ${other.probes} request(s), statuses ${other.statuses.join(', ') || 'none'}, latency max ${other.maxLatencyMs ?? 'n/a'} ms`);
    if (other.thresholdMs !== null && other.maxLatencyMs !== null && other.maxLatencyMs >= other.thresholdMs) {
      findings.push(finding(fairnessId, fairness, 'warn', `while ${KEY} was exhausted, ${OTHER} waited longer than LOAD_P99_MS`, `< ${other.thresholdMs} ms`, `${other.maxLatencyMs} ms`));
    }
    if (other.statuses.some((s) => s === 0 || s >= 500)) {
      findings.push(finding(fairnessId, fairness, 'warn', `${OTHER} got no answer or a 5xx during the burst`, '2xx', `statuses ${other.statuses.join(', ')}`));
    }
  } else {
    findings.push(finding(fairnessId, fairness, 'note', 'not measured', 'API_KEY set and distinct from RATE_LIMIT_KEY', 'not set (or the same key)'));
  }
  requests.total = requests.probes + requests.burst + requests.otherKey;
  figures.durationS = Math.round((Date.now() - started) / 100) / 10;
  evidence.push(`spent by the overload check: ${requests.probes + requests.burst} requests on ${KEY} (probes ${requests.probes}, bursts ${requests.burst}), ${requests.otherKey} on ${OTHER}, ${figures.durationS} s (waits ${figures.waitedS.toFixed(1)} s)`);
  progress(`[load] overload: ${requests.total} requests sent in ${figures.durationS} s`);
  return { findings, evidence, figures };
}
