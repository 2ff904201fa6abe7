/** The conformance report's types (conformance.json; schemas/) and the verdict's input. */
import type { Outcome, RequirementStatus, RunProblem, TestRecord } from '../core/results.ts';
import type { Level, LedgerRequirement, Source } from '../core/ledger.ts';
import type { Finding } from '../core/finding.ts';
import type { Baseline, BaselineOutcome } from './baseline.ts';
import type { GateResult, PreviousRun } from './gate.ts';
import type { JournalReport } from './steps/repair.ts';
import type { OtherRunsReport } from './steps/target-lock.ts';
import type { MessageReport } from '../suites/pacing/message-budget.ts';

export interface EvidenceEntry {
  test: string;
  project: string;
  outcome: Outcome;
  errors?: string[];
  warnings?: string[];
  evidence?: string[];
  notCertified?: string;
  requests?: number;
  /** What the test found, typed (its `finding` annotations): requirement, expected, observed, curl. */
  findings?: Finding[];
  /** A failed test's last exchange as curl (keys as `$API_KEY`), when no finding carries one. */
  curl?: string;
}

export interface RequirementResult {
  id: string;
  title: string;
  level: Level;
  /** Where the requirement comes from; `project` rules are the harness's own, reported apart from spec conformance. */
  source: Source;
  status: RequirementStatus;
  section: string;
  experimental?: boolean;
  /** Why the status is what it is when the tests alone do not say it (no result, excluded, profile). */
  reason?: string;
  evidence: EvidenceEntry[];
}

export interface NotCertified {
  id: string;
  title: string;
  level: Level;
  reason: string;
  /** Some tests of the requirement ran; others were left out by the profile. */
  partial: boolean;
}

/** How a phase went (for the report; the verdict reads the tests, not this). */
export interface PhaseSummary {
  name: string;
  ran: boolean;
  seconds?: number;
  /** Seconds of it the checks spent waiting for rate-limit windows (Retry-After, Reset); phases overlap, so wall times do not add up. */
  waitedS?: number;
  /** Playwright's exit code, or the signal that ended it. */
  exit?: number | string | null;
  /** Why it did not run (profile). */
  reason?: string;
}

export interface VerdictInput {
  ledger: LedgerRequirement[];
  tests: TestRecord[];
  profile: string;
  target: unknown;
  generatedAt: string;
  /** Errors of the run outside any test (global errors, crashed phases, merge failures). */
  runErrors?: string[];
  /** Secret scan findings, already described without the key (e.g. `reports/x.json: API_KEY (raw)`). */
  secretFindings?: string[];
  /** Further run-level problems, already typed (e.g. the target left changed). */
  problems?: RunProblem[];
  /** Pets a check reported unrestored that the run's end-of-run repair put back and verified (certify/steps/repair.ts): not left changed. */
  restoredAfter?: string[];
  phases?: PhaseSummary[];
  /** How the gate judges the run (default: not strict, no baseline, no previous certificate). */
  gate?: VerdictGateOptions;
  /**
   * A signal stopped the run (SIGINT, SIGTERM): every check that did not end, and every
   * requirement no check judged, is not certified (never the target's failure), and the gate is
   * `interrupted` with the signal's exit code.
   */
  interrupted?: { signal: string; exitCode: number };
}

export interface VerdictGateOptions {
  strict?: boolean;
  baseline?: { baseline: Baseline; file: string; digest: string };
  previous?: PreviousRun;
}

/** What the run-wide pacer saw on one key (by its label, never its value). */
export interface PacingSummary {
  key: string;
  /** Requests granted on the key. */
  requests: number;
  /** Grants that had to wait (a pending Retry-After, an exhausted window), when the coordinator counts them. */
  waits?: number;
  longestWaitS: number;
  /** 429 responses seen. */
  refused: number;
  /** Requests sent while a 429 on the key was pending: 0 unless the pacer was bypassed. */
  earlyRequests: number;
  /** A 429 to the first request after a Retry-After wait: the key may be banned. */
  suspectedBan: boolean;
  /**
   * Why the pacer held more than this key's own 429s: a 429 on it that its X-RateLimit-Remaining did
   * not predict (every key of the run waited its Retry-After), or a wait beyond MAX_RETRY_AFTER_S
   * (nothing more was sent on it). Absent when none.
   */
  notes?: string[];
  /**
   * Another consumer of the key's limit seen during the run: its X-RateLimit-Remaining fell by more
   * than the run sent on it (another client on the key, or a limit shared with others), in words.
   */
  anotherClient?: string;
}

export interface ConformanceReport {
  /** The gate's result: the same as `gate.result`. */
  verdict: 'pass' | 'fail' | 'not-certified' | 'harness' | 'interrupted';
  /** The gate: result, exit code, known, fixed and new failures (the CLI exits with `gate.exitCode`). */
  gate: GateResult;
  /** With `--baseline`: the known failures, the new ones, the fixed ones. */
  baseline?: BaselineOutcome & { file: string; digest: string };
  target: unknown;
  profile: string;
  requests: number;
  /** Requests per Playwright project (phase). */
  requestsByPhase: Record<string, number>;
  phases: PhaseSummary[];
  generatedAt: string;
  summary: Record<RequirementStatus, number>;
  /** Run-level reasons for a failing verdict, beside failed requirements: typed, never re-parsed. */
  problems: RunProblem[];
  notCertified: NotCertified[];
  experimental: string[];
  /** Tests whose title names no ledger requirement. */
  unmapped: { test: string; project: string; outcome: Outcome }[];
  requirements: RequirementResult[];
  /** Per key, what the run-wide pacer saw (when certify ran one). */
  pacing?: PacingSummary[];
  /** The journal of changes: what an earlier run left open and this one repaired first, and what this one left changed (certify/steps/repair.ts). */
  journal?: JournalReport;
  /** Other certifications of the target on this machine (runs take turns), and what another client seen by the pacer means for the restored counts (certify/steps/target-lock.ts). */
  otherRuns?: OtherRunsReport;
  /** What the run left on the target that the API cannot undo: the messages it queued, by check, within MAX_MESSAGES. */
  footprint?: { messages: MessageReport };
}
