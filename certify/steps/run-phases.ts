/**
 * Step "run the phases": every phase (a Playwright project, `playwright.config.ts`) in one
 * Playwright run; certify's reporter opens each as soon as the phases it comes after
 * (`metadata.after`) have ended, so phases on different keys overlap; a failing phase never stops
 * the next. A phase that ends without a report, or over PHASE_TIMEOUT_S, is a run problem.
 */
import fs from 'node:fs';
import path from 'node:path';
import { phasesBefore, START_FIRST_MAX_MS, startsFirst, yieldsAtStart } from '../phase-list.ts';
import {
  firstRequestFile,
  PHASE_PLAN_VARIABLE,
  PHASES_DIR_VARIABLE,
  pollFor,
  readOpening,
  resultFile,
  writeAtomically,
  type PhasePlan,
} from '../../core/phase-gate.ts';
import { SECRET_VARIABLES } from '../../core/secrets.ts';
import { PHASE_REPORTER, runOnce, windowWaitsOf, type PhaseResult, type RunEnd } from '../phases.ts';
import type { PhaseReport } from '../phase-reporter.ts';
import type { RunConsole } from './console.ts';
import { phasesDirOf, type PreparedRun } from './prepare.ts';

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

/** `; all phases meanwhile: 62 requests (1 answered 429), 1 wait; 1 phase left`: the run-wide pacer's counts while a phase ran (phases overlap), and what remains. */
export function progressText(before: Progress, after: Progress, left: number): string {
  const n = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;
  return `; all phases meanwhile: ${n(after.requests - before.requests, 'request')} (${after.refused - before.refused} answered 429), ${n(after.waits - before.waits, 'wait')}; ${left ? `${n(left, 'phase')} left` : 'last phase'}`;
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
  },
): Promise<PhasesOutcome> {
  const out: PhasesOutcome = { results: [], runErrors: [] };
  const before = options.before ?? phasesBefore;
  const ended = new Map<string, Promise<PhaseResult | undefined>>();
  let started = 0;
  let finished = 0;
  const start = async (phase: string): Promise<PhaseResult | undefined> => {
    await Promise.all(before(phase, phases).map((p) => ended.get(p)));
    await options.startGate?.(phase);
    if (options.signal?.aborted) return undefined;
    const i = ++started;
    const progressBefore = options.progress?.();
    say(`▶ phase ${i}/${phases.length}: ${phase}${progressBefore ? ` (at most ${options.phaseTimeoutS} s, PHASE_TIMEOUT_S)` : ''}\n`);
    const result = await run(phase);
    finished++;
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

/** The longest chain of phases each after the one before it (`plan.phases[].after`): how many deadlines the run may last. */
export function longestChain(plan: PhasePlan): number {
  const depth = new Map<string, number>();
  for (const p of plan.phases) depth.set(p.name, 1 + Math.max(0, ...p.after.map((a) => depth.get(a) ?? 0)));
  return Math.max(1, ...depth.values());
}

/** What certify tells the run's reporter: each phase, what it comes after, whether it yields at start; the deadlines. */
export function phasePlanOf(phases: readonly string[], keysGiven: readonly string[], phaseTimeoutS: number): PhasePlan {
  return {
    phases: phases.map((name) => ({
      name,
      after: phasesBefore(name, phases, keysGiven),
      yieldsAtStart: yieldsAtStart(name, phases, keysGiven),
      startFirst: startsFirst(name),
    })),
    phaseTimeoutS,
    startFirstMaxMs: START_FIRST_MAX_MS,
  };
}

function readReport(dir: string, phase: string): PhaseReport | undefined {
  try {
    return JSON.parse(fs.readFileSync(resultFile(dir, phase), 'utf8')) as PhaseReport;
  } catch {
    return undefined;
  }
}

/** A phase's result from its report (undefined: the run ended without one). */
function phaseResultOf(phase: string, report: PhaseReport | undefined, end: RunEnd | undefined, reportsDir: string): PhaseResult {
  const waitedS = windowWaitsOf(reportsDir, phase);
  return {
    phase,
    exitCode: report ? (report.counts.failed ? 1 : 0) : (end?.exitCode ?? null),
    signal: report ? null : (end?.signal ?? null),
    durationMs: report ? report.endedAt - (report.openedAt ?? report.endedAt) : 0,
    timedOut: report ? report.timedOut : !!end?.timedOut,
    reportWritten: !!report,
    tail: report ? [] : (end?.tail ?? []),
    ...(waitedS === undefined ? {} : { waitedS }),
    ...(report ? { counts: report.counts } : {}),
  };
}

/**
 * Runs the profile's phases as one Playwright run with the pacer's environment: certify's reporter
 * opens each phase in turn (`phase-reporter.ts`) and writes its records into the run's phase folder
 * (`phasesDir`); this step says as each opens and ends. With `run.mergeReports`, the same run writes
 * the HTML report, `junit.xml` and `results.json`.
 */
export async function runAllPhases(
  run: Pick<PreparedRun, 'config' | 'phases' | 'configFile' | 'reportsDir' | 'workDir' | 'redactionsDir' | 'mergeReports'> &
    Partial<Pick<PreparedRun, 'testFilters' | 'grep' | 'maxFailures'>>,
  childEnv: Record<string, string | undefined>,
  { redact, say, verbose }: Pick<RunConsole, 'redact' | 'say'> & Partial<RunConsole>,
  progress: () => { requests: number; refused: number; waits: number },
  signal?: AbortSignal,
): Promise<PhasesOutcome> {
  const { config } = run;
  const keysGiven = SECRET_VARIABLES.filter((k) => childEnv[k]);
  const phasesDir = phasesDirOf(run);
  fs.mkdirSync(phasesDir, { recursive: true });
  const plan = phasePlanOf(run.phases, keysGiven, config.phaseTimeoutS);
  // The run lasts at most the longest chain of phases' deadlines, and a minute more.
  const timeoutS = longestChain(plan) * config.phaseTimeoutS + 60;
  const reports: Record<string, string> = run.mergeReports
    ? {
        PLAYWRIGHT_HTML_OUTPUT_DIR: path.join(run.reportsDir, 'html'),
        PLAYWRIGHT_HTML_OPEN: 'never',
        PLAYWRIGHT_JUNIT_OUTPUT_FILE: path.join(run.reportsDir, 'junit.xml'),
        PLAYWRIGHT_JSON_OUTPUT_FILE: path.join(run.reportsDir, 'results.json'),
      }
    : {};
  let end: RunEnd | undefined;
  const ended = runOnce(
    {
      phases: run.phases,
      configFile: run.configFile,
      env: childEnv,
      own: {
        ...reports,
        [PHASES_DIR_VARIABLE]: phasesDir,
        [PHASE_PLAN_VARIABLE]: JSON.stringify(plan),
        CERTIFY_REDACTIONS_FILE: path.join(run.redactionsDir, 'run.jsonl'),
      },
      reporters: [PHASE_REPORTER, ...(run.mergeReports ? ['html', 'junit', 'json'] : [])],
      timeoutS,
      write: say,
      ...(verbose ? { verbose } : {}),
      ...(signal ? { signal } : {}),
      extraArgs: [
        // One output folder for the run (Playwright empties it once, as the run starts), beside the HTML report.
        `--output=${path.join(run.reportsDir, 'test-results')}`,
        ...(run.testFilters ?? []),
        ...(run.grep ? [`--grep=${run.grep}`] : []),
        ...(run.maxFailures ? [`--max-failures=${run.maxFailures}`] : []),
      ],
    },
    redact,
  ).then((e) => (end = e));
  const limit = Date.now() + (timeoutS + 60) * 1000;
  // The phases that start first (`metadata.startFirst`) send before those that yield start, or a short while passes.
  if (plan.phases.some((p) => p.yieldsAtStart))
    void firstRequestAfter(() => progress().requests, START_FIRST_MAX_MS, signal).then(() => {
      if (!end) writeAtomically(firstRequestFile(phasesDir), String(Date.now()));
    });
  // A file written before the run's process closed is read before its end is taken as "no file".
  const outcome = await runPhases(
    run.phases,
    async (phase) => {
      const report = await pollFor(() => readReport(phasesDir, phase) ?? (end ? null : undefined), limit);
      return phaseResultOf(phase, report ?? undefined, end, run.reportsDir);
    },
    say,
    {
      phaseTimeoutS: config.phaseTimeoutS,
      ...(signal ? { signal } : {}),
      progress,
      // The reporter opens a phase once these have ended; said after their end lines.
      before: (phase) => plan.phases.find((p) => p.name === phase)?.after ?? [],
      startGate: async (phase) => {
        await pollFor(() => readOpening(phasesDir, phase) ?? (end ? null : undefined), limit);
      },
    },
  );
  const last = await ended;
  if (last.timedOut) outcome.runErrors.push(`the run was stopped ${timeoutS + 30} s after it started (its phases' PHASE_TIMEOUT_S)`);
  return outcome;
}
