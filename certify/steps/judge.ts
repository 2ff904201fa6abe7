/**
 * Step "judge": the phases' summaries and the verdict (`verdict.ts`, pure) over the ledger and
 * every test record, then `conformance.json` and `conformance.md` written (redacted).
 */
import fs from 'node:fs';
import path from 'node:path';
import { renderMarkdown } from '../markdown.ts';
import type { PhaseResult } from '../phases.ts';
import { computeVerdict, type ConformanceReport, type PhaseSummary, type VerdictInput } from '../verdict.ts';

/** How each phase of the profile went, in run order: ran (seconds, exit), left out by the profile, or interrupted. */
export function phaseSummaries(allPhases: readonly string[], ran: readonly string[], leftOut: readonly string[], results: readonly PhaseResult[], profile: string): PhaseSummary[] {
  return allPhases
    .filter((p) => ran.includes(p) || leftOut.includes(p))
    .map((name) => {
      const r = results.find((x) => x.phase === name);
      if (r) return { name, ran: true, seconds: Math.round(r.durationMs / 100) / 10, exit: r.exitCode ?? r.signal };
      if (leftOut.includes(name)) return { name, ran: false, reason: `CONFORMANCE_PROFILE=${profile}` };
      return { name, ran: false, reason: 'run interrupted' };
    });
}

/** Computes the verdict and writes `conformance.json` and `conformance.md` under `reportsDir`. */
export function judge(input: VerdictInput, reportsDir: string, redact: (s: string) => string, extra: Record<string, unknown> = {}): ConformanceReport {
  const report = { ...computeVerdict(input), ...extra } as ConformanceReport;
  fs.writeFileSync(path.join(reportsDir, 'conformance.json'), `${redact(JSON.stringify(report, null, 2))}\n`);
  fs.writeFileSync(path.join(reportsDir, 'conformance.md'), redact(renderMarkdown(report)));
  return report;
}
