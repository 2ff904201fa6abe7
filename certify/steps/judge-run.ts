/**
 * Steps "merge", "scan secrets", "judge": from the phases' results and the closed target to the
 * verdict (docs/architecture.md, "From certify to the verdict").
 */
import { PHASES } from '../env.ts';
import type { ConformanceReport, VerdictInput } from '../verdict.ts';
import type { RunConsole } from './console.ts';
import { judgeReport, redactReport, verdictInputFor } from './judge.ts';
import { mergeRun, type MergedRun } from './merge.ts';
import type { OpenedTarget, TargetClosed } from './open-target.ts';
import { interruptedExit } from './preflight.ts';
import type { PreparedRun } from './prepare.ts';
import { journalProblem } from './repair.ts';
import type { ChecksRan } from './run-checks.ts';
import { scanSecrets as scanFolder } from './scan-secrets.ts';
import { acrossMachinesNote } from './target-lock.ts';

/** The secret scan: every key found in memory or in a file (described without the key), and when it began. */
export interface SecretsScanned {
  findings: string[];
  /** Files written at or after this time (ms since the epoch) are scanned again (`write-artifacts.ts`). */
  scannedAt: number;
}

/** Everything the verdict is judged from. */
export interface Evidence {
  run: PreparedRun;
  opened: OpenedTarget;
  checks: ChecksRan;
  closed: TargetClosed;
  merged: MergedRun;
  signal?: AbortSignal;
}

/** Step "merge" (certify/steps/merge.ts): the test records the run's reporter wrote per phase; load.json. */
export function merge(run: PreparedRun, console: RunConsole): Promise<MergedRun> {
  return mergeRun(run, console.redact, console.say);
}

/** Step "scan secrets": every file of the reports folder for every form of every key; with the keys the redacting reporter caught. */
export function scanSecrets(run: PreparedRun, console: RunConsole, merged: Pick<MergedRun, 'redactions'>): SecretsScanned {
  const { secrets, say, detail } = console;
  const scannedAt = Date.now();
  const scan = scanFolder([run.reportsDir], secrets, process.cwd(), run.folder.owns);
  (scan.findings.length ? say : detail)(
    `certify: secret scan of ${scan.filesScanned} files: ${scan.findings.length ? `${scan.findings.length} finding(s)` : 'no key found'}\n`,
  );
  for (const x of scan.findings) say(`  ✗ ${x}\n`);
  return { findings: [...merged.redactions.leaks, ...scan.findings], scannedAt };
}

/** The verdict's input (a replay: only the requirements its case evidences); `secretFindings` a key found fails the run. */
export function verdictInputOf(e: Evidence, secretFindings: readonly string[]): VerdictInput {
  const { run, checks, merged, signal } = e;
  const { redact } = e.opened.console;
  const input = verdictInputFor({
    allPhases: PHASES,
    phases: run.phases,
    leftOutPhases: run.leftOutPhases,
    results: checks.results,
    notRun: checks.notRun,
    tests: merged.tests,
    ledger: run.ledger,
    gate: run.gate,
    replaying: run.replaying,
    profile: run.config.profile,
    target: e.opened.session.target.description,
    generatedAt: merged.generatedAt,
    runErrors: [...run.runErrors, ...checks.runErrors, ...merged.runErrors],
    redact,
    ...(signal?.aborted ? { interrupted: { signal: String(signal.reason ?? 'SIGINT'), exitCode: interruptedExit(signal) } } : {}),
  });
  // The journal: pets left changed (a run-level problem), and pets its end-of-run repair put back.
  const problem = journalProblem(checks.journal);
  if (problem) input.problems = [...(input.problems ?? []), problem];
  if (checks.openAfterStop)
    input.problems = [...(input.problems ?? []), { ...checks.openAfterStop, reason: redact(checks.openAfterStop.reason) }];
  if (checks.journal.end.restored.length) input.restoredAfter = checks.journal.end.restored.map((p) => p.petId);
  return { ...input, secretFindings: [...secretFindings] };
}

/** Step "judge": the verdict and its gate, redacted as conformance.json states it (the CLI prints it, the certificate is written from it). */
export function judge(e: Evidence, secretFindings: readonly string[]): ConformanceReport {
  const { closed, checks } = e;
  const across = acrossMachinesNote((closed.pacing ?? []).filter((k) => k.anotherClient).map((k) => k.key));
  const otherRuns =
    closed.otherRuns || across
      ? { ...(closed.otherRuns ?? { waitedFor: [], waitedS: 0, waitedForThis: [] }), ...(across ? { acrossMachines: across } : {}) }
      : undefined;
  const extra = {
    ...(closed.pacing ? { pacing: closed.pacing } : {}),
    journal: checks.journal,
    ...(otherRuns ? { otherRuns } : {}),
    ...(closed.messages ? { footprint: { messages: closed.messages } } : {}),
  };
  return redactReport(judgeReport(verdictInputOf(e, secretFindings), extra), e.opened.console.redact);
}
