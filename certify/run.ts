/**
 * `npm run certify` as an explicit list of named steps (`STEPS`) over one run context
 * (`steps/context.ts`), each step a function of `steps/named.ts` with its own test. One loop runs
 * them, stops the run where a step says so, and closes the pacer and the target whatever happens.
 *
 * `runCertify` returns the outcome: the exit code (core/exit-codes.ts: 0 pass, 1 fail, 4 not
 * certified (strict), 5 harness trouble; 2 usage error, 3 target unreachable, 130/143 stopped by
 * SIGINT/SIGTERM during the preflight), the report (judged once, after the secret scan) and the
 * certificate written, or why the run stopped before a verdict. The CLI prints from it.
 *
 * A replay (`CONFORMANCE_REPLAY`) writes into `<REPORTS_DIR>/replay/` and judges only the
 * requirements its one case evidences: the last run's reports and certificate stay as they are.
 */
import type { Phase } from './env.ts';
import { LEDGER_FILE, ROOT_CONFIG } from '../core/paths.ts';
import { EXIT } from '../core/exit-codes.ts';
import type { WrittenCertificate } from './certificate/index.ts';
import type { ConformanceReport } from './verdict.ts';
import { closeTarget, newContext, runSteps, type RunContext, type RunOptions, type Step } from './steps/context.ts';
import {
  certificate,
  judge,
  rescanWritten,
  listLeftOut,
  merge,
  nameOpenAfterStop,
  prepare,
  preflight,
  print,
  repairFirst,
  resolveTarget,
  runPhases,
  scanSecrets,
  settleJournal,
  startPacer,
  takeTargetTurn,
  writeArtifacts,
} from './steps/named.ts';
import { mergeLoadReports } from './steps/merge.ts';
import { interruptedExit } from './steps/preflight.ts';
import { REPLAY_DIR, REPORT_ENTRIES } from './steps/reports-dir.ts';

export { mergeLoadReports, REPORT_ENTRIES };

export { LEDGER_FILE, ROOT_CONFIG };

export { REPLAY_DIR };

export { interruptedExit };

export type { Phase, RunOptions };

/**
 * certify's steps, in order. After a SIGINT or SIGTERM the preflight stops the run (nothing was
 * sent with a key); once past it, the phases start no further phase, the journal is left to the
 * next run (which repairs first) and what it leaves open is named, and the reports of what ran are
 * written and judged.
 */
export const STEPS: readonly Step[] = [
  { name: 'prepare', run: prepare },
  { name: 'resolve the target', run: resolveTarget },
  { name: "take the target's turn", run: takeTargetTurn },
  { name: 'preflight', run: preflight },
  { name: 'start the pacer', run: startPacer },
  { name: 'repair first', run: repairFirst },
  { name: 'list what is left out', run: listLeftOut },
  { name: 'run the phases', run: runPhases },
  { name: 'settle the journal', run: settleJournal, whenStopped: 'skip' },
  { name: 'name what the journal leaves open', run: nameOpenAfterStop },
  { name: 'close the pacer and the target', run: closeTarget },
  { name: 'merge', run: merge },
  { name: 'scan secrets', run: scanSecrets },
  { name: 'judge', run: judge },
  { name: 'write the reports', run: writeArtifacts },
  { name: 'certificate', run: certificate },
  { name: 'scan what was written after the verdict', run: rescanWritten },
  { name: 'print', run: print },
];

/** What a run ends with: its exit code, and the report and certificate, or why it stopped before a verdict. */
export type CertifyOutcome =
  | {
      exitCode: number;
      report: ConformanceReport;
      certificate?: WrittenCertificate;
      /** Keys found in files written after the verdict (described without the key): the run is void, exit 5. */
      lateFindings?: string[];
      reasons?: undefined;
    }
  /** Stopped before a verdict (usage error, preflight, target not started, signal during the preflight): the reasons, redacted. */
  | { exitCode: number; report?: undefined; certificate?: undefined; lateFindings?: undefined; reasons: string[] };

/**
 * Runs certify's steps over one context; returns the outcome (the CLI prints from it). A key found
 * in a file written after the verdict is judged like any key found, and the reports are written
 * again; a key found even in those voids the run: harness trouble (exit 5), the file scrubbed or removed.
 */
export async function runCertify(options: RunOptions): Promise<CertifyOutcome> {
  return outcomeOf(await runSteps(STEPS, newContext(options)));
}

/** The outcome of a run's context once its steps have run. */
export function outcomeOf(ctx: RunContext): CertifyOutcome {
  if (ctx.stop) return { exitCode: ctx.stop.exitCode, reasons: ctx.stop.reasons };
  if (!ctx.report) return { exitCode: EXIT.harness, reasons: ['the run ended without a verdict'] };
  const exitCode = ctx.lateFindings?.length ? EXIT.harness : ctx.report.gate.exitCode;
  return {
    exitCode,
    report: ctx.report,
    ...(ctx.certificate ? { certificate: ctx.certificate } : {}),
    ...(ctx.lateFindings?.length ? { lateFindings: ctx.lateFindings } : {}),
  };
}
