/**
 * Step "exercise the target": the steps that talk to the target, in order: the preflight (before
 * any key leaves the machine), what the run is about to do, one run-wide pacer for every phase,
 * the repair of what an earlier run left open in the journal (before anything else is sent), the
 * list of what the profile leaves out, the phases, and the settling of the run's own journal. Whatever happens, the pacer and the target
 * are closed before it returns.
 */
import path from 'node:path';
import { MIN_SAFE_SECRET_LENGTH, SECRET_VARIABLES, type secretsFromEnv } from '../../core/secrets.ts';
import { listPhases, runPhase, type PhaseResult } from '../phases.ts';
import type { PacingSummary, VerdictInput } from '../verdict.ts';
import { listLeftOut } from './left-out.ts';
import { startRunPacer, type RunPacer } from './pacer.ts';
import { interruptedExit, preflight, PREFLIGHT_EXIT } from './preflight.ts';
import { abandonRun, phaseFiles, type PreparedRun } from './prepare.ts';
import type { ResolvedTarget } from './resolve-target.ts';
import { runPhases } from './run-phases.ts';
import { repairFirst, settleOwn, type JournalReport } from './repair.ts';
import { emptyRepair } from '../../suites/journal/repair.ts';
import { newJournalName } from '../../core/journal.ts';

/** How the run speaks: every line goes through `say`, which redacts the run's keys. */
export interface RunVoice {
  secrets: ReturnType<typeof secretsFromEnv>;
  redact: (text: string) => string;
  say: (text: string) => void;
}

/** What the phases left: their results, the left-out phases' tests (not run), the pacer's report and the run's problems. */
export type Exercised =
  | { ok: true; results: PhaseResult[]; notRun: VerdictInput['tests']; pacing: PacingSummary[] | undefined; runErrors: string[]; journal?: JournalReport }
  /** The preflight stopped the run (nothing was judged): the exit status. */
  | { ok: false; exit: number };

/** Runs preflight, pacer, left-out list and phases against the target; closes the pacer and the target in every case. */
export async function exerciseTarget(run: PreparedRun, target: ResolvedTarget, voice: RunVoice, signal?: AbortSignal): Promise<Exercised> {
  const { config, settings } = run;
  const { say } = voice;
  let pacer: RunPacer | undefined;
  let pacing: PacingSummary[] | undefined;
  const runErrors: string[] = [];
  let notRun: VerdictInput['tests'] = [];
  let results: PhaseResult[] = [];
  const journalFile = newJournalName();
  let journal: JournalReport = { file: journalFile, repair: emptyRepair(), end: emptyRepair(), requests: 0 };
  try {
    const pre = await preflight(
      { baseUrl: target.env.BASE_URL!, ...(target.env.API_URL ? { apiUrl: target.env.API_URL } : {}) },
      { timeoutMs: Math.min(settings.REQUEST_TIMEOUT_MS, 10_000), insecure: settings.INSECURE_TLS, ...(signal ? { signal } : {}) },
    );
    if (!pre.ok) {
      say(`certify: ${pre.interrupted ? '' : 'preflight failed: '}${pre.line}\n`);
      abandonRun(run);
      return { ok: false, exit: pre.interrupted ? interruptedExit(signal) : PREFLIGHT_EXIT };
    }
    for (const line of pre.lines) say(`certify: ${line}\n`);
    announceRun(run, target, voice);

    pacer = await startRunPacer({ maxRetryAfterS: settings.MAX_RETRY_AFTER_S, workers: settings.WORKERS });
    const childEnv: Record<string, string | undefined> = {
      ...target.env,
      ...pacer.env,
      CONFORMANCE_PROFILE: config.profile,
      REPORTS_DIR: run.reportsDir,
      CERTIFY_JOURNAL_FILE: path.join(run.reportsDir, journalFile),
    };
    // Step: repair first (what an earlier run left open in the journal), before anything else is sent.
    const repaired = await repairFirst(run.reportsDir, journalFile, childEnv, say);
    journal = { file: journalFile, repair: repaired.outcome, end: emptyRepair(), requests: repaired.requests };

    const leftOut = await listLeftOut(run.leftOutPhases, config.profile, (ps) => listPhases([...ps], run.configFile, childEnv, voice.redact, path.join(run.workDir, 'list.json')));
    for (const line of leftOut.lines) say(line);
    notRun = leftOut.notRun;
    runErrors.push(...leftOut.runErrors);

    const ran = await runAllPhases(run, childEnv, voice, () => pacer!.progress(), signal);
    results = ran.results;
    runErrors.push(...ran.runErrors);
    // Step: settle the run's own journal (a SIGINT or SIGTERM leaves it to the next run, which repairs first).
    if (!signal?.aborted) {
      const settled = await settleOwn(run.reportsDir, journalFile, childEnv, say);
      journal = { ...journal, end: settled.outcome, requests: journal.requests + settled.requests };
    }
  } finally {
    if (pacer) pacing = await pacer.close();
    await target.close();
  }
  return { ok: true, results, notRun, pacing, runErrors, journal };
}

/** Says what the run is about to do: profile, phases, which keys were given (never their values), notes. */
function announceRun(run: PreparedRun, target: ResolvedTarget, { secrets, say }: RunVoice): void {
  const { config } = run;
  say(
    `certify: profile ${config.profile}; phases ${run.phases.join(' → ')}; keys given: ` +
      `${SECRET_VARIABLES.filter((n) => target.env[n]).join(', ') || 'none'}; reports in ${run.reportsDir}\n`,
  );
  for (const note of config.notes) say(`certify: note: ${note}\n`);
  for (const s of secrets) {
    if (s.value.length < MIN_SAFE_SECRET_LENGTH) say(`certify: note: ${s.name} is shorter than ${MIN_SAFE_SECRET_LENGTH} characters; the secret scan may report coincidences\n`);
  }
}

/**
 * Runs the profile's phases, each a Playwright run with the pacer's environment, writing into files
 * of its own (`phaseFiles`): its output folder, its blob report, its redaction log.
 */
export function runAllPhases(
  run: Pick<PreparedRun, 'config' | 'phases' | 'configFile' | 'reportsDir' | 'blobDir' | 'redactionsDir'>,
  childEnv: Record<string, string | undefined>,
  { redact, say }: RunVoice,
  progress: () => { requests: number; refused: number; waits: number },
  signal?: AbortSignal,
): ReturnType<typeof runPhases> {
  const { config } = run;
  return runPhases(
    run.phases,
    (phase) => {
      const files = phaseFiles(run, phase);
      return runPhase(
        {
          phase,
          configFile: run.configFile,
          env: { ...childEnv, CERTIFY_REDACTIONS_FILE: files.redactionsFile },
          blobFile: files.blobFile,
          outputDir: files.outputDir,
          ...(config.workers ? { workers: config.workers } : {}),
          timeoutS: config.phaseTimeoutS,
          write: say,
          ...(signal ? { signal } : {}),
        },
        redact,
      );
    },
    say,
    { phaseTimeoutS: config.phaseTimeoutS, ...(signal ? { signal } : {}), progress },
  );
}
