/**
 * Steps "start the pacer", "repair first", "list what is left out", "run the phases", "settle the
 * journal", "name what the journal leaves open": from a reached target to the phases' results and
 * the journal's account (docs/architecture.md, "From certify to the verdict").
 */
import path from 'node:path';
import { readJournals } from '../../core/journal.ts';
import type { RunProblem } from '../../core/results.ts';
import { emptyRepair } from '../../suites/journal/repair.ts';
import { listPhases, type PhaseResult } from '../phases.ts';
import type { TestRecord } from '../verdict.ts';
import type { RunConsole } from './console.ts';
import { initialHoldsOf, journalRefusals, pendingHolds } from './holds.ts';
import { listLeftOut as listLeftOutPhases } from './left-out.ts';
import type { OpenedTarget } from './open-target.ts';
import { startRunPacer, type RunPacer } from './pacer.ts';
import type { PreparedRun } from './prepare.ts';
import { openAfterStopProblem, repairFirst as repairJournal, settleOwn, type JournalReport } from './repair.ts';
import { runAllPhases } from './run-phases.ts';
import type { RunOptions } from './run-options.ts';

type Env = Record<string, string | undefined>;

/** The run-wide pacer started, and the environment every phase and repair gets. */
export interface PacerStarted {
  pacer: RunPacer;
  childEnv: Env;
  journal: JournalReport;
}

/** What the phase-running step is given. */
export interface PhasesInput {
  run: PreparedRun;
  childEnv: Env;
  console: RunConsole;
  pacer: RunPacer;
  signal?: AbortSignal;
}

/** What the phase-running step returns: how each phase ended and its run problems. */
export interface PhasesRan {
  results: PhaseResult[];
  runErrors: string[];
}

/** What the checks leave for the verdict: the phases' results, the tests left out, the journal's account. */
export interface ChecksRan extends PhasesRan {
  journal: JournalReport;
  /** The tests of the phases the profile leaves out (not certified). */
  notRun: TestRecord[];
  /** After a signal: what the run's own journal leaves open (a run problem, not yet redacted). */
  openAfterStop?: RunProblem;
}

/** Step "start the pacer": one run-wide pacer for every phase, holding the keys whose journaled 429 still pends; the children's environment. */
export async function startPacer(run: PreparedRun, opened: OpenedTarget, journalFile: string): Promise<PacerStarted> {
  const target = opened.session.target;
  const baseUrl = target.env.BASE_URL!;
  // Spec, Limits rule 5: nothing is sent on a key while a 429 an earlier run journaled still pends.
  const holds = pendingHolds(readJournals(run.reportsDir), baseUrl, Date.now(), run.settings.MAX_RETRY_AFTER_S);
  for (const h of holds) opened.console.say(`certify: ${h.reason}\n`);
  const pacer = await startRunPacer({
    maxRetryAfterS: run.settings.MAX_RETRY_AFTER_S,
    workers: run.settings.WORKERS,
    maxMessages: run.settings.MAX_MESSAGES,
    initialHolds: initialHoldsOf(holds),
    onRefusal: journalRefusals(path.join(run.reportsDir, journalFile), baseUrl, 'pacer (certify)'),
  });
  opened.session.holdPacer(pacer);
  const childEnv = {
    ...target.env,
    ...pacer.env,
    CONFORMANCE_PROFILE: run.config.profile,
    REPORTS_DIR: run.reportsDir,
    CERTIFY_JOURNAL_FILE: path.join(run.reportsDir, journalFile),
  };
  const journal: JournalReport = {
    file: journalFile,
    repair: emptyRepair(),
    end: emptyRepair(),
    requests: 0,
    ...(holds.length ? { holds } : {}),
  };
  return { pacer, childEnv, journal };
}

/** Step "repair first": what an earlier run left open in the journal is put back before anything else is sent. */
export async function repairFirst(run: PreparedRun, started: PacerStarted, say: (text: string) => void): Promise<JournalReport> {
  const repaired = await repairJournal(run.reportsDir, started.journal.file, started.childEnv, say);
  return { ...started.journal, repair: repaired.outcome, requests: started.journal.requests + repaired.requests };
}

/** Step "list what is left out": each check of a phase the profile does not run becomes not certified. */
export async function listLeftOut(
  run: PreparedRun,
  childEnv: Env,
  console: RunConsole,
): Promise<{ notRun: TestRecord[]; runErrors: string[] }> {
  const list = (ps: readonly string[]) =>
    listPhases([...ps], run.configFile, childEnv, console.redact, path.join(run.workDir, 'list.json'));
  const leftOut = await listLeftOutPhases(run.leftOutPhases, run.config.profile, list);
  for (const line of leftOut.lines) console.say(line);
  return { notRun: leftOut.notRun, runErrors: leftOut.runErrors };
}

/** Step "run the phases" (certify/steps/run-phases.ts): every phase in one Playwright run; a signal starts no further phase. */
export async function runPhasesStep(input: PhasesInput): Promise<PhasesRan> {
  const { run, console, pacer, signal } = input;
  const ran = await runAllPhases(run, input.childEnv, console, () => pacer.progress(), signal);
  return { results: ran.results, runErrors: ran.runErrors };
}

/** Step "settle the journal": what a check left open is tried once more (the console says it only when verbose). */
export async function settleJournal(
  run: PreparedRun,
  journal: JournalReport,
  childEnv: Env,
  detail: (text: string) => void,
): Promise<JournalReport> {
  const settled = await settleOwn(run.reportsDir, journal.file, childEnv, detail);
  return { ...journal, end: settled.outcome, requests: journal.requests + settled.requests };
}

/**
 * Step "name what the journal leaves open": after a signal the run sends nothing more; what its own
 * journal leaves open is said now and kept as a run problem, with the two ways to put it back.
 */
export function nameOpenAfterStop(
  run: PreparedRun,
  journalFile: string,
  console: RunConsole,
  signal?: AbortSignal,
): RunProblem | undefined {
  if (!signal?.aborted) return undefined;
  const problem = openAfterStopProblem(run.reportsDir, journalFile, String(signal.reason ?? 'a signal'));
  if (problem) console.say(`certify: ${problem.reason}\n`);
  return problem;
}

/**
 * The checks, in order. After a signal the phases start no further phase and the journal is not
 * settled (the next run repairs first); what it leaves open is named.
 */
export async function runChecks(
  run: PreparedRun,
  opened: OpenedTarget,
  journalFile: string,
  options: Pick<RunOptions, 'env' | 'signal'>,
): Promise<ChecksRan> {
  const { console } = opened;
  const { signal } = options;
  const started = await startPacer(run, opened, journalFile);
  const repaired = await repairFirst(run, started, console.say);
  const leftOut = await listLeftOut(run, started.childEnv, console);
  const ran = await runPhasesStep({
    run,
    childEnv: started.childEnv,
    console,
    pacer: started.pacer,
    ...(signal ? { signal } : {}),
  });
  const journal = signal?.aborted ? repaired : await settleJournal(run, repaired, started.childEnv, console.detail);
  const openAfterStop = nameOpenAfterStop(run, journalFile, console, signal);
  return {
    ...ran,
    runErrors: [...leftOut.runErrors, ...ran.runErrors],
    journal,
    notRun: leftOut.notRun,
    ...(openAfterStop ? { openAfterStop } : {}),
  };
}
