/**
 * `npm run certify` as a short pipeline of named steps (each in `certify/steps/`, each with its
 * own test): validate the environment, resolve the target, preflight it, start the run-wide
 * pacer, list what the profile leaves out, run the phases, merge, judge (with the gate), scan for
 * secrets, make junit.xml state the gate, write the certificate, print.
 * Returns the gate's exit code (core/exit-codes.ts): 0 pass, 1 fail, 4 not certified (strict),
 * 5 harness trouble; 2 usage error, 3 target unreachable, 130/143 stopped by SIGINT/SIGTERM during
 * the preflight.
 *
 * A replay (`CONFORMANCE_REPLAY`) writes into `<REPORTS_DIR>/replay/` and judges only the
 * requirements its one case evidences: the last run's reports and certificate stay as they are.
 */
import path from 'node:path';
import { inputRedactor, PHASES, type Phase } from './env.ts';
import { LEDGER_FILE, ROOT_CONFIG } from '../core/paths.ts';
import { redactorFor, secretsFromEnv } from '../core/secrets.ts';
import { gateJunitFile, judge, verdictInputFor } from './steps/judge.ts';
import { writeEvidenceHar } from './evidence-har.ts';
import { exerciseTarget, type RunVoice } from './steps/exercise.ts';
import { mergeLoadReports, mergeRun } from './steps/merge.ts';
import { interruptedExit } from './steps/preflight.ts';
import { abandonRun, prepareRun, type PreparedRun } from './steps/prepare.ts';
import { EXIT } from '../core/exit-codes.ts';
import { printSummary } from './steps/print.ts';
import { resolveTarget, type ResolvedTarget } from './steps/resolve-target.ts';
import { scanSecrets } from './steps/scan-secrets.ts';
import { REPLAY_DIR, REPORT_ENTRIES, type PreparedReportsDir } from './steps/reports-dir.ts';
import { certificateStep, type Certificate, type WrittenCertificate } from './certificate/index.ts';
import type { VerdictInput } from './verdict.ts';
import { journalProblem, type JournalReport } from './steps/repair.ts';

export { mergeLoadReports, REPORT_ENTRIES };

export { LEDGER_FILE, ROOT_CONFIG };

export { REPLAY_DIR };

export { interruptedExit };

export interface RunOptions {
  env: Record<string, string | undefined>;
  write: (text: string) => void;
  /** Playwright config of the phases (default: the root `playwright.config.ts`). */
  configFile?: string;
  ledgerFile?: string;
  signal?: AbortSignal;
  /** For tools and tests: run only these of the profile's phases (the others are neither run nor listed). */
  onlyPhases?: Phase[];
  /** Receives what the certificate step wrote (undefined: it could not be written), so a caller such as the CLI gates on it without writing it again. */
  onCertificate?: (written: WrittenCertificate | undefined) => void;
}

type Out = (text: string) => void;

/** A usage error quotes input: every key of the run is redacted from it, whatever field it was given in. */
function usage(write: Out, errors: string[], env: Record<string, string | undefined> = {}): number {
  const redact = inputRedactor(env);
  write('certify: usage error:\n');
  for (const e of errors) write(redact(`  - ${e}\n`));
  write('Run `npx inventory-conformance certify --help` for the variables (`npm run certify -- --help` in a clone).\n');
  return EXIT.usage;
}


/** Runs certify's steps in order and returns the gate's exit code (or the exit code of the step that stopped the run). */
export async function runCertify(options: RunOptions): Promise<number> {
  const started = Date.now();
  const { env, write } = options;
  // Step: prepare (the variables, the reports folder, the gate's inputs, the ledger).
  const prepared = prepareRun({ env, onlyPhases: options.onlyPhases, configFile: options.configFile, ledgerFile: options.ledgerFile });
  if (!prepared.ok) return usage(write, prepared.errors, env);
  const run = prepared.run;

  // Step: resolve the target.
  const target = await startTarget(run, env, write);
  if (!target) return EXIT.harness;
  const voice = voiceOf(target, write);

  // Steps: preflight, pacer, left-out list, phases.
  const exercised = await exerciseTarget(run, target, voice, options.signal);
  if (!exercised.ok) return exercised.exit;

  // Step: merge the phases' blobs into the HTML report, junit.xml and results.json.
  const merged = await mergeRun(run, env, voice.redact, voice.say);

  // Step: judge (a replay: only the requirements its case evidences).
  const verdictInput = verdictInputFor({
    allPhases: PHASES, phases: run.phases, leftOutPhases: run.leftOutPhases, results: exercised.results, notRun: exercised.notRun,
    tests: merged.tests, ledger: run.ledger, gate: run.gate, replaying: run.replaying, profile: run.config.profile,
    target: target.description, generatedAt: merged.generatedAt,
    runErrors: [...run.runErrors, ...exercised.runErrors, ...merged.runErrors], redact: voice.redact,
    ...(options.signal?.aborted ? { interrupted: { signal: String(options.signal.reason ?? 'SIGINT'), exitCode: interruptedExit(options.signal) } } : {}),
  });
  withJournal(verdictInput, exercised.journal);
  return finishRun({
    verdictInput, leaks: merged.redactions.leaks, reportsDir: run.reportsDir, folder: run.folder,
    extra: { ...(exercised.pacing ? { pacing: exercised.pacing } : {}), ...(exercised.journal ? { journal: exercised.journal } : {}) },
    redact: voice.redact, secrets: voice.secrets, say: voice.say, env, replaying: run.replaying,
    ...(run.gate.previous ? { previous: run.gate.previous } : {}),
    ...(options.onCertificate ? { onCertificate: options.onCertificate } : {}),
    otherReports: ['conformance.json', 'html/index.html', 'junit.xml', 'results.json', 'evidence.har', ...(merged.loadWritten ? ['load.json'] : [])],
    started,
  });
}

/** The journal's findings join the verdict's input: pets left changed (a run-level problem), and pets its end-of-run repair put back. */
function withJournal(input: VerdictInput, journal: JournalReport | undefined): void {
  const problem = journalProblem(journal);
  if (problem) input.problems = [...(input.problems ?? []), problem];
  if (journal?.end.restored.length) input.restoredAfter = journal.end.restored.map((p) => p.petId);
}

/** Resolves the target (starting the bundled reference server if none is given); one that does not start is harness trouble and gives the run up. */
async function startTarget(run: PreparedRun, env: Record<string, string | undefined>, write: Out): Promise<ResolvedTarget | undefined> {
  try {
    return await resolveTarget(run.config, env);
  } catch (error) {
    write(`certify: could not start the bundled reference server: ${(error as Error).message}\n`);
    abandonRun(run);
    return undefined;
  }
}

/** The run's voice: the target's keys, the redaction of all of them, and a `say` that redacts; it first names the target. */
function voiceOf(target: ResolvedTarget, write: Out): RunVoice {
  const secrets = secretsFromEnv(target.env);
  const redact = redactorFor(secrets);
  const say = (text: string) => write(redact(text));
  const ref = target.reference;
  say(
    `certify: target ${target.env.BASE_URL}${target.env.API_URL ? ` (messages: ${target.env.API_URL})` : ''}` +
      (ref ? ` — bundled reference server, minute window ${ref.settings.minuteWindowMs / 1000} s, ban ${ref.settings.banMs / 1000} s\n` : '\n'),
  );
  return { secrets, redact, say };
}

/** What the last steps need: the verdict's input, the run's redaction, and where the reports go. */
interface FinishInput {
  verdictInput: VerdictInput;
  /** Keys the in-memory scrubbing found (already described without the key). */
  leaks: string[];
  extra: Record<string, unknown>;
  reportsDir: string;
  /** The reports folder the run owns: only its files are rewritten or removed. */
  folder: Extract<PreparedReportsDir, { ok: true }>;
  redact: (text: string) => string;
  secrets: ReturnType<typeof secretsFromEnv>;
  say: (text: string) => void;
  env: Record<string, string | undefined>;
  replaying: boolean;
  previous?: Certificate;
  onCertificate?: RunOptions['onCertificate'];
  otherReports: string[];
  started: number;
}

/** Steps judge, scan, junit, certificate and print; returns the gate's exit code. */
function finishRun(f: FinishInput): number {
  const { verdictInput, reportsDir, redact, say } = f;
  let report = judge({ ...verdictInput, secretFindings: f.leaks }, reportsDir, redact, f.extra);
  // Step: the exchanges behind each requirement as HAR (before the scan, which reads it too).
  writeEvidenceHar(reportsDir, report, verdictInput.tests, redact);

  // Step: scan every file in the reports folder for the keys; scrub or remove what holds one, if the run wrote it.
  const scan = scanSecrets([reportsDir], f.secrets, process.cwd(), f.folder.owns);
  say(`certify: secret scan of ${scan.filesScanned} files: ${scan.findings.length ? `${scan.findings.length} finding(s)` : 'no key found'}\n`);
  if (scan.findings.length) {
    for (const x of scan.findings) say(`  ✗ ${x}\n`);
    report = judge({ ...verdictInput, secretFindings: [...f.leaks, ...scan.findings] }, reportsDir, redact, f.extra);
  }

  // Step: junit.xml states the gate (known failures skipped with their reason).
  gateJunitFile(report, reportsDir, redact);

  // Step: the certificate (never for a replay: it judges one case, not the spec).
  if (!f.replaying) {
    const certificate = certificateStep({ report, reportsDir, env: f.env, write: say, redact, ...(f.previous ? { previous: f.previous } : {}) });
    f.onCertificate?.(certificate);
  }
  f.folder.finish();

  // Step: print.
  printSummary(report, say, { reportsFile: path.join(reportsDir, 'conformance.md'), otherReports: f.otherReports, seconds: (Date.now() - f.started) / 1000 });
  return report.gate.exitCode;
}

export type { Phase };
