/** What `runCertify` is given, and how a step says the run ends before a verdict. */
import type { Phase } from '../env.ts';

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
  /** For tools and tests: run only the tests at these locations (`file:line` of `suites/`, Playwright's location filter). */
  onlyTests?: string[];
  /** For tools and tests, with `onlyTests`: only the tests with these exact titles (tests made in one loop share a location). */
  onlyTitles?: string[];
  /** For tools and tests: each phase stops after this many failed tests (Playwright's `--max-failures`). */
  maxFailures?: number;
  /** For tools and tests: the folder of the target locks (`target-lock.ts`; default the OS temp folder). */
  lockDir?: string;
  /** For tools and tests that read only the verdict (the fault matrix): no HTML report, `junit.xml` or `results.json`. */
  verdictOnly?: boolean;
}

/** Why a run ended before a verdict: the exit code (core/exit-codes.ts) and its reasons, already redacted. */
export interface RunStop {
  stop: true;
  exitCode: number;
  reasons: string[];
}

export const runStop = (exitCode: number, reasons: string[]): RunStop => ({ stop: true, exitCode, reasons });

export const isStop = (x: unknown): x is RunStop => typeof x === 'object' && x !== null && (x as RunStop).stop === true;
