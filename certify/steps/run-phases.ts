/**
 * Step "run the phases": each phase (a Playwright project, `playwright.config.ts`) runs as its own
 * child process, as soon as the phases it comes after (`metadata.after`) have ended, so phases on
 * different keys overlap; a failing phase never stops the next. A phase that ends without a
 * report, or over PHASE_TIMEOUT_S, is a run problem.
 */
import { phasesBefore, START_FIRST_MAX_MS, yieldsAtStart } from '../phase-list.ts';
import { SECRET_VARIABLES } from '../../core/secrets.ts';
import { runPhase, type PhaseResult } from '../phases.ts';
import type { RunConsole } from './console.ts';
import { phaseFiles, type PreparedRun } from './prepare.ts';

export interface PhasesOutcome {
  results: PhaseResult[];
  runErrors: string[];
}

/** How a finished phase ended, in words: its checks by outcome when its report counts them (`121 passed, 2 failed`). */
export function phaseEnding(r: PhaseResult): string {
  if (r.timedOut) return 'stopped after PHASE_TIMEOUT_S';
  if (r.signal) return `killed by ${r.signal}`;
  const c = r.counts;
  if (c && c.passed + c.failed + c.flaky + c.skipped > 0) {
    const parts = [`${c.passed} passed`, ...(c.failed ? [`${c.failed} failed`] : []), ...(c.flaky ? [`${c.flaky} flaky`] : [])];
    return `${parts.join(', ')}${c.skipped ? ` (${c.skipped} not run)` : ''}${r.exitCode === 0 || c.failed ? '' : `, exit ${r.exitCode}`}`;
  }
  return r.exitCode === 0 ? 'all checks passed' : 'some checks failed';
}

/** The run-wide pacer's counts so far, all keys together. */
export interface Progress {
  requests: number;
  /** 429 responses seen. */
  refused: number;
  waits: number;
}

/** `; 62 requests, 1 429, 1 wait; 1 phase left`: what a phase spent on the run-wide pacer, and what remains. */
export function progressText(before: Progress, after: Progress, left: number): string {
  const n = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;
  return `; ${n(after.requests - before.requests, 'request')}, ${n(after.refused - before.refused, '429', '429s')}, ${n(after.waits - before.waits, 'wait')}; ${left ? `${n(left, 'phase')} left` : 'last phase'}`;
}

/**
 * Runs `phases` with `run`, each as soon as the phases it comes after (`before`, default the
 * config's `metadata.after`) have ended; phases without such a tie run at the same time. Stops
 * starting new ones once `signal` aborts. Results are in `phases` order.
 */
export async function runPhases(
  phases: readonly string[],
  run: (phase: string) => Promise<PhaseResult>,
  say: (text: string) => void,
  options: {
    phaseTimeoutS: number;
    signal?: AbortSignal;
    progress?: () => Progress;
    before?: (phase: string, running: readonly string[]) => string[];
    /** What a phase waits for once the phases it comes after have ended (none: it starts then). */
    startGate?: (phase: string) => Promise<void> | undefined;
    /** Called once, when every phase has started and at most two are still running. */
    lastPhasesRunning?: () => void;
  },
): Promise<PhasesOutcome> {
  const out: PhasesOutcome = { results: [], runErrors: [] };
  const before = options.before ?? phasesBefore;
  const ended = new Map<string, Promise<PhaseResult | undefined>>();
  let started = 0;
  let finished = 0;
  let lastCalled = false;
  const noteLastPhases = () => {
    if (lastCalled || started < phases.length || phases.length - finished > 2) return;
    lastCalled = true;
    options.lastPhasesRunning?.();
  };
  const start = async (phase: string): Promise<PhaseResult | undefined> => {
    await Promise.all(before(phase, phases).map((p) => ended.get(p)));
    await options.startGate?.(phase);
    if (options.signal?.aborted) return undefined;
    const i = ++started;
    const progressBefore = options.progress?.();
    say(`▶ phase ${i}/${phases.length}: ${phase}${progressBefore ? ` (at most ${options.phaseTimeoutS} s, PHASE_TIMEOUT_S)` : ''}\n`);
    const running = run(phase);
    noteLastPhases();
    const result = await running;
    finished++;
    noteLastPhases();
    const spent = progressBefore && options.progress ? progressText(progressBefore, options.progress(), phases.length - finished) : '';
    const waited = result.waitedS ? `, ${result.waitedS.toFixed(1)} s of it waiting on windows` : '';
    say(`■ phase ${phase} finished in ${(result.durationMs / 1000).toFixed(1)} s${waited}: ${phaseEnding(result)}${spent}\n`);
    return result;
  };
  // Phases in config order: a phase's prerequisites are listed before it.
  for (const phase of phases) ended.set(phase, start(phase));
  for (const phase of phases) {
    const result = await ended.get(phase);
    if (!result) continue;
    out.results.push(result);
    // A signal stopped the run: phases end early by design; the verdict says what was not judged.
    if (options.signal?.aborted) continue;
    if (!result.reportWritten) {
      out.runErrors.push(
        `phase ${phase} ended without a report (exit ${result.exitCode ?? result.signal}); its checks have no result. ` +
          `Last output: ${result.tail.slice(-4).join(' | ') || '(none)'}`,
      );
    } else if (result.timedOut) out.runErrors.push(`phase ${phase} was stopped after PHASE_TIMEOUT_S=${options.phaseTimeoutS} s`);
  }
  return out;
}

/**
 * Resolves once `requests()` has grown past its value now (a request was granted), after `maxMs`,
 * or when `signal` aborts, whichever comes first; polled every `everyMs`.
 */
export function firstRequestAfter(requests: () => number, maxMs: number, signal?: AbortSignal, everyMs = 50): Promise<void> {
  const before = requests();
  const started = Date.now();
  return new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      if (requests() > before || Date.now() - started >= maxMs || signal?.aborted) {
        clearInterval(timer);
        resolve();
      }
    }, everyMs);
  });
}

/**
 * Runs the profile's phases, each a Playwright run with the pacer's environment, writing into files
 * of its own (`phaseFiles`): its output folder, its blob report, its redaction log.
 */
export function runAllPhases(
  run: Pick<PreparedRun, 'config' | 'phases' | 'configFile' | 'reportsDir' | 'blobDir' | 'redactionsDir' | 'resultsDir' | 'mergeReports'> &
    Partial<Pick<PreparedRun, 'testFilters' | 'grep' | 'maxFailures'>>,
  childEnv: Record<string, string | undefined>,
  { redact, say, verbose }: Pick<RunConsole, 'redact' | 'say'> & Partial<RunConsole>,
  progress: () => { requests: number; refused: number; waits: number },
  signal?: AbortSignal,
  lastPhasesRunning?: () => void,
): ReturnType<typeof runPhases> {
  const { config } = run;
  const keysGiven = SECRET_VARIABLES.filter((k) => childEnv[k]);
  // The phases that start first (`metadata.startFirst`) send before the others start, or a short while passes.
  let firstRequest: Promise<void> | undefined;
  const startGate = (phase: string) =>
    yieldsAtStart(phase, run.phases, keysGiven)
      ? (firstRequest ??= firstRequestAfter(() => progress().requests, START_FIRST_MAX_MS, signal))
      : undefined;
  const extraArgs = [
    ...(run.testFilters ?? []),
    ...(run.grep ? [`--grep=${run.grep}`] : []),
    ...(run.maxFailures ? [`--max-failures=${run.maxFailures}`] : []),
  ];
  return runPhases(
    run.phases,
    (phase) => {
      const files = phaseFiles(run, phase);
      return runPhase(
        {
          phase,
          configFile: run.configFile,
          env: { ...childEnv, CERTIFY_REDACTIONS_FILE: files.redactionsFile },
          // A blob only for the merge: a run that merges no reports does without (`verdictOnly`).
          ...(run.mergeReports ? { blobFile: files.blobFile } : {}),
          jsonFile: files.jsonFile,
          outputDir: files.outputDir,
          ...(config.workers ? { workers: config.workers } : {}),
          ...(extraArgs.length ? { extraArgs } : {}),
          timeoutS: config.phaseTimeoutS,
          ...(verbose ? { verbose } : {}),
          write: say,
          ...(signal ? { signal } : {}),
        },
        redact,
      );
    },
    say,
    {
      phaseTimeoutS: config.phaseTimeoutS,
      ...(signal ? { signal } : {}),
      progress,
      // A phase that works alone on a key the run has starts without waiting (`metadata.aloneWith`).
      before: (phase, running) => phasesBefore(phase, running, keysGiven),
      startGate,
      ...(lastPhasesRunning ? { lastPhasesRunning } : {}),
    },
  );
}
