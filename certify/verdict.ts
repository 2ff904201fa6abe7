/**
 * The certification verdict: from the requirements ledger and the merged test results to a status
 * per requirement and one verdict for the run. Pure: no file system, no clock (the caller passes
 * `generatedAt`), no environment.
 *
 * Rules (see reports/README.md):
 * - `pass`: every test evidencing the requirement passed and none wrote a `warning` annotation;
 * - `warn`: the tests passed with `warning` annotations, or a should/may-level test failed
 *   (or a should/may-level requirement has no result);
 * - `fail`: a must-level test failed (also: failed on a first attempt, timed out, was interrupted,
 *   or skipped itself without a `not-certified` reason), or a must-level requirement that is neither
 *   excluded nor left out by the profile has no test result at all;
 * - `skipped`: not certified (a test of it carries a `not-certified` annotation: left out by the
 *   profile, or stopped by a limit of the harness, never the server's failure) or `excluded` in the ledger.
 * The report carries the gate (gate.ts) and its `verdict` is the gate's result, so no
 * file says "pass" beside a gate that failed: `pass`, `fail`, `not-certified` (strict) or `harness`
 * (harness trouble: a run error, a failed test mapped to no requirement, a secret found in an
 * artifact). Without a baseline or a previous certificate, `fail` iff a requirement failed or the
 * target was left changed.
 */

import {
  ANNOTATION,
  requirementIds,
  unrestoredOf,
  type Annotation,
  type Outcome,
  type RequirementStatus,
  type RunProblem,
  type TestRecord,
  type Unrestored,
} from '../core/results.ts';
import type { Level, LedgerRequirement, Source } from '../core/ledger.ts';
import { formatFinding, parseFinding, type Finding } from '../core/finding.ts';
import { curlOf, parseExchange } from '../core/exchange.ts';
import { applyBaseline, type Baseline, type BaselineOutcome } from './baseline.ts';
import { decideGate, type GateResult, type PreviousRun } from './gate.ts';
import type { JournalReport } from './steps/repair.ts';
import type { OtherRunsReport } from './steps/turns.ts';
import type { MessageReport } from '../suites/pacing/message-budget.ts';

export type { Annotation, Level, LedgerRequirement, Outcome, RequirementStatus, RunProblem, Source, TestRecord };
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
  /** Other certifications of the target on this machine (runs take turns), and what another client seen by the pacer means for the restored counts (certify/steps/turns.ts). */
  otherRuns?: OtherRunsReport;
  /** What the run left on the target that the API cannot undo: the messages it queued, by check, within MAX_MESSAGES. */
  footprint?: { messages: MessageReport };
}

function descriptions(test: TestRecord, type: string): string[] {
  return test.annotations
    .filter((a) => a.type === type)
    .map((a) => a.description ?? '')
    .filter((d) => d !== '');
}

function notCertifiedReason(test: TestRecord): string | undefined {
  const reasons = descriptions(test, ANNOTATION.notCertified);
  if (reasons.length) return reasons.join('; ');
  return test.annotations.some((a) => a.type === ANNOTATION.notCertified) ? 'left out by the profile' : undefined;
}

function toEvidence(test: TestRecord): EvidenceEntry {
  const entry: EvidenceEntry = { test: test.title, project: test.project, outcome: test.outcome };
  if (test.errors.length) entry.errors = test.errors;
  const warnings = descriptions(test, 'warning');
  if (warnings.length) entry.warnings = warnings;
  const evidence = descriptions(test, 'evidence');
  if (evidence.length) entry.evidence = evidence;
  const nc = notCertifiedReason(test);
  if (nc) entry.notCertified = nc;
  if (test.requests) entry.requests = test.requests;
  const findings = test.findings ?? [];
  if (findings.length) entry.findings = findings;
  if (FAILED.includes(test.outcome) && !findings.some((f) => f.curl)) {
    const last = test.annotations
      .filter((a) => a.type === ANNOTATION.exchange)
      .map((a) => parseExchange(a.description))
      .filter((x) => x !== undefined)
      .at(-1);
    if (last) entry.curl = curlOf(last);
  }
  return entry;
}

const FAILED: Outcome[] = ['failed', 'flaky', 'interrupted'];

/**
 * Status of one requirement from the tests that evidence it.
 *
 * A test with a `not-certified` annotation (left out by the profile, or stopped by a limit of the
 * harness: a cap reached, a Retry-After beyond MAX_RETRY_AFTER_S, a shared key, a prerequisite
 * missing) is never evidence of pass, warn or fail, whatever its outcome: the requirement is
 * not certified, with the reason. Only a real failure of another of its tests still fails it.
 */
export function requirementStatus(
  req: LedgerRequirement,
  tests: TestRecord[],
): { status: RequirementStatus; reason?: string; notCertified?: NotCertified } {
  const failing = req.level === 'must' ? 'fail' : 'warn';
  if (req.excluded) return { status: 'skipped', reason: `excluded: ${req.excluded}` };

  const limited = tests.filter((t) => notCertifiedReason(t) !== undefined);
  const judged = tests.filter((t) => notCertifiedReason(t) === undefined);
  const ran = judged.filter((t) => t.outcome !== 'skipped');
  const unexplained = judged.filter((t) => t.outcome === 'skipped');
  const reasons = [...new Set(limited.map((t) => notCertifiedReason(t)!))].join('; ');
  const notCertified = limited.length
    ? { id: req.id, title: req.title, level: req.level, reason: reasons, partial: judged.length > 0 }
    : undefined;

  const failed = ran.filter((t) => FAILED.includes(t.outcome));
  if (failed.length) {
    const how = failed.map((t) => (t.outcome === 'flaky' ? `${t.title} (failed, then passed on retry)` : t.title));
    return { status: failing, reason: `${req.level}-level check failed: ${how.join('; ')}`, notCertified };
  }
  if (unexplained.length) {
    return {
      status: failing,
      reason: `check skipped without a profile reason: ${unexplained.map((t) => t.title).join('; ')}`,
      notCertified,
    };
  }
  if (notCertified) return { status: 'skipped', reason: `not certified: ${reasons}`, notCertified };
  if (ran.length) {
    const warned = ran.some((t) => descriptions(t, 'warning').length > 0);
    return { status: warned ? 'warn' : 'pass' };
  }
  return {
    status: failing,
    reason: `no test result for ${req.level}-level requirement ${req.id}: no test in the run evidences it`,
  };
}

/**
 * The one reader of what the run left changed on the target: every `unrestored` annotation of
 * every test (`unrestoredOf`, core/results.ts), deduplicated by pet (the last reading wins). One
 * run-level problem naming each pet, or undefined when every change was restored.
 */
export function leftChangedProblem(tests: readonly TestRecord[], restoredAfter: readonly string[] = []): RunProblem | undefined {
  const byPet = new Map<string, Unrestored>();
  for (const t of tests) for (const u of unrestoredOf(t.annotations)) byPet.set(u.petId, u);
  for (const id of restoredAfter) byPet.delete(id);
  if (!byPet.size) return undefined;
  const pets = [...byPet.values()];
  const list = pets.map((p) => `pet ${p.petId} (original ${p.original}, now ${p.current ?? 'missing'})`).join(', ');
  return {
    kind: 'target-left-changed',
    reason: `target left changed: the run could not restore ${pets.length} pet(s): ${list}`,
    expected: 'every pet the run changed restored to its original quantity',
    observed: list,
    pets,
  };
}

/**
 * The run's problems with one "target left changed" among them: the checks' own reports and the
 * journal's (certify/steps/repair.ts) together, each pet once (the journal's reading wins).
 */
function withLeftChanged(given: readonly RunProblem[], fromTests: RunProblem | undefined): RunProblem[] {
  const journal = given.find((p) => p.kind === 'target-left-changed');
  if (!fromTests) return [...given];
  if (!journal) return [fromTests, ...given];
  const seen = new Set((journal.pets ?? []).map((p) => p.petId));
  const extra = (fromTests.pets ?? []).filter((p) => !seen.has(p.petId));
  if (!extra.length) return [...given];
  const merged: RunProblem = {
    ...journal,
    pets: [...(journal.pets ?? []), ...extra],
    reason: `${journal.reason}; ${fromTests.reason.replace(/^target left changed: /, '')}`,
  };
  return given.map((p) => (p === journal ? merged : p));
}

/** A requirement no check judged because a signal stopped the run first: not certified. */
function stoppedBeforeJudged(
  req: LedgerRequirement,
  signal: string,
): { status: RequirementStatus; reason: string; notCertified: NotCertified } {
  const reason = `the run was stopped by ${signal} before any check of it ended`;
  return {
    status: 'skipped',
    reason: `not certified: ${reason}`,
    notCertified: { id: req.id, title: req.title, level: req.level, reason, partial: false },
  };
}

/** The checks a signal cut short (interrupted, or skipped without a reason of their own) as not certified, with the signal. */
function stoppedAsNotCertified(tests: TestRecord[], signal: string): TestRecord[] {
  const reason = `the run was stopped by ${signal} before this check ended`;
  return tests.map((t) =>
    t.outcome === 'interrupted' || (t.outcome === 'skipped' && notCertifiedReason(t) === undefined)
      ? {
          ...t,
          outcome: 'skipped',
          errors: [],
          annotations: [
            ...t.annotations.filter((a) => a.type === ANNOTATION.requirement),
            { type: ANNOTATION.notCertified, description: reason },
          ],
        }
      : t,
  );
}

/** The tests of the run by each ledger requirement they name; the tests that name none in the ledger, and a failed one of them as a run problem. */
function testsByRequirement(
  tests: readonly TestRecord[],
  known: ReadonlySet<string>,
): { byId: Map<string, TestRecord[]>; unmapped: ConformanceReport['unmapped']; problems: RunProblem[] } {
  const byId = new Map<string, TestRecord[]>();
  const unmapped: ConformanceReport['unmapped'] = [];
  const problems: RunProblem[] = [];
  for (const test of tests) {
    const ids = requirementIds(test);
    const mapped = ids.filter((id) => known.has(id));
    for (const id of ids)
      if (!known.has(id)) {
        const reason = `test "${test.title}" [${test.project}] names ${id}, which is not in the ledger`;
        if (FAILED.includes(test.outcome)) problems.push({ kind: 'unmapped-failure', id, reason });
      }
    if (mapped.length === 0) {
      unmapped.push({ test: test.title, project: test.project, outcome: test.outcome });
      if (FAILED.includes(test.outcome) && ids.length === 0) {
        problems.push({
          kind: 'unmapped-failure',
          reason: `test "${test.title}" [${test.project}] failed and names no ledger requirement`,
        });
      }
      continue;
    }
    for (const id of mapped) {
      const list = byId.get(id) ?? [];
      list.push(test);
      byId.set(id, list);
    }
  }
  return { byId, unmapped, problems };
}

/** One result per ledger requirement from the tests that evidence it, and the requirements not certified. */
function judgeRequirements(
  input: VerdictInput,
  byId: ReadonlyMap<string, TestRecord[]>,
): { requirements: RequirementResult[]; notCertified: NotCertified[] } {
  const requirements: RequirementResult[] = [];
  const notCertified: NotCertified[] = [];
  const met = metFindings(input.tests);
  for (const req of input.ledger) {
    const judged =
      input.interrupted && (byId.get(req.id) ?? []).length === 0 && !req.excluded
        ? stoppedBeforeJudged(req, input.interrupted.signal)
        : requirementStatus(req, byId.get(req.id) ?? []);
    const { tests, status, reason, notCertified: nc } = withMet(req, byId.get(req.id) ?? [], judged, met.get(req.id));
    const result: RequirementResult = {
      id: req.id,
      title: req.title,
      level: req.level,
      source: req.source ?? 'spec',
      status,
      section: req.section,
      ...(req.experimental ? { experimental: true } : {}),
      ...(reason ? { reason } : {}),
      evidence: tests.map(toEvidence),
    };
    requirements.push(result);
    if (nc) notCertified.push(nc);
  }
  return { requirements, notCertified };
}

/** The `met-finding`s of the run by requirement: a finding of another requirement than its test's, met on the test's way. */
function metFindings(tests: readonly TestRecord[]): Map<string, { test: TestRecord; finding: Finding }[]> {
  const byId = new Map<string, { test: TestRecord; finding: Finding }[]>();
  for (const test of tests)
    for (const a of test.annotations) {
      const f = a.type === ANNOTATION.metFinding ? parseFinding(a.description) : undefined;
      if (f?.level === 'fail') byId.set(f.id, [...(byId.get(f.id) ?? []), { test, finding: f }]);
    }
  return byId;
}

/**
 * A requirement with a failing finding met by another check (a 429 it did not plan, judged at once)
 * fails on it, whatever its own tests said: the response is evidence no conformant server produces.
 */
function withMet(
  req: LedgerRequirement,
  own: TestRecord[],
  judged: ReturnType<typeof requirementStatus>,
  met: { test: TestRecord; finding: Finding }[] | undefined,
): ReturnType<typeof requirementStatus> & { tests: TestRecord[] } {
  if (!met?.length || req.excluded || (judged.status === 'fail' && own.length > 0)) return { ...judged, tests: own };
  const tests = [...own, ...new Set(met.map((m) => m.test).filter((t) => !own.includes(t)))];
  const first = met[0]!;
  const reason = `${req.level}-level requirement broken on a response met by ${first.test.title}: ${formatFinding(first.finding)}${first.finding.curl ? `\n  reproduce: ${first.finding.curl}` : ''}`;
  return { ...judged, status: req.level === 'must' ? 'fail' : 'warn', reason, tests };
}

/** The gate of the judged run (gate.ts), with the baseline applied when one is given; `interrupted` when a signal stopped the run. */
function gateOf(
  input: VerdictInput,
  judged: { requirements: RequirementResult[]; problems: RunProblem[]; notCertified: NotCertified[] },
): { gate: GateResult; baseline: ConformanceReport['baseline'] } {
  const g = input.gate ?? {};
  const baseline = g.baseline
    ? { ...applyBaseline(judged, g.baseline.baseline), file: g.baseline.file, digest: g.baseline.digest }
    : undefined;
  const decided = decideGate(judged, {
    strict: g.strict ?? false,
    ...(baseline ? { baseline } : {}),
    ...(g.previous ? { previous: g.previous } : {}),
  });
  const gate: GateResult = input.interrupted
    ? {
        ...decided,
        result: 'interrupted',
        exitCode: input.interrupted.exitCode,
        reasons: [`stopped by ${input.interrupted.signal}: what ran is reported; what did not end is not certified`, ...decided.reasons],
      }
    : decided;
  return { gate, baseline };
}

/** Requests the tests sent, per phase (a phase that sent none is left out). */
function requestsByPhase(tests: readonly TestRecord[]): Record<string, number> {
  return tests.reduce<Record<string, number>>((acc, t) => {
    if (t.requests) acc[t.project] = (acc[t.project] ?? 0) + t.requests;
    return acc;
  }, {});
}

/** Computes the conformance report, with its gate. */
export function computeVerdict(raw: VerdictInput): ConformanceReport {
  const input = raw.interrupted ? { ...raw, tests: stoppedAsNotCertified(raw.tests, raw.interrupted.signal) } : raw;
  const { byId, unmapped, problems } = testsByRequirement(input.tests, new Set(input.ledger.map((r) => r.id)));
  const { requirements, notCertified } = judgeRequirements(input, byId);

  for (const e of input.runErrors ?? []) problems.push({ kind: 'run-error', reason: e });
  for (const f of input.secretFindings ?? []) problems.push({ kind: 'secret-in-artifact', reason: f });
  problems.push(...withLeftChanged(input.problems ?? [], leftChangedProblem(input.tests, input.restoredAfter)));

  const summary: Record<RequirementStatus, number> = { pass: 0, fail: 0, warn: 0, skipped: 0 };
  for (const r of requirements) summary[r.status]++;

  const { gate, baseline } = gateOf(input, { requirements, problems, notCertified });
  return {
    verdict: gate.result as ConformanceReport['verdict'],
    gate,
    ...(baseline ? { baseline } : {}),
    target: input.target,
    profile: input.profile,
    requests: input.tests.reduce((n, t) => n + t.requests, 0),
    requestsByPhase: requestsByPhase(input.tests),
    phases: input.phases ?? [],
    generatedAt: input.generatedAt,
    summary,
    problems,
    notCertified,
    experimental: requirements.filter((r) => r.experimental).map((r) => r.id),
    unmapped,
    requirements,
  };
}
