/**
 * The gate: from the conformance verdict, the baseline and strict mode to one result and one exit
 * code (core/exit-codes.ts). Pure. Order: harness trouble first (the run could not judge, so a
 * "fail" beside it is not the target's verdict alone), then new failures, then, in strict mode,
 * anything not certified.
 */
import { EXIT } from '../../core/exit-codes.ts';
import { isHarnessProblem } from '../../core/results.ts';
import type { BaselineOutcome } from '../baseline.ts';
import type { ConformanceReport } from '../verdict.ts';
import type { GateResult } from './types.ts';


export interface GateOptions {
  strict: boolean;
  baseline?: BaselineOutcome;
}

export function decideGate(report: ConformanceReport, options: GateOptions): GateResult {
  const { strict, baseline } = options;
  const harness = report.problems.filter(isHarnessProblem);
  const otherProblems = report.problems.filter((p) => !isHarnessProblem(p));
  const failed = report.requirements.filter((r) => r.status === 'fail');
  const newFailures = baseline ? baseline.newFailures.map((f) => f.id) : failed.map((r) => r.id);
  const reasons: string[] = [];

  if (harness.length) {
    reasons.push(...harness.map((p) => p.reason.split('\n')[0]!));
    return { result: 'harness', exitCode: EXIT.harness, strict, reasons };
  }
  if (newFailures.length || otherProblems.length) {
    if (newFailures.length) reasons.push(`${baseline ? 'new failures' : 'failed'}: ${newFailures.join(', ')}`);
    reasons.push(...otherProblems.map((p) => p.reason.split('\n')[0]!));
    return { result: 'fail', exitCode: EXIT.fail, strict, reasons };
  }
  if (baseline?.known.length) reasons.push(`known failures accepted by the baseline: ${baseline.known.map((k) => k.id).join(', ')}`);
  if (strict && report.notCertified.length) {
    reasons.unshift(`not certified (strict): ${report.notCertified.map((n) => n.id).join(', ')}`);
    return { result: 'not-certified', exitCode: EXIT.notCertified, strict, reasons };
  }
  if (report.notCertified.length) reasons.push(`not certified (allowed without --strict): ${report.notCertified.map((n) => n.id).join(', ')}`);
  return { result: 'pass', exitCode: EXIT.pass, strict, reasons };
}
