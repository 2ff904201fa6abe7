/** The overload check's vocabulary (suites/load/overload-check.ts): its ledger ids, margins, configuration, figures and outcome. */
import type { Finding } from '../../core/finding.ts';
import type { LoadFigures, RecordedResponse, TlsOptions } from './engine.ts';
import type { Pacer } from './http.ts';

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

export const KEY = '<RATE_LIMIT_KEY>';

export const OTHER = '<API_KEY>';

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

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Thrown inside the check to end it with a finding (never escapes `runOverloadCheck`). */
export class Stop extends Error {
  readonly f: Finding;
  constructor(f: Finding) {
    super(f.message);
    this.f = f;
  }
}

/** A burst's requests without an answer, by kind, and the slowest answer the bursts did get. */
export interface LostKinds {
  timeouts: number;
  connectionErrors: number;
  abandoned: number;
  probes: number;
  slowestAnswerMs: number;
}
