/**
 * The reporter that runs certify's phases inside one Playwright run: each phase is a project, and
 * this reporter opens a phase (`<phase>.open`, core/phase-gate.ts) once the phases of its
 * `metadata.after` have ended, gives it its deadline (PHASE_TIMEOUT_S from its opening), and, as
 * each phase's last test ends, writes the phase's test records (`<phase>.json`) for the verdict.
 * Runs after `redact-reporter.ts`, so no key is in what it writes.
 */
import type { FullConfig, FullResult, Reporter, Suite, TestCase, TestError, TestResult } from '@playwright/test/reporter';
import fs from 'node:fs';
import {
  firstRequestFile,
  openFile,
  runFile,
  PHASE_PLAN_VARIABLE,
  PHASES_DIR_VARIABLE,
  resultFile,
  writeAtomically,
  type PhasePlan,
} from '../core/phase-gate.ts';
import { cleanErrorMessage } from '../core/playwright-report.ts';
import { ANNOTATION, type TestRecord } from '../core/results.ts';
import { testRecordOf } from './test-record.ts';

/** What `<phase>.json` holds: the phase's records, how it ended, and when. */
export interface PhaseReport {
  phase: string;
  openedAt?: number;
  endedAt: number;
  /** The phase reached its deadline before its last test ended. */
  timedOut: boolean;
  /** The run ended (a signal, the global timeout, a crash) before every test of the phase ended. */
  cutShort: boolean;
  tests: TestRecord[];
  /** Its tests by Playwright's outcome (a harness stop counts as failed here, as Playwright counts it). */
  counts: { passed: number; failed: number; flaky: number; skipped: number };
}

/** What `run.json` holds once the run has ended: its status and its errors outside any test (a file that does not load). */
export interface RunReport {
  status: FullResult['status'];
  runErrors: string[];
}

/** After the deadline, how long the phase's tests have to end (cut at the deadline) before it is declared ended. */
const GRACE_MS = 30_000;

interface PhaseState {
  tests: TestCase[];
  results: Map<TestCase, TestResult[]>;
  openedAt?: number;
  deadline?: number;
  ended: boolean;
  timedOut: boolean;
  timers: (NodeJS.Timeout | ReturnType<typeof setInterval>)[];
}

export default class PhaseReporter implements Reporter {
  private readonly dir = process.env[PHASES_DIR_VARIABLE];
  private readonly plan: PhasePlan = JSON.parse(
    process.env[PHASE_PLAN_VARIABLE] ?? '{"phases":[],"phaseTimeoutS":900,"startFirstMaxMs":3000}',
  );
  private readonly phases = new Map<string, PhaseState>();
  private readonly runErrors: string[] = [];
  private rootDir = process.cwd();

  onBegin(config: FullConfig, suite: Suite): void {
    this.rootDir = config.rootDir;
    for (const p of this.plan.phases) this.phases.set(p.name, { tests: [], results: new Map(), ended: false, timedOut: false, timers: [] });
    for (const projectSuite of suite.suites) {
      const state = this.phases.get(projectSuite.project()?.name ?? '');
      if (state) state.tests.push(...projectSuite.allTests());
    }
    for (const p of this.plan.phases) {
      if (!p.after.length && !p.yieldsAtStart) this.open(p.name);
      // A phase that yields at start opens once the phases that start first have sent (certify says so), or after a short while.
      if (!p.after.length && p.yieldsAtStart) {
        const since = Date.now();
        const timer = setInterval(() => {
          if (!fs.existsSync(firstRequestFile(this.dir ?? '')) && Date.now() - since < this.plan.startFirstMaxMs) return;
          clearInterval(timer);
          this.open(p.name);
        }, 50);
        this.state(p.name).timers.push(timer);
      }
    }
  }

  private state(phase: string): PhaseState {
    return this.phases.get(phase)!;
  }

  private open(phase: string): void {
    const s = this.state(phase);
    if (s.openedAt !== undefined || !this.dir) return;
    s.openedAt = Date.now();
    s.deadline = s.openedAt + this.plan.phaseTimeoutS * 1000;
    writeAtomically(openFile(this.dir, phase), JSON.stringify({ openedAt: s.openedAt, deadline: s.deadline }));
    s.timers.push(
      setTimeout(() => (s.timedOut = !s.ended), this.plan.phaseTimeoutS * 1000),
      setTimeout(() => this.end(phase, true), this.plan.phaseTimeoutS * 1000 + GRACE_MS),
    );
    if (s.tests.length === 0) this.end(phase);
  }

  /** The phase has ended: its report is written, and the phases that came after it open when they wait for nothing else. */
  private end(phase: string, cutShort = false): void {
    const s = this.state(phase);
    if (s.ended) return;
    s.ended = true;
    for (const t of s.timers) clearTimeout(t);
    const tests = s.tests.map((t) => this.recordOf(t, s));
    const report: PhaseReport = {
      phase,
      ...(s.openedAt !== undefined ? { openedAt: s.openedAt } : {}),
      endedAt: Date.now(),
      timedOut: s.timedOut,
      cutShort: cutShort || s.timedOut,
      tests,
      counts: {
        passed: s.tests.filter((t) => t.outcome() === 'expected').length,
        failed: s.tests.filter((t) => t.outcome() === 'unexpected').length,
        flaky: s.tests.filter((t) => t.outcome() === 'flaky').length,
        skipped: s.tests.filter((t) => t.outcome() === 'skipped').length,
      },
    };
    if (this.dir) writeAtomically(resultFile(this.dir, phase), JSON.stringify(report));
    for (const p of this.plan.phases) if (p.after.includes(phase) && p.after.every((a) => this.state(a).ended)) this.open(p.name);
  }

  /** A test of a phase that reached its deadline and did not pass: not certified, a limit of the run, never the server's failure. */
  private recordOf(test: TestCase, s: PhaseState): TestRecord {
    const record = testRecordOf(test, s.results.get(test) ?? [], this.rootDir);
    if (!s.timedOut || record.outcome === 'passed') return record;
    const reason = `the phase reached its time limit (PHASE_TIMEOUT_S=${this.plan.phaseTimeoutS} s) before this check ended`;
    return {
      ...record,
      outcome: 'skipped',
      errors: [],
      annotations: [...record.annotations, { type: ANNOTATION.notCertified, description: reason }],
    };
  }

  onTestEnd(test: TestCase, result: TestResult): void {
    const s = this.phases.get(test.parent.project()?.name ?? '');
    if (!s) return;
    s.results.set(test, [...(s.results.get(test) ?? []), result]);
    const done = (t: TestCase) => {
      const runs = s.results.get(t)?.length ?? 0;
      return runs > 0 && (t.ok() || runs > t.retries);
    };
    if (s.tests.every(done)) this.end(test.parent.project()!.name);
  }

  onError(error: TestError): void {
    const message = cleanErrorMessage(String(error.message ?? error.value ?? ''));
    if (message) this.runErrors.push(message);
  }

  async onEnd(result: FullResult): Promise<void> {
    // The run ended before some phases did (a signal, the global timeout, --max-failures): what ran is recorded.
    for (const p of this.plan.phases) this.end(p.name, true);
    const report: RunReport = { status: result.status, runErrors: this.runErrors };
    if (this.dir) writeAtomically(runFile(this.dir), JSON.stringify(report));
  }

  printsToStdio(): boolean {
    return false;
  }
}
