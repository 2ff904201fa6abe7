/**
 * The gate: the verdict, the baseline, a previous certificate and strict mode to one result and one exit code
 * (core/exit-codes.ts), which every report states. Pure. Its order and known failures: docs/vendor-guide.md.
 */
import { EXIT } from '../core/exit-codes.ts';
import { isHarnessProblem, type RequirementStatus, type RunProblem } from '../core/results.ts';
import type { BaselineOutcome } from './baseline.ts';

/** What the gate decided (the CLI's exit code): the one result every report states. */
export interface GateResult {
  /**
   * `pass`, `fail`, `not-certified` (strict), `harness` (harness trouble: the run could not judge);
   * in the CLI's JSON error document also `unreachable` (exit 3), `usage` (exit 2) and
   * `interrupted` (stopped by a signal before anything was judged: 130, 143).
   */
  result: 'pass' | 'fail' | 'not-certified' | 'harness' | 'unreachable' | 'usage' | 'interrupted';
  exitCode: number;
  strict: boolean;
  /** Why the gate is what it is, one line each (no keys). */
  reasons: string[];
  /** Failed requirements that do not fail the gate: listed in the baseline, or not passing in the compared certificate either. */
  knownFailures: { id: string; reason?: string; from: 'baseline' | 'previous certificate' }[];
  /** Known failures that pass (or warn) now: remove them from the baseline. */
  fixedFailures: { id: string; status: RequirementStatus; from: 'baseline' | 'previous certificate' }[];
  /** Failed requirements that fail the gate. */
  newFailures: { id: string; why: string }[];
  /** The baseline file (name) and its SHA-256, when one was given. */
  baseline?: { file: string; digest: string };
  /** The certificate the run was gated on (`--no-regression-from`): its file name, digest and date. */
  comparedWith?: { file: string; certificate: string; generatedAt: string };
}

/** A previous certificate, as the gate needs it: each requirement's status and where it came from. */
export interface PreviousRun {
  file: string;
  /** Its `digests.certificate`. */
  digest: string;
  generatedAt: string;
  statuses: Record<string, RequirementStatus>;
}

export interface GateOptions {
  strict: boolean;
  baseline?: BaselineOutcome & { file?: string; digest?: string };
  previous?: PreviousRun;
}

/** What the gate reads of a conformance report. */
export interface GateReport {
  problems: readonly RunProblem[];
  notCertified: readonly { id: string }[];
  requirements: readonly { id: string; status: RequirementStatus }[];
}

const PASSED: readonly RequirementStatus[] = ['pass', 'warn'];

/** Splits the failed requirements into known and new, and lists the fixed ones, from the baseline and the previous run. */
function classify(report: GateReport, o: GateOptions): Pick<GateResult, 'knownFailures' | 'fixedFailures' | 'newFailures'> {
  const byBaseline = new Map((o.baseline?.known ?? []).map((k) => [k.id, k]));
  const knownFailures: GateResult['knownFailures'] = [];
  const newFailures: GateResult['newFailures'] = [];
  for (const r of report.requirements.filter((x) => x.status === 'fail')) {
    const k = byBaseline.get(r.id);
    const before = o.previous?.statuses[r.id];
    if (k) knownFailures.push({ id: r.id, from: 'baseline', ...(k.reason ? { reason: k.reason } : {}) });
    else if (o.previous && before !== undefined && !PASSED.includes(before))
      knownFailures.push({ id: r.id, from: 'previous certificate', reason: `${before} in the compared certificate` });
    else if (o.previous && before !== undefined)
      newFailures.push({ id: r.id, why: `regressed: ${before} in the compared certificate, fail now` });
    else if (o.previous) newFailures.push({ id: r.id, why: 'not in the compared certificate' });
    else newFailures.push({ id: r.id, why: o.baseline ? 'not in the baseline' : 'failed' });
  }
  const fixedFailures: GateResult['fixedFailures'] = (o.baseline?.fixed ?? []).map((f) => ({
    id: f.id,
    status: f.status,
    from: 'baseline' as const,
  }));
  if (o.previous) {
    for (const r of report.requirements) {
      if (o.previous.statuses[r.id] === 'fail' && PASSED.includes(r.status) && !fixedFailures.some((f) => f.id === r.id)) {
        fixedFailures.push({ id: r.id, status: r.status, from: 'previous certificate' });
      }
    }
  }
  return { knownFailures, fixedFailures, newFailures };
}

export function decideGate(report: GateReport, options: GateOptions): GateResult {
  const { strict, baseline, previous } = options;
  const harness = report.problems.filter(isHarnessProblem);
  const otherProblems = report.problems.filter((p) => !isHarnessProblem(p));
  const lists = classify(report, options);
  const base = {
    strict,
    ...lists,
    ...(baseline?.file && baseline.digest ? { baseline: { file: baseline.file, digest: baseline.digest } } : {}),
    ...(previous ? { comparedWith: { file: previous.file, certificate: previous.digest, generatedAt: previous.generatedAt } } : {}),
  };
  const reasons: string[] = [];
  const ids = (list: readonly { id: string }[]) => list.map((x) => x.id).join(', ');

  if (harness.length) {
    reasons.push(...harness.map((p) => p.reason.split('\n')[0]!));
    return { result: 'harness', exitCode: EXIT.harness, reasons, ...base };
  }
  if (lists.newFailures.length || otherProblems.length) {
    const label = previous ? 'regressions or new failures' : baseline ? 'new failures' : 'failed';
    if (lists.newFailures.length) reasons.push(`${label}: ${ids(lists.newFailures)}`);
    reasons.push(...otherProblems.map((p) => p.reason.split('\n')[0]!));
    if (lists.knownFailures.length) reasons.push(`known failures: ${ids(lists.knownFailures)}`);
    return { result: 'fail', exitCode: EXIT.fail, reasons, ...base };
  }
  const fromBaseline = lists.knownFailures.filter((k) => k.from === 'baseline');
  const fromPrevious = lists.knownFailures.filter((k) => k.from === 'previous certificate');
  if (fromBaseline.length) reasons.push(`known failures accepted by the baseline: ${ids(fromBaseline)}`);
  if (fromPrevious.length) reasons.push(`failures that did not pass in the compared certificate either: ${ids(fromPrevious)}`);
  if (strict && report.notCertified.length) {
    reasons.unshift(`not certified (strict): ${report.notCertified.map((n) => n.id).join(', ')}`);
    return { result: 'not-certified', exitCode: EXIT.notCertified, reasons, ...base };
  }
  if (report.notCertified.length)
    reasons.push(`not certified (allowed without --strict): ${report.notCertified.map((n) => n.id).join(', ')}`);
  return { result: 'pass', exitCode: EXIT.pass, reasons, ...base };
}

/** The gate's one line, the same in the console, conformance.md and junit.xml. */
export function gateLine(gate: GateResult): string {
  const label = gate.result === 'harness' ? 'HARNESS TROUBLE' : gate.result.toUpperCase();
  const known = gate.knownFailures.length
    ? ` (with ${gate.knownFailures.length} known failure(s): ${gate.knownFailures.map((k) => k.id).join(', ')})`
    : '';
  return `gate: ${label}${known} — exit ${gate.exitCode}`;
}
