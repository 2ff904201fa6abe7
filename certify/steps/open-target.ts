/**
 * Steps "resolve the target", "lock the target", "preflight": from the prepared run to a target that
 * answers like this API and that no other certification on this machine is using
 * (docs/architecture.md, "From certify to the verdict").
 */
import { EXIT } from '../../core/exit-codes.ts';
import { SECRET_VARIABLES } from '../../core/secrets.ts';
import type { MessageReport } from '../../suites/pacing/message-budget.ts';
import type { PacingSummary } from '../verdict.ts';
import { consoleFor, type RunConsole } from './console.ts';
import type { RunPacer } from './pacer.ts';
import { interruptedExit, preflight as preflightTarget, PREFLIGHT_EXIT } from './preflight.ts';
import type { PreparedRun } from './prepare.ts';
import { resolveTarget as startTargetOf, type ResolvedTarget } from './resolve-target.ts';
import { runStop, type RunOptions, type RunStop } from './run-options.ts';
import { isLocked, lockTarget, type OtherRunsReport, type TargetLock } from './target-lock.ts';

/** What closing the target leaves for the verdict: the pacer's report per key, the messages it counted, the other runs seen. */
export interface TargetClosed {
  pacing?: PacingSummary[];
  messages?: MessageReport;
  otherRuns?: OtherRunsReport;
}

/**
 * What the run holds open on its target: the target (a bundled server), the lock, the run-wide pacer.
 * `close` closes them once, in that order of dependence: the pacer (its report kept), the target,
 * then the lock, released with until when a 429 the run met still pends; each even if the one
 * before throws.
 */
export class TargetSession {
  private lock: TargetLock | undefined;
  private pacer: RunPacer | undefined;
  private closing: Promise<TargetClosed> | undefined;

  readonly target: ResolvedTarget;

  constructor(target: ResolvedTarget) {
    this.target = target;
  }

  holdLock(lock: TargetLock): void {
    this.lock = lock;
  }

  holdPacer(pacer: RunPacer): void {
    this.pacer = pacer;
  }

  close(): Promise<TargetClosed> {
    this.closing ??= this.closeOnce();
    return this.closing;
  }

  private async closeOnce(): Promise<TargetClosed> {
    const closed: TargetClosed = {};
    let pendingUntilMs = 0;
    try {
      if (this.pacer) {
        closed.pacing = await this.pacer.close();
        const messages = this.pacer.messages?.();
        if (messages) closed.messages = messages;
        pendingUntilMs = this.pacer.pendingUntilMs();
      }
    } finally {
      try {
        await this.target.close();
      } finally {
        if (this.lock) closed.otherRuns = this.lock.release(pendingUntilMs);
      }
    }
    return closed;
  }
}

/** The target resolved: the session to close, and the console that redacts its keys. */
export interface OpenedTarget {
  session: TargetSession;
  console: RunConsole;
}

/** Step "resolve the target": `BASE_URL`, or the bundled reference server; one that does not start is harness trouble (exit 5). */
export async function resolveTarget(run: PreparedRun, options: Pick<RunOptions, 'env' | 'write'>): Promise<OpenedTarget | RunStop> {
  let target: ResolvedTarget;
  try {
    target = await startTargetOf(run.config, options.env);
  } catch (error) {
    const reason = `could not start the bundled reference server: ${(error as Error).message}`;
    options.write(`certify: ${reason}\n`);
    return runStop(EXIT.harness, [reason]);
  }
  const console = consoleFor(target.env, options.write, run.settings.CONFORMANCE_VERBOSE);
  const ref = target.reference;
  console.say(
    `certify: target ${target.env.BASE_URL}${target.env.API_URL ? ` (messages: ${target.env.API_URL})` : ''}` +
      (ref
        ? ` — bundled reference server, minute window ${ref.settings.minuteWindowMs / 1000} s, ban ${ref.settings.banMs / 1000} s\n`
        : '\n'),
  );
  return { session: new TargetSession(target), console };
}

/**
 * Step "lock the target": before anything is sent (the preflight included), wait until no other
 * certification of this target on this machine holds its lock, at most OTHER_RUN_WAIT_S (past it:
 * exit 5, nothing sent; a signal: 130/143). The bundled reference server is this run's own: no lock.
 */
export async function lockTheTarget(
  run: PreparedRun,
  opened: OpenedTarget,
  options: Pick<RunOptions, 'signal' | 'lockDir'>,
): Promise<OpenedTarget | RunStop> {
  const { say } = opened.console;
  const { signal } = options;
  const target = opened.session.target;
  if (target.reference) return opened;
  const lock = await lockTarget(target.env.BASE_URL!, {
    maxWaitMs: run.settings.OTHER_RUN_WAIT_S * 1000,
    say: (line) => say(`certify: ${line}\n`),
    ...(signal ? { signal } : {}),
    ...(options.lockDir ? { tmp: options.lockDir } : {}),
  });
  if (isLocked(lock)) {
    opened.session.holdLock(lock);
    if (lock.report.waitedFor.length)
      say(
        `certify: waited ${lock.report.waitedS} s for another certification of this target on this machine to end (pid ${lock.report.waitedFor.map((r) => r.pid).join(', ')})\n`,
      );
    if (lock.report.notCoordinated) say(`certify: note: ${lock.report.notCoordinated}\n`);
    return opened;
  }
  const reason =
    lock.kind === 'aborted'
      ? `stopped while waiting for another certification of this target on this machine to end (${signal?.reason ?? 'SIGINT'}); nothing was sent to the target`
      : lock.quietUntil
        ? `a 429 the previous certification of this target on this machine met asks that nothing be sent before ${lock.quietUntil}, beyond OTHER_RUN_WAIT_S: nothing was sent to the target; run again after that time${lock.quietFile ? `, or, if that server has been restarted or replaced since (its 429 no longer holds), delete ${lock.quietFile}` : ''}`
        : `another certification of this target on this machine${lock.holder ? ` (pid ${lock.holder.pid}, started ${lock.holder.since})` : ''} still runs after ${Math.round(lock.waitedS)} s (OTHER_RUN_WAIT_S): nothing was sent to the target; run again when it has ended, or raise OTHER_RUN_WAIT_S`;
  say(`certify: ${reason}\n`);
  return runStop(lock.kind === 'aborted' ? interruptedExit(signal) : EXIT.harness, [reason]);
}

/**
 * Step "preflight": one request without a key; unreachable, TLS not verified, a redirect or not this
 * API stops the run (exit 3), a signal with 130/143. Then says what the run is about to do.
 */
export async function preflight(run: PreparedRun, opened: OpenedTarget, signal?: AbortSignal): Promise<OpenedTarget | RunStop> {
  const { say, detail, redact } = opened.console;
  const { env } = opened.session.target;
  const pre = await preflightTarget(
    { baseUrl: env.BASE_URL!, ...(env.API_URL ? { apiUrl: env.API_URL } : {}) },
    { timeoutMs: Math.min(run.settings.REQUEST_TIMEOUT_MS, 10_000), insecure: run.settings.INSECURE_TLS, ...(signal ? { signal } : {}) },
  );
  if (!pre.ok) {
    const reason = `${pre.interrupted ? '' : 'preflight failed: '}${pre.line}`;
    say(`certify: ${reason}\n`);
    return runStop(pre.interrupted ? interruptedExit(signal) : PREFLIGHT_EXIT, [redact(reason)]);
  }
  for (const line of pre.lines) detail(`certify: ${line}\n`);
  say(
    `certify: profile ${run.config.profile}; phases ${run.phases.join(', ')} (together, each opening when it may); keys given: ` +
      `${SECRET_VARIABLES.filter((n) => env[n]).join(', ') || 'none'}; reports in ${run.reportsDir}\n`,
  );
  for (const note of run.config.notes) say(`certify: note: ${note}\n`);
  return opened;
}
