/**
 * `npm run certify` as typed steps, each taking what the one before returned, so the compiler keeps their order
 * (docs/architecture.md, "From certify to the verdict"). A replay writes into `<REPORTS_DIR>/replay/`.
 */
import path from 'node:path';
import { newJournalName } from '../core/journal.ts';
import { LEDGER_FILE, ROOT_CONFIG } from '../core/paths.ts';
import { EXIT } from '../core/exit-codes.ts';
import type { WrittenCertificate } from './certificate/index.ts';
import type { Phase } from './env.ts';
import type { ConformanceReport } from './verdict.ts';
import { judge, merge, scanSecrets, type Evidence } from './steps/judge-run.ts';
import { mergeLoadReports } from './steps/merge.ts';
import { lockTheTarget, preflight, resolveTarget, type OpenedTarget } from './steps/open-target.ts';
import { interruptedExit } from './steps/preflight.ts';
import { abandonRun, prepareOrStop, type PreparedRun } from './steps/prepare.ts';
import { printSummary } from './steps/print.ts';
import { REPLAY_DIR, REPORT_ENTRIES } from './steps/reports-dir.ts';
import { runChecks, type ChecksRan } from './steps/run-checks.ts';
import { isStop, type RunOptions, type RunStop } from './steps/run-options.ts';
import { writeArtifacts, type Artifacts } from './steps/write-artifacts.ts';

export { interruptedExit, LEDGER_FILE, mergeLoadReports, REPLAY_DIR, REPORT_ENTRIES, ROOT_CONFIG };
export type { Phase, RunOptions };

/** What a run ends with: its exit code, and the report and certificate, or why it stopped before a verdict. */
export type CertifyOutcome =
  | {
      exitCode: number;
      report: ConformanceReport;
      certificate?: WrittenCertificate;
      /** Keys found in files written after the verdict (described without the key): the run is void, exit 5. */
      keysInLateFiles?: string[];
      reasons?: undefined;
    }
  /** Stopped before a verdict (usage error, preflight, target not started, signal during the preflight): the reasons, redacted. */
  | { exitCode: number; report?: undefined; certificate?: undefined; keysInLateFiles?: undefined; reasons: string[] };

/** Runs certify; returns the outcome (the CLI prints from it). The target, its lock and the pacer are closed whatever happens. */
export async function runCertify(options: RunOptions): Promise<CertifyOutcome> {
  const started = Date.now();
  const journalFile = newJournalName();
  const run = prepareOrStop(options);
  if (isStop(run)) return stoppedOutcome(run);
  const resolved = await resolveTarget(run, options);
  if (isStop(resolved)) return abandon(run, resolved);
  let checks: ChecksRan | undefined;
  try {
    const locked = await lockTheTarget(run, resolved, options);
    if (isStop(locked)) return abandon(run, locked);
    const reached = await preflight(run, locked, options.signal);
    if (isStop(reached)) return abandon(run, reached);
    checks = await runChecks(run, reached, journalFile, options);
    const closed = await reached.session.close();
    const merged = await merge(run, reached.console);
    const evidence: Evidence = { run, opened: reached, checks, closed, merged, ...(options.signal ? { signal: options.signal } : {}) };
    const scanned = scanSecrets(run, reached.console, merged);
    const artifacts = writeArtifacts(evidence, scanned, judge(evidence, scanned.findings), options.env);
    printRun(evidence, artifacts, started);
    return outcomeOf(artifacts);
  } finally {
    await resolved.session.close();
  }
}

/** Gives up a prepared run stopped before a verdict (its scratch folder removed, its manifest kept). */
function abandon(run: PreparedRun, stop: RunStop): CertifyOutcome {
  abandonRun(run);
  return stoppedOutcome(stop);
}

const stoppedOutcome = (stop: RunStop): CertifyOutcome => ({ exitCode: stop.exitCode, reasons: stop.reasons });

/** The outcome of a judged run: the gate's exit code, or 5 when a key reached even the files written again. */
export function outcomeOf(a: Artifacts): CertifyOutcome {
  return {
    exitCode: a.keysInLateFiles.length ? EXIT.harness : a.report.gate.exitCode,
    report: a.report,
    ...(a.certificate ? { certificate: a.certificate } : {}),
    ...(a.keysInLateFiles.length ? { keysInLateFiles: a.keysInLateFiles } : {}),
  };
}

/** Step "print": the console summary and the verdict line. */
export function printRun(
  e: Pick<Evidence, 'run' | 'merged'> & { opened: Pick<OpenedTarget, 'console'> },
  a: Artifacts,
  started: number,
): void {
  const { run, merged } = e;
  const otherReports = [
    'conformance.json',
    // A verdictOnly run does not merge the phases' blobs into these.
    ...(run.mergeReports ? ['html/index.html', 'junit.xml', 'results.json'] : []),
    'evidence.har',
    ...(merged.loadWritten ? ['load.json'] : []),
  ];
  printSummary(a.report, e.opened.console.say, {
    detail: e.opened.console.detail,
    reportsFile: path.join(run.reportsDir, 'conformance.md'),
    otherReports,
    seconds: (Date.now() - started) / 1000,
  });
}
