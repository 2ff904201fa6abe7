/**
 * Step "run the phases": each phase (a Playwright project, `playwright.config.ts`) runs as its own
 * child process, in order; a failing phase never stops the next. A phase that ends without a
 * report, or over PHASE_TIMEOUT_S, is a run problem.
 */
import type { PhaseResult } from '../phases.ts';

export interface PhasesOutcome {
  results: PhaseResult[];
  runErrors: string[];
}

/** How a finished phase ended, in words. */
export function phaseEnding(r: PhaseResult): string {
  if (r.timedOut) return 'stopped after PHASE_TIMEOUT_S';
  if (r.signal) return `killed by ${r.signal}`;
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

/** Runs `phases` one after another with `run`; stops starting new ones once `signal` aborts. */
export async function runPhases(
  phases: readonly string[],
  run: (phase: string) => Promise<PhaseResult>,
  say: (text: string) => void,
  options: { phaseTimeoutS: number; signal?: AbortSignal; progress?: () => Progress },
): Promise<PhasesOutcome> {
  const out: PhasesOutcome = { results: [], runErrors: [] };
  let i = 0;
  for (const phase of phases) {
    if (options.signal?.aborted) break;
    i++;
    const before = options.progress?.();
    say(`▶ phase ${i}/${phases.length}: ${phase}${before ? ` (at most ${options.phaseTimeoutS} s, PHASE_TIMEOUT_S)` : ''}\n`);
    const result = await run(phase);
    out.results.push(result);
    const spent = before && options.progress ? progressText(before, options.progress(), phases.length - i) : '';
    say(`■ phase ${phase} finished in ${(result.durationMs / 1000).toFixed(1)} s: ${phaseEnding(result)}${spent}\n`);
    if (!result.blobWritten) {
      out.runErrors.push(
        `phase ${phase} ended without a report (exit ${result.exitCode ?? result.signal}); its checks have no result. ` +
          `Last output: ${result.tail.slice(-4).join(' | ') || '(none)'}`,
      );
    } else if (result.timedOut) out.runErrors.push(`phase ${phase} was stopped after PHASE_TIMEOUT_S=${options.phaseTimeoutS} s`);
  }
  if (options.signal?.aborted) out.runErrors.push('run interrupted');
  return out;
}
