/**
 * The overload check's core (spec: Limits rules 1 and 3, the Limits table; Errors, 429 row;
 * Authentication rule 5), callable without Playwright so that `tests/load/` can run it against a
 * racy limiter.
 *
 * 1. Fresh window: one probe on `RATE_LIMIT_KEY`. A pending 429 is waited out (its Retry-After);
 *    a window already partly used is waited out until `X-RateLimit-Reset`, judged against the
 *    response's `Date`. Nothing is ever sent early.
 * 2. Burst: max(3 × X-RateLimit-Limit, 500) concurrent requests (capped by `LOAD_BURST_MAX`) on up
 *    to `LOAD_BURST_CONNECTIONS` connections; the burst ends by itself. Meanwhile a few requests
 *    on `API_KEY` measure whether another key is starved.
 * 3. Judgement (`judgeBurst`): successes are grouped by window (their `X-RateLimit-Reset` value,
 *    which a fixed window shares; a burst straddling a boundary falls into two groups) and no group
 *    may exceed its `X-RateLimit-Limit`; every refused request is a 429 with a valid
 *    `Retry-After` and the three headers; no 5xx; no request left without a response.
 * 4. Recovery: wait the largest `Retry-After` seen (a ban's covers the ban), capped by
 *    `MAX_RETRY_AFTER_S`, then one request must succeed.
 */
import { runLoad, type LoadFigures, type RecordedResponse } from '../lib/load.ts';
import { parseRateLimitHeaders, secondsUntilReset } from '../lib/rate-limit.ts';
import { parseRetryAfter } from '../lib/retry-after.ts';
import { join, probe, waitWithProgress, type ProbeFailure, type ProbeResponse } from './http.ts';

/**
 * What this check decides, as the prefix of every finding: the ledger id (suites/requirements.yaml)
 * and the part, so that each test of `overload.spec.ts` judges its own part of one burst.
 */
export const OVERLOAD_IDS = {
  admission: 'LOAD-02 (admission)',
  refusals: 'LOAD-02 (refusals)',
  recovery: 'LOAD-02 (recovery)',
  fairness: 'LOAD-03 (other key)',
} as const;

/** Smallest burst, whatever the limit: enough concurrency to expose a non-atomic limiter. */
export const MIN_BURST = 500;
/** Added to every Retry-After wait (timer and clock granularity). */
export const RETRY_AFTER_MARGIN_MS = 250;
/** Added to a wait for X-RateLimit-Reset (Reset and Date have one-second resolution). */
export const RESET_MARGIN_MS = 1000;

export interface OverloadConfig {
  /** Inventory base address, ending in `/v1`. */
  baseUrl: string;
  /** The key the user accepts to exhaust. */
  rateLimitKey: string;
  /** Another key whose latency is watched during the burst (should-level); optional. */
  otherKey?: string;
  burstMax: number;
  burstConnections: number;
  /** Smallest burst (default `MIN_BURST`); tests may lower it. */
  minBurst?: number;
  maxRetryAfterS: number;
  /** The other key's latency threshold (ms). */
  otherKeyThresholdMs: number;
  timeoutS: number;
  /** Refuse a non-loopback target (the bundled reference server is always loopback). */
  loopbackOnly: boolean;
  progress?: (line: string) => void;
  /** Hard cap on the burst's wall time (default 60 s). */
  maxBurstDurationS?: number;
}

export interface WindowCount {
  /** The `X-RateLimit-Reset` value the window's successes share, or `(none)`. */
  reset: string;
  successes: number;
  /** Largest `X-RateLimit-Limit` among them (null when none was given). */
  limit: number | null;
}

export interface BurstJudgement {
  failures: string[];
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

export interface OtherKeyFigures {
  probes: number;
  statuses: number[];
  latenciesMs: number[];
  maxLatencyMs: number | null;
  thresholdMs: number;
}

export interface OverloadFigures {
  limit: number | null;
  burstSize: number;
  connections: number;
  burst: LoadFigures | null;
  windows: WindowCount[];
  successes: number;
  refused: number;
  refusedByStatus: Record<string, number>;
  largestRetryAfterS: number | null;
  waitedBeforeS: number;
  waitedAfterS: number;
  recovered: boolean | null;
  otherKey: OtherKeyFigures | null;
  requests: { total: number; probes: number; burst: number; otherKey: number };
}

export interface OverloadOutcome {
  /** Must-level failures, each starting with its ledger id. */
  failures: string[];
  /** Should-level findings and notes, each starting with its ledger id. */
  warnings: string[];
  /** Headline figures for `evidence` annotations. */
  evidence: string[];
  figures: OverloadFigures;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function tally(map: Map<string, { count: number; example: string }>, key: string, example: string): void {
  const entry = map.get(key);
  if (entry) entry.count++;
  else map.set(key, { count: 1, example });
}

/**
 * Judges the responses of a burst. Pure: `responses` carry lowercased headers and their receipt
 * time; `extraSuccesses` are admitted requests outside the burst that count in their window (the
 * probe before it). `lost` is the number of requests that got no response.
 */
export function judgeBurst(
  responses: readonly RecordedResponse[],
  options: { limitHint?: number; lost?: number; extraSuccesses?: readonly RecordedResponse[] } = {},
): BurstJudgement {
  const { admission, refusals } = OVERLOAD_IDS;
  const failures: string[] = [];
  const groups = new Map<string, WindowCount>();
  const missingHeaders = new Map<string, { count: number; example: string }>();
  const badRetryAfter = new Map<string, { count: number; example: string }>();
  const refusedByStatus: Record<string, number> = {};
  let successes = 0;
  let refused = 0;
  let count5xx = 0;
  let notBefore = 0;
  let largestRetryAfterS: number | null = null;

  const countSuccess = (r: RecordedResponse) => {
    const info = parseRateLimitHeaders(r.headers);
    const key = info.raw.reset ?? '(none)';
    const group = groups.get(key) ?? { reset: key, successes: 0, limit: null };
    group.successes++;
    if (info.limit !== undefined) group.limit = Math.max(group.limit ?? 0, info.limit);
    groups.set(key, group);
    return info;
  };
  for (const r of options.extraSuccesses ?? []) countSuccess(r);

  for (const r of responses) {
    if (r.status >= 200 && r.status < 300) {
      successes++;
      const info = countSuccess(r);
      if (info.missing.length) tally(missingHeaders, info.missing.join(', '), `${r.status}`);
      continue;
    }
    refused++;
    refusedByStatus[r.status] = (refusedByStatus[r.status] ?? 0) + 1;
    if (r.status >= 500) count5xx++;
    const info = parseRateLimitHeaders(r.headers);
    if (info.missing.length) tally(missingHeaders, info.missing.join(', '), `${r.status}`);
    if (r.status !== 429) continue;
    const untilReset = secondsUntilReset(info);
    const retry = parseRetryAfter(r.headers['retry-after'], r.headers.date, {
      secondsUntilReset: untilReset,
      nowMs: r.receivedAt,
    });
    let until: number;
    if (retry.ok) {
      until = r.receivedAt + retry.seconds * 1000 + RETRY_AFTER_MARGIN_MS;
      largestRetryAfterS = Math.max(largestRetryAfterS ?? 0, retry.seconds);
    } else {
      tally(badRetryAfter, retry.reason, retry.reason);
      // No usable Retry-After: hold until the reported reset, else a conservative minute.
      until = r.receivedAt + (untilReset !== undefined && untilReset > 0 ? untilReset * 1000 + RESET_MARGIN_MS : 60_000);
    }
    notBefore = Math.max(notBefore, until);
  }

  const windows = [...groups.values()].sort((a, b) => a.reset.localeCompare(b.reset));
  for (const w of windows) {
    const limit = w.limit ?? options.limitHint;
    if (limit !== undefined && w.successes > limit) {
      failures.push(
        `${admission} over-admission: ${plural(w.successes, 'request')} succeeded in the window whose X-RateLimit-Reset is ` +
          `${w.reset}, more than its X-RateLimit-Limit ${limit}`,
      );
    }
  }
  if (count5xx > 0) {
    const codes = Object.entries(refusedByStatus)
      .filter(([code]) => Number(code) >= 500)
      .map(([code, n]) => `${code} ×${n}`)
      .join(', ');
    failures.push(`${refusals} ${plural(count5xx, 'response')} of the burst were 5xx (${codes}); expected 2xx or 429`);
  }
  const other = Object.entries(refusedByStatus).filter(([code]) => code !== '429' && Number(code) < 500);
  if (other.length) {
    failures.push(
      `${refusals} refused requests must be 429 Too Many Requests; observed ${other.map(([code, n]) => `${code} ×${n}`).join(', ')}`,
    );
  }
  for (const [reason, { count }] of badRetryAfter) {
    failures.push(`${refusals} ${plural(count, '429 response')} without a valid Retry-After: ${reason}`);
  }
  for (const [missing, { count, example }] of missingHeaders) {
    failures.push(`${refusals} ${plural(count, 'response')} (e.g. a ${example}) lacked ${missing}; every response carries the three X-RateLimit-* headers`);
  }
  const lost = options.lost ?? 0;
  if (lost > 0) {
    failures.push(
      `${refusals} ${plural(lost, 'request')} of the burst got no response (socket error, timeout or connection closed); a refused request must be answered with 429`,
    );
  }
  const limit = options.limitHint;
  if (limit !== undefined && responses.length > limit && refused === 0 && lost === 0 && windows.length <= 1) {
    failures.push(`${refusals} a burst of ${responses.length} requests past X-RateLimit-Limit ${limit} got no 429`);
  }
  return { failures, windows, successes, refused, refusedByStatus, count5xx, notBefore, largestRetryAfterS };
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

/** Runs the whole overload check against `config.baseUrl`. Never throws for what the server does. */
export async function runOverloadCheck(config: OverloadConfig): Promise<OverloadOutcome> {
  const { admission, refusals, fairness, recovery } = OVERLOAD_IDS;
  const progress = config.progress ?? ((line: string) => console.log(line));
  const failures: string[] = [];
  const warnings: string[] = [];
  const evidence: string[] = [];
  const requests = { total: 0, probes: 0, burst: 0, otherKey: 0 };
  const figures: OverloadFigures = {
    limit: null,
    burstSize: 0,
    connections: 0,
    burst: null,
    windows: [],
    successes: 0,
    refused: 0,
    refusedByStatus: {},
    largestRetryAfterS: null,
    waitedBeforeS: 0,
    waitedAfterS: 0,
    recovered: null,
    otherKey: null,
    requests,
  };
  const done = (): OverloadOutcome => {
    requests.total = requests.probes + requests.burst + requests.otherKey;
    evidence.push(`load phase requests of the overload check: ${requests.total} (probes ${requests.probes}, burst ${requests.burst}, ${'<API_KEY>'} ${requests.otherKey})`);
    progress(`[load] overload: ${requests.total} requests sent`);
    return { failures, warnings, evidence, figures };
  };
  const authorization = `Bearer ${config.rateLimitKey}`;
  const listUrl = join(config.baseUrl, 'inventory');
  const listPath = `${new URL(listUrl).pathname}`;
  const maxWaitMs = config.maxRetryAfterS * 1000;
  const probeKey = async () => {
    requests.probes++;
    return probe({ url: listUrl, authorization, timeoutS: config.timeoutS });
  };

  // 1. A fresh window, never sending early.
  let first = await probeKey();
  evidence.push(describeProbe(`before the burst: GET ${listPath} (<RATE_LIMIT_KEY>)`, first));
  if (first.ok && first.status === 429) {
    const retry = parseRetryAfter(first.headers['retry-after'], first.headers.date, { nowMs: first.receivedAt });
    if (!retry.ok) {
      failures.push(`${refusals} the probe before the burst got 429 without a valid Retry-After (${retry.reason}); nothing more is sent on <RATE_LIMIT_KEY>`);
      return done();
    }
    const waitMs = first.receivedAt + retry.seconds * 1000 + RETRY_AFTER_MARGIN_MS - Date.now();
    if (waitMs > maxWaitMs) {
      failures.push(
        `${recovery} <RATE_LIMIT_KEY> is held by a 429 for ${retry.seconds} s, more than MAX_RETRY_AFTER_S=${config.maxRetryAfterS}; ` +
          `the overload check did not run (raise MAX_RETRY_AFTER_S or wait before certifying)`,
      );
      return done();
    }
    await waitWithProgress(waitMs, `Retry-After of a 429 pending on <RATE_LIMIT_KEY> before the burst`, progress);
    figures.waitedBeforeS += Math.max(0, waitMs) / 1000;
    first = await probeKey();
    evidence.push(describeProbe(`after Retry-After: GET ${listPath} (<RATE_LIMIT_KEY>)`, first));
    if (first.ok && first.status === 429) {
      failures.push(`${recovery} after waiting Retry-After (${retry.seconds} s) <RATE_LIMIT_KEY> still got 429`);
      return done();
    }
  }
  if (!first.ok) {
    failures.push(`${refusals} the target did not answer the probe before the burst: ${first.error}`);
    return done();
  }
  if (first.status < 200 || first.status >= 300) {
    failures.push(
      `${admission} prerequisite: RATE_LIMIT_KEY must be a valid key; GET ${listPath} with it answered ${first.status}`,
    );
    return done();
  }
  const info = parseRateLimitHeaders(first.headers);
  if (info.limit === undefined || info.reset === undefined || info.remaining === undefined) {
    failures.push(
      `${refusals} GET ${listPath} → ${first.status} lacks ${info.missing.join(', ') || 'valid X-RateLimit-* values'}` +
        `${info.problems.length ? ` (${info.problems.join('; ')})` : ''}; the burst cannot be judged without X-RateLimit-Limit`,
    );
    return done();
  }
  const limit = info.limit;
  figures.limit = limit;
  if (info.remaining < limit - 1) {
    const untilReset = secondsUntilReset(info);
    const waitMs = untilReset === undefined ? undefined : first.receivedAt + untilReset * 1000 + RESET_MARGIN_MS - Date.now();
    if (waitMs !== undefined && waitMs <= maxWaitMs) {
      await waitWithProgress(waitMs, `X-RateLimit-Reset of a partly used window (Remaining ${info.remaining} of ${limit})`, progress);
      figures.waitedBeforeS += Math.max(0, waitMs) / 1000;
    } else {
      warnings.push(
        `${admission} the window was not fresh (Remaining ${info.remaining} of ${limit}) and resets in ` +
          `${untilReset ?? 'an unknown number of'} s, more than MAX_RETRY_AFTER_S=${config.maxRetryAfterS}; the burst ran on a partly used window`,
      );
    }
  }

  // 2. The burst, and another key watched meanwhile.
  const minBurst = config.minBurst ?? MIN_BURST;
  const burstSize = Math.min(Math.max(3 * limit, minBurst), config.burstMax);
  figures.burstSize = burstSize;
  if (burstSize <= limit) {
    failures.push(
      `${admission} prerequisite: LOAD_BURST_MAX=${config.burstMax} is not above X-RateLimit-Limit ${limit}; the burst could not exceed the limit`,
    );
    return done();
  }
  const connections = Math.min(config.burstConnections, burstSize);
  figures.connections = connections;
  let burstOver = false;
  const burstRun = runLoad({
    label: 'overload burst',
    url: config.baseUrl,
    steps: [{ name: `GET ${listPath}`, path: listPath }],
    authorization,
    connections,
    amount: burstSize,
    maxRequests: burstSize,
    maxDurationS: config.maxBurstDurationS ?? 60,
    timeoutS: config.timeoutS,
    recordAll: true,
    sampleSize: 0,
    loopbackOnly: config.loopbackOnly,
    progress,
    progressEveryS: 3,
  }).finally(() => {
    burstOver = true;
  });
  const other: OtherKeyFigures | null = config.otherKey ? { probes: 0, statuses: [], latenciesMs: [], maxLatencyMs: null, thresholdMs: config.otherKeyThresholdMs } : null;
  const watchOtherKey = async () => {
    if (!other || !config.otherKey) return;
    const otherAuth = `Bearer ${config.otherKey}`;
    for (let i = 0; i < 5 && !burstOver; i++) {
      requests.otherKey++;
      other.probes++;
      const r = await probe({ url: listUrl, authorization: otherAuth, timeoutS: config.timeoutS });
      other.latenciesMs.push(r.latencyMs);
      if (!r.ok) {
        other.statuses.push(0);
        break;
      }
      other.statuses.push(r.status);
      const otherInfo = parseRateLimitHeaders(r.headers);
      // Never meet a 429 on API_KEY: stop while a reserve is left, and at once on a 429.
      if (r.status === 429 || (otherInfo.remaining !== undefined && otherInfo.remaining <= 2)) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    other.maxLatencyMs = other.latenciesMs.length ? Math.max(...other.latenciesMs) : null;
  };
  let burst;
  try {
    [burst] = await Promise.all([burstRun, watchOtherKey()]);
  } catch (error) {
    failures.push(`${admission} the burst could not run: ${(error as Error).message}`);
    return done();
  }
  figures.burst = burst.figures;
  figures.otherKey = other;
  requests.burst = burst.figures.sent;

  // 3. Judgement.
  const lost = burst.figures.socketErrors + burst.figures.timeouts + burst.figures.unanswered;
  const judgement = judgeBurst(burst.responses, { limitHint: limit, lost, extraSuccesses: [{ step: 'probe', status: first.status, headers: first.headers, receivedAt: first.receivedAt }] });
  failures.push(...judgement.failures);
  Object.assign(figures, {
    windows: judgement.windows,
    successes: judgement.successes,
    refused: judgement.refused,
    refusedByStatus: judgement.refusedByStatus,
    largestRetryAfterS: judgement.largestRetryAfterS,
  });
  const f = burst.figures;
  evidence.push(
    `burst: ${f.requests} × GET ${listPath} on ${f.connections} connections in ${f.durationS} s (${f.requestsPerSecond} req/s): ` +
      `${judgement.successes} × 2xx, ${Object.entries(judgement.refusedByStatus).map(([c, n]) => `${n} × ${c}`).join(', ') || 'no refusals'}, ` +
      `5xx ${judgement.count5xx}, socket errors ${f.socketErrors}, timeouts ${f.timeouts}, unanswered ${f.unanswered}, p99 ${f.latencyMs.p99} ms`,
  );
  evidence.push(
    `successes per window vs X-RateLimit-Limit (probe included): ${judgement.windows.map((w) => `Reset ${w.reset}: ${w.successes}/${w.limit ?? limit}`).join('; ')}`,
  );
  if (other) {
    const line = `${'<API_KEY>'} during the burst: ${other.probes} request(s), statuses ${other.statuses.join(', ') || 'none'}, latency max ${other.maxLatencyMs ?? 'n/a'} ms (threshold LOAD_P99_MS ${other.thresholdMs} ms)`;
    evidence.push(line);
    if (other.maxLatencyMs !== null && other.maxLatencyMs >= other.thresholdMs) {
      warnings.push(`${fairness} while <RATE_LIMIT_KEY> was hammered, <API_KEY> waited ${other.maxLatencyMs} ms, above LOAD_P99_MS=${other.thresholdMs} ms`);
    }
    if (other.statuses.some((s) => s === 0 || s >= 500)) {
      warnings.push(`${fairness} <API_KEY> got no answer or a 5xx during the burst (statuses ${other.statuses.join(', ')})`);
    }
  } else {
    warnings.push(`${fairness} not measured: API_KEY is not set (or is the same key as RATE_LIMIT_KEY)`);
  }

  // 4. Recovery: wait out the largest Retry-After, never sending early, then one request.
  const waitMs = judgement.notBefore - Date.now();
  if (judgement.notBefore > 0 && waitMs > maxWaitMs) {
    failures.push(
      `${recovery} the largest wait asked for is ${Math.ceil(waitMs / 1000)} s (Retry-After up to ${judgement.largestRetryAfterS ?? '?'} s), ` +
        `more than MAX_RETRY_AFTER_S=${config.maxRetryAfterS}; <RATE_LIMIT_KEY> was not tried again and stays blocked until then`,
    );
    return done();
  }
  if (waitMs > 0) {
    await waitWithProgress(waitMs, `largest Retry-After of the burst on <RATE_LIMIT_KEY> (${judgement.largestRetryAfterS ?? '?'} s)`, progress);
    figures.waitedAfterS = Math.round(waitMs) / 1000;
  }
  const after = await probeKey();
  const afterLine = describeProbe(`after waiting ${figures.waitedAfterS.toFixed(1)} s: GET ${listPath} (<RATE_LIMIT_KEY>)`, after);
  evidence.push(afterLine);
  figures.recovered = after.ok && after.status >= 200 && after.status < 300;
  if (!figures.recovered) {
    failures.push(`${recovery} after waiting the largest Retry-After seen (${judgement.largestRetryAfterS ?? 0} s) the key did not work again: ${afterLine}`);
  }
  return done();
}
