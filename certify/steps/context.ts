/**
 * The one context a certify run's steps read and extend, and the small loop that runs the steps in
 * order. Each step is a named function of the context; a step that ends the run before a verdict
 * (a usage error, the preflight, a target that does not start) sets `stop`. Whatever happens, the
 * loop closes the run-wide pacer and the target before it returns (or throws).
 */
import { newJournalName } from '../../core/journal.ts';
import type { RunProblem } from '../../core/results.ts';
import type { secretsFromEnv } from '../../core/secrets.ts';
import { emptyRepair } from '../../suites/journal/repair.ts';
import type { WrittenCertificate } from '../certificate/index.ts';
import type { Phase } from '../env.ts';
import type { PhaseResult } from '../phases.ts';
import type { ConformanceReport, PacingSummary, TestRecord } from '../verdict.ts';
import type { MergedRun } from './merge.ts';
import type { RunPacer } from './pacer.ts';
import type { MessageReport } from '../../suites/pacing/message-budget.ts';
import { abandonRun, type PreparedRun } from './prepare.ts';
import type { JournalReport } from './repair.ts';
import type { ResolvedTarget } from './resolve-target.ts';
import type { HeldTurn, OtherRunsReport } from './turns.ts';

type Env = Record<string, string | undefined>;

/** What `runCertify` is given. */
export interface RunOptions {
  env: Env;
  write: (text: string) => void;
  /** Playwright config of the phases (default: the root `playwright.config.ts`). */
  configFile?: string;
  ledgerFile?: string;
  signal?: AbortSignal;
  /** For tools and tests: run only these of the profile's phases (the others are neither run nor listed). */
  onlyPhases?: Phase[];
  /**
   * For tools and tests: run only the tests at these locations (`file:line` of `suites/`, as
   * Playwright's location filter); the phases' other tests are neither run nor listed.
   */
  onlyTests?: string[];
  /**
   * For tools and tests, with `onlyTests`: of the tests at those locations, run only those with
   * these exact titles (tests made in one loop share a location).
   */
  onlyTitles?: string[];
  /**
   * For tools and tests: each phase stops after this many failed tests (Playwright's
   * `--max-failures`); the tests it did not reach have no result. The fault matrix uses 1 where
   * every test it runs evidences the one requirement a fault must fail.
   */
  maxFailures?: number;
  /**
   * For tools and tests: the folder the runs of one machine take turns in (default the OS temp
   * folder). A test whose own server on a free port left a 429 pending past the run's end keeps it
   * here, so that a later server on the same port is not taken for the same target.
   */
  turnsDir?: string;
  /**
   * For tools and tests that read only the verdict (the fault matrix): the run writes its verdict,
   * reports and certificate, but no HTML report, `junit.xml` or `results.json`, so the phases
   * write no blob to merge. The verdict is the same: it reads each phase's own JSON report either way.
   */
  verdictOnly?: boolean;
}

/**
 * How the run speaks: every line goes through `say`, which redacts the run's keys. `detail` says
 * what only a verbose console shows (CONFORMANCE_VERBOSE, `--verbose`): every check, the load
 * checks' progress, each key's pacing, what the journal settled.
 */
export interface RunVoice {
  secrets: ReturnType<typeof secretsFromEnv>;
  redact: (text: string) => string;
  say: (text: string) => void;
  verbose: boolean;
  detail: (text: string) => void;
}

/** Why a run ended before a verdict: the exit code (core/exit-codes.ts) and its reasons, already redacted. */
export interface RunStop {
  exitCode: number;
  reasons: string[];
}

/** The run so far: each step reads what earlier steps set and adds its own part. */
export interface RunContext {
  readonly options: RunOptions;
  /** When the run started (ms since the epoch), for the summary's timing. */
  readonly started: number;
  /** The file name of this run's journal of changes (core/journal.ts), inside the reports folder. */
  readonly journalFile: string;
  /** prepare: the variables, the reports folder, the gate's inputs, the ledger. */
  run?: PreparedRun;
  /** resolveTarget: the target, and the run's voice (its keys' redaction). */
  target?: ResolvedTarget;
  targetClosed?: boolean;
  voice?: RunVoice;
  /** takeTurn: the target's turn on this machine, until the target is closed (`turns.ts`). */
  turn?: HeldTurn;
  /** What the run saw of other certifications of its target on this machine. */
  otherRuns?: OtherRunsReport;
  /** startPacer: the run-wide pacer and the environment every child gets. */
  pacer?: RunPacer;
  childEnv?: Env;
  /** repairFirst, settleJournal: what the journal's repairs did. */
  journal: JournalReport;
  /** listLeftOut: the tests of the phases the profile leaves out. */
  notRun: TestRecord[];
  /** runPhases: how each phase ended. */
  results: PhaseResult[];
  /** Problems of the run met by any step (not yet redacted). */
  runErrors: string[];
  /** nameOpenAfterStop: what a stopped run's own journal leaves open (a run problem). */
  openAfterStop?: RunProblem;
  /** closeTarget: the pacer's report per key. */
  pacing?: PacingSummary[];
  /** The messages the run queued, by check, and those MAX_MESSAGES kept back (the pacer's report). */
  messages?: MessageReport;
  /** merge: the tests read back, the merge's problems, the redaction log. */
  merged?: MergedRun;
  /** scanSecrets: every key found in memory or in a file, described without the key (an input of the verdict). */
  secretFindings?: string[];
  /** scanSecrets: when the scan began (ms since the epoch); files written since are scanned again. */
  scannedAt?: number;
  /** rescanWritten: keys found in the files written after the verdict (the run is void). */
  lateFindings?: string[];
  /** judge: the verdict, judged once. */
  report?: ConformanceReport;
  /** certificate: what was written (undefined: a replay, or it could not be written). */
  certificate?: WrittenCertificate;
  /** Set by a step that ends the run before a verdict. */
  stop?: RunStop;
}

/** A named step of the run. `whenStopped: 'skip'`: once a signal stopped the run the step is not run (the others run, so the reports of what ran are written). */
export interface Step {
  name: string;
  run: (ctx: RunContext) => void | Promise<void>;
  whenStopped?: 'run' | 'skip';
}

/** A fresh context for `options`. */
export function newContext(options: RunOptions, started = Date.now()): RunContext {
  const journalFile = newJournalName();
  return {
    options,
    started,
    journalFile,
    journal: { file: journalFile, repair: emptyRepair(), end: emptyRepair(), requests: 0 },
    notRun: [],
    results: [],
    runErrors: [],
  };
}

/** The part of the context an earlier step sets; a step run out of order is a harness bug, thrown. */
export function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`certify: a step needs ${what}, which no earlier step set`);
  return value;
}

/**
 * Closes the run-wide pacer (keeping its report) and the target, each once, then gives back the
 * target's turn (nothing more is sent to it), passing on when a 429 the run met is still pending;
 * the target is closed and the turn given back even if the pacer's close throws.
 */
export async function closeTarget(ctx: RunContext): Promise<void> {
  const pacer = ctx.pacer;
  ctx.pacer = undefined;
  let pendingUntilMs = 0;
  try {
    if (pacer) {
      ctx.pacing = await pacer.close();
      ctx.messages = pacer.messages?.();
      pendingUntilMs = pacer.pendingUntilMs();
    }
  } finally {
    try {
      if (ctx.target && !ctx.targetClosed) {
        ctx.targetClosed = true;
        await ctx.target.close();
      }
    } finally {
      const turn = ctx.turn;
      ctx.turn = undefined;
      if (turn) ctx.otherRuns = turn.release(pendingUntilMs);
    }
  }
}

/**
 * Runs `steps` in order over `ctx`. A step that sets `stop` ends the run: the prepared run is given
 * up (its scratch folder removed, its reports folder's manifest kept). Once `signal` aborts, steps
 * marked `skip` are passed over. The pacer and the target are closed whatever happens.
 */
export async function runSteps(steps: readonly Step[], ctx: RunContext): Promise<RunContext> {
  try {
    for (const step of steps) {
      if (ctx.options.signal?.aborted && step.whenStopped === 'skip') continue;
      await step.run(ctx);
      if (ctx.stop) {
        if (ctx.run) abandonRun(ctx.run);
        break;
      }
    }
  } finally {
    await closeTarget(ctx);
  }
  return ctx;
}
