/**
 * The certification verdict (pure: no file system, clock or environment): from the ledger and the
 * test results to a status per requirement and one verdict, which is the gate's result (gate.ts).
 * The rules, per status: reports/README.md, "How a status is decided".
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
import { applyBaseline } from './baseline.ts';
import { decideGate, type GateResult } from './gate.ts';
import type {
  EvidenceEntry,
  RequirementResult,
  NotCertified,
  PhaseSummary,
  VerdictInput,
  VerdictGateOptions,
  PacingSummary,
  ConformanceReport,
} from './report-types.ts';

export type { Annotation, Level, LedgerRequirement, Outcome, RequirementStatus, RunProblem, Source, TestRecord };
export type {
  EvidenceEntry,
  RequirementResult,
  NotCertified,
  PhaseSummary,
  VerdictInput,
  VerdictGateOptions,
  PacingSummary,
  ConformanceReport,
};

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
