/**
 * What the run-wide pacer (`pacer.ts`) is asked and answers: grant requests, decisions, the
 * responses it is told about, and what it reports of each key (counts and reasons, never a key).
 */
import type { HeaderSource } from '../lib/headers.ts';

/** `paced` keeps the reserve; `exhaust` (the 429 checks) spends it, but still honours Retry-After. */
export type PaceMode = 'paced' | 'exhaust';

export interface PacerOptions {
  /** How the key is named in messages, e.g. `<API_KEY>`; never the key. */
  label: string;
  /** Requests kept in hand by `paced` grants (default 3). */
  reserve?: number;
  /** Longest wait accepted before the answer is `not-certified` (default 120 s). */
  maxWaitMs?: number;
  /** Added to a wait for `X-RateLimit-Reset` (Reset and `Date` have one-second resolution). Default 1000 ms. */
  resetMarginMs?: number;
  /**
   * Added to a wait for `Retry-After` (default 20 ms). The wait counts from the 429's arrival,
   * after the server wrote it, so a small margin keeps a rounded-down Retry-After detectable (RL-08).
   */
  retryAfterMarginMs?: number;
  /** Requests per minute assumed when the headers give no usable figure (default 60, the smallest plan). */
  nominalPerMinute?: number;
  /** The fixed wait after a 429 without a usable Retry-After nor Reset (default 10 s, at most `maxWaitMs`): stated in the hold's reason. */
  fallbackHoldMs?: number;
  /** Variable that raises `maxWaitMs`, for messages. */
  maxWaitVariable?: string;
}

export interface GrantRequest {
  mode: PaceMode;
  /** Requests wanted at once (default 1); the grant may be smaller, never 0. */
  count?: number;
  /** The plan's nominal rate of this key, used only when the headers give none. */
  nominalPerMinute?: number;
  /**
   * `exhaust` only: never grant past what Remaining allows, not even with nothing in flight; the
   * request past the limit is then granted alone once Remaining is 0 (the 429 sequence).
   */
  withinRemaining?: boolean;
  /**
   * A restore of what the run changed (the journal's repair, a check's write-back): it still goes
   * on a key closed for the checks, once every pending hold has passed (at most `maxWaitMs` from
   * the ask), alone on a closed key; never while a 429 is pending.
   */
  restore?: boolean;
}

export type Decision =
  /** `limitedBy`: why fewer than asked were granted, when the reason is not simply Remaining. */
  | { kind: 'grant'; count: number; limitedBy?: string }
  /** `waitMs` undefined: wait for a response or a release on this key. */
  | { kind: 'wait'; waitMs?: number; reason: string }
  | { kind: 'not-certified'; reason: string };

export interface Observation {
  status: number;
  headers: HeaderSource;
  /** Local clock when the response arrived. */
  receivedAtMs: number;
  /** The mode the request was granted in. */
  mode?: PaceMode;
  /** The service that answered (its origin): Remaining is compared only with answers of the same service. */
  service?: string;
}

export interface ObserveResult {
  /** Present for a 429: how long every request on this key is now held. */
  blockedForMs?: number;
  /** Present for a 429 whose Retry-After is missing or invalid. */
  retryAfterProblem?: string;
  /**
   * Present for a 429 that this key's own X-RateLimit-Remaining did not predict: the limit may be
   * shared by several keys, so every key of the run is held until `untilMs` (local clock).
   */
  holdAll?: { untilMs: number; reason: string };
  /**
   * Set by the coordinator when, after this response, nothing may be sent on the key before this
   * time (local clock): its own 429, or a run-wide hold of the origin after a 429 another key's
   * Remaining did not predict. A sender holding a grant of many requests (a load run) stops on it.
   */
  heldUntilMs?: number;
}

/** What the run did on one key: counts only, never a key. */
export interface KeyReport {
  label: string;
  granted: number;
  observed: number;
  released: number;
  /** 429 responses seen. */
  refused: number;
  /** 429 responses to `paced` requests (the reserve was not enough: another client, or a wrong Remaining). */
  unplanned429: number;
  /** Requests still in flight when a 429 on this key arrived (0 when the limit is approached by count). */
  inFlightAt429: number;
  /** A 429 to the first request after a 429's wait: the key may be banned. */
  suspectedBans: number;
  /** Requests granted while a 429 was pending: 0 by construction, reported as evidence. */
  earlyGrants: number;
  longestWaitMs: number;
  /** Responses whose headers could not be used (missing Remaining, Reset not epoch seconds). */
  fallbackResponses: number;
  /** 429s that this key's own X-RateLimit-Remaining did not predict (each held every key of the run). */
  unpredicted429?: number;
  /** Why nothing more was sent on this key for the rest of the run (a wait beyond the maximum), if so. */
  closed?: string;
  /**
   * Another consumer of this key's limit: its X-RateLimit-Remaining fell by more than the requests
   * this run sent on it (another client on the key, or a limit shared with other keys or callers).
   * The largest such fall, in words; absent when none was seen.
   */
  anotherClient?: string;
  /** Why this key's Remaining is not spent in bursts (not its own count, or not falling as the run sent), if so. */
  untrusted?: string;
  notCertified: string[];
  /** Until when (local clock, ms) nothing may be sent on the key: a 429's Retry-After or a run-wide hold; 0 when none was met. */
  blockedUntilMs?: number;
}

/**
 * What the whole run has granted and has in flight, on every key label together: a limit may be
 * shared by several keys (or count requests without a key), so the run's own requests on any label
 * may explain a fall of one key's Remaining. One per run, shared by the run's `KeyPacer`s.
 */
export interface RunTraffic {
  granted: number;
  inflight: number;
  /**
   * Why the run cannot read a key's X-RateLimit-Remaining as that key's own count (it moved with the
   * run's other keys' requests, or it did not fall as the run sent): from then on every key is one
   * bucket, sent on one request at a time, and a 429 on any key holds every key (`KeyPacer`).
   */
  untrusted?: string;
  /** 429s of the run that said neither how long nor until when: each doubles the next fixed hold. */
  fixedHolds?: number;
  /** Until when (local clock) the last fixed hold holds. */
  fixedHoldUntilMs?: number;
  /** Why the run sends nothing more but its restores (its backoff passed the longest wait): every key is closed. */
  closed?: string;
}
