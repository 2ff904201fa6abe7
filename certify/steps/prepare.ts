/**
 * Step "prepare": before anything is sent, read the run's variables, choose its phases, claim its
 * reports folder (refused before any file is touched otherwise; a replay writes into its own folder
 * inside it, so the last run's reports stay as they are), read the gate's inputs and the
 * requirements ledger. A usage problem is returned, never thrown; nothing is written for it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadLedger } from '../../core/ledger.ts';
import { LEDGER_FILE, REPO_ROOT, ROOT_CONFIG } from '../../core/paths.ts';
import { readSettings, type SettingValues } from '../../settings/index.ts';
import { EXIT } from '../../core/exit-codes.ts';
import { inputRedactor, parseEnv, PHASES, type CertifyConfig, type Phase } from '../env.ts';
import type { LedgerRequirement } from '../verdict.ts';
import { readGateInputs, type GateInputs } from './judge.ts';
import { runStop, type RunStop } from './run-options.ts';
import { prepareReportsDir, reportsDirProblem, REPLAY_DIR, type PreparedReportsDir } from './reports-dir.ts';

type Env = Record<string, string | undefined>;

/** What `prepareRun` reads besides the environment (the options of `runCertify`). */
export interface PrepareOptions {
  env: Env;
  /** Run only these of the profile's phases (the others are neither run nor listed). */
  onlyPhases?: Phase[];
  /** Run only the tests at these locations (`file:line` of `suites/`); default: every test of the phases. */
  onlyTests?: string[];
  /** Of the tests at `onlyTests`, only those with these exact titles (`RunOptions.onlyTitles`). */
  onlyTitles?: string[];
  /** Each phase stops after this many failed tests (`RunOptions.maxFailures`); default: never. */
  maxFailures?: number;
  /** Playwright config of the phases (default: the root `playwright.config.ts`). */
  configFile?: string;
  /** The requirements ledger (default: `suites/requirements.yaml`). */
  ledgerFile?: string;
  /** No HTML report, `junit.xml` or `results.json` (`RunOptions.verdictOnly`). */
  verdictOnly?: boolean;
}

/** A run ready to start: its configuration, its phases, its folders and what the gate and the verdict read. */
export interface PreparedRun {
  config: CertifyConfig;
  settings: SettingValues;
  /** The profile's phases this run runs, in order. */
  phases: Phase[];
  /** Playwright location filters (`suites/<file>:<line>`) every phase is limited to; empty: no limit. */
  testFilters: string[];
  /** Playwright's `--grep` for every phase (`titleFilter`); undefined: every test at `testFilters`. */
  grep?: string;
  /** Playwright's `--max-failures` for every phase; undefined: every test runs. */
  maxFailures?: number;
  /** Phases the profile leaves out: listed, never run. */
  leftOutPhases: Phase[];
  /** A replay (`CONFORMANCE_REPLAY`): judges only the requirements its one case evidences. */
  replaying: boolean;
  /** The reports folder the run owns: only its files are rewritten or removed. */
  folder: Extract<PreparedReportsDir, { ok: true }>;
  reportsDir: string;
  /** certify's scratch folder inside the reports folder (removed before the verdict). */
  workDir: string;
  /** The redacting reporter's log (`CERTIFY_REDACTIONS_FILE`). */
  redactionsDir: string;
  /** The run writes the HTML report, `junit.xml` and `results.json` (not with `verdictOnly`). */
  mergeReports: boolean;
  configFile: string;
  gate: GateInputs;
  ledger: LedgerRequirement[];
  /** Problems of the run so far (an unreadable ledger): the verdict reports them. */
  runErrors: string[];
}

export type Prepared = { ok: true; run: PreparedRun } | { ok: false; errors: string[] };

/** Reads the variables, claims the reports folder, reads the gate's inputs and the ledger; creates the scratch folder. */
export function prepareRun(options: PrepareOptions): Prepared {
  const { env } = options;
  const parsed = parseEnv(env);
  if (!parsed.ok) return { ok: false, errors: parsed.errors };
  const config = parsed.config;
  const settings = readSettings(env).values;
  const wanted = (p: Phase) => !options.onlyPhases || options.onlyPhases.includes(p);
  const phases = config.phases.filter(wanted);
  const leftOutPhases = PHASES.filter((p) => !config.phases.includes(p) && wanted(p));

  const replaying = !!env.CONFORMANCE_REPLAY?.trim();
  const parentProblem = replaying ? reportsDirProblem(config.reportsDir) : undefined;
  if (parentProblem) return { ok: false, errors: [parentProblem] };
  const folder = prepareReportsDir(replaying ? path.join(config.reportsDir, REPLAY_DIR) : config.reportsDir);
  if (!folder.ok) return { ok: false, errors: [folder.problem] };
  const reportsDir = folder.dir;
  const gateRead = readGateInputs(env);
  if (gateRead.errors.length) return { ok: false, errors: gateRead.errors };
  const configFile = options.configFile ?? ROOT_CONFIG;
  const ledgerFile = options.ledgerFile ?? LEDGER_FILE;

  const workDir = path.join(reportsDir, '.certify');
  fs.mkdirSync(workDir, { recursive: true });
  const { ledger, runErrors } = readLedger(ledgerFile);
  return {
    ok: true,
    run: {
      config,
      settings,
      phases,
      leftOutPhases,
      testFilters: (options.onlyTests ?? []).map((loc) => path.join('suites', loc)),
      ...(options.onlyTitles?.length ? { grep: titleFilter(options.onlyTitles) } : {}),
      ...(options.maxFailures ? { maxFailures: options.maxFailures } : {}),
      replaying,
      folder,
      reportsDir,
      workDir,
      redactionsDir: path.join(workDir, 'redactions'),
      mergeReports: !options.verdictOnly,
      configFile,
      gate: gateRead.inputs,
      ledger,
      runErrors,
    },
  };
}

/**
 * A Playwright `--grep` that selects the tests with exactly these titles. Playwright matches it
 * against the test's title path joined by spaces, followed by its tags (` @tag`), so a title is
 * matched whole: after the start or a space, and before the tags and the end.
 */
export function titleFilter(titles: readonly string[]): string {
  const escaped = titles.map((t) => t.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&'));
  return `/(?:^| )(?:${escaped.join('|')})(?: @\\S+)*$/`;
}

/** The folder of the run's phase files (core/phase-gate.ts), in its scratch folder. */
export function phasesDirOf(run: Pick<PreparedRun, 'workDir'>): string {
  return path.join(run.workDir, 'phases');
}

/** The requirements ledger; an unreadable one is a problem of the run (the verdict reports it), not a crash. */
function readLedger(ledgerFile: string): { ledger: LedgerRequirement[]; runErrors: string[] } {
  try {
    return { ledger: loadLedger(ledgerFile), runErrors: [] };
  } catch (error) {
    return { ledger: [], runErrors: [`requirements ledger ${path.relative(REPO_ROOT, ledgerFile)}: ${(error as Error).message}`] };
  }
}

/** Gives up a prepared run before anything is judged: its scratch folder goes, its reports folder records what it wrote. */
export function abandonRun(run: PreparedRun): void {
  fs.rmSync(run.workDir, { recursive: true, force: true });
  run.folder.finish();
}

/** Step "prepare" for `runCertify`: the prepared run, or a usage error (exit 2) printed with every key redacted from it. */
export function prepareOrStop(options: PrepareOptions & { write: (text: string) => void }): PreparedRun | RunStop {
  const prepared = prepareRun(options);
  if (prepared.ok) return prepared.run;
  const redact = inputRedactor(options.env);
  const reasons = prepared.errors.map((e) => redact(e));
  options.write('certify: usage error:\n');
  for (const r of reasons) options.write(`  - ${r}\n`);
  options.write('Run `npx inventory-conformance certify --help` for the variables (`npm run certify -- --help` in a clone).\n');
  return runStop(EXIT.usage, reasons);
}
