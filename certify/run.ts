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
import fs from 'node:fs';
import path from 'node:path';
import { loadLedger } from '../core/ledger.ts';
import { readSettings } from '../settings/index.ts';
import { inputRedactor, parseEnv, PHASES, type Phase } from './env.ts';
import { listPhases, mergeReports, runPhase } from './phases.ts';
import { LEDGER_FILE, REPO_ROOT, ROOT_CONFIG } from '../core/paths.ts';
import { MIN_SAFE_SECRET_LENGTH, redactorFor, secretsFromEnv, SECRET_VARIABLES } from '../core/secrets.ts';
import { gateJunitFile, judge, phaseSummaries, readGateInputs } from './steps/judge.ts';
import { writeEvidenceHar } from './evidence-har.ts';
import { requirementIds } from '../core/results.ts';
import { listLeftOut } from './steps/left-out.ts';
import { mergeLoadReports, mergeResults, readRedactions } from './steps/merge.ts';
import { startRunPacer, type RunPacer } from './steps/pacer.ts';
import { preflight, PREFLIGHT_EXIT } from './steps/preflight.ts';
import { EXIT } from '../core/exit-codes.ts';
import { printSummary } from './steps/print.ts';
import { resolveTarget, type ResolvedTarget } from './steps/resolve-target.ts';
import { runPhases } from './steps/run-phases.ts';
import { scanSecrets } from './steps/scan-secrets.ts';
import { prepareReportsDir, reportsDirProblem, REPLAY_DIR, REPORT_ENTRIES, type PreparedReportsDir } from './steps/reports-dir.ts';
import { certificateStep, type Certificate, type WrittenCertificate } from './certificate/index.ts';
import type { LedgerRequirement, PacingSummary, VerdictInput } from './verdict.ts';

export { mergeLoadReports, REPORT_ENTRIES };

export { LEDGER_FILE, ROOT_CONFIG };

export { REPLAY_DIR };

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
  write('Run `npm run certify -- --help` for the variables.\n');
  return 2;
}

/** The exit status of a run stopped by a signal before anything was judged: 128 + the signal's number (130 SIGINT, 143 SIGTERM). */
export function interruptedExit(signal?: AbortSignal): number {
  return signal?.reason === 'SIGTERM' ? 143 : 130;
}

/** Deletes certify's own entries in the reports folder (nothing else): for tools whose folder is their own temporary one. */
export function cleanReports(dir: string): void {
  for (const entry of REPORT_ENTRIES) fs.rmSync(path.join(dir, entry), { recursive: true, force: true });
}

export async function runCertify(options: RunOptions): Promise<number> {
  const started = Date.now();
  const { env, write } = options;
  const parsed = parseEnv(env);
  if (!parsed.ok) return usage(write, parsed.errors, env);
  const config = parsed.config;
  const settings = readSettings(env).values;
  const wanted = (p: Phase) => !options.onlyPhases || options.onlyPhases.includes(p);
  const phases = config.phases.filter(wanted);
  /** Phases the profile leaves out: listed, never run. */
  const leftOutPhases = PHASES.filter((p) => !config.phases.includes(p) && wanted(p));

  // Step: the reports folder, the run's own (refused before any file is touched otherwise). A
  // replay writes into its own folder inside it, so the last run's reports stay as they are.
  const replaying = !!env.CONFORMANCE_REPLAY?.trim();
  const parentProblem = replaying ? reportsDirProblem(config.reportsDir) : undefined;
  if (parentProblem) return usage(write, [parentProblem], env);
  const folder = prepareReportsDir(replaying ? path.join(config.reportsDir, REPLAY_DIR) : config.reportsDir);
  if (!folder.ok) return usage(write, [folder.problem], env);
  const reportsDir = folder.dir;
  const gateRead = readGateInputs(env);
  if (gateRead.errors.length) return usage(write, gateRead.errors, env);
  const configFile = options.configFile ?? ROOT_CONFIG;
  const ledgerFile = options.ledgerFile ?? LEDGER_FILE;

  const workDir = path.join(reportsDir, '.certify');
  const blobDir = path.join(reportsDir, 'blob');
  const redactionsFile = path.join(workDir, 'redactions.jsonl');
  fs.mkdirSync(workDir, { recursive: true });

  const runErrors: string[] = [];
  let ledger: LedgerRequirement[] = [];
  try {
    ledger = loadLedger(ledgerFile);
  } catch (error) {
    runErrors.push(`requirements ledger ${path.relative(REPO_ROOT, ledgerFile)}: ${(error as Error).message}`);
  }

  // Step: resolve the target.
  let target: ResolvedTarget;
  try {
    target = await resolveTarget(config, env);
  } catch (error) {
    write(`certify: could not start the bundled reference server: ${(error as Error).message}\n`);
    fs.rmSync(workDir, { recursive: true, force: true });
    folder.finish();
    return EXIT.harness;
  }
  const secrets = secretsFromEnv(target.env);
  const redact = redactorFor(secrets);
  const say = (text: string) => write(redact(text));
  const ref = target.reference;
  say(
    `certify: target ${target.env.BASE_URL}${target.env.API_URL ? ` (messages: ${target.env.API_URL})` : ''}` +
      (ref ? ` — bundled reference server, minute window ${ref.settings.minuteWindowMs / 1000} s, ban ${ref.settings.banMs / 1000} s\n` : '\n'),
  );

  let pacer: RunPacer | undefined;
  let pacing: PacingSummary[] | undefined;
  const phaseRun: { results: Awaited<ReturnType<typeof runPhases>>['results']; notRun: VerdictInput['tests'] } = { results: [], notRun: [] };
  try {
    // Step: preflight, before any key leaves the machine.
    const pre = await preflight(
      { baseUrl: target.env.BASE_URL!, ...(target.env.API_URL ? { apiUrl: target.env.API_URL } : {}) },
      { timeoutMs: Math.min(settings.REQUEST_TIMEOUT_MS, 10_000), insecure: settings.INSECURE_TLS, ...(options.signal ? { signal: options.signal } : {}) },
    );
    if (!pre.ok) {
      say(`certify: ${pre.interrupted ? '' : 'preflight failed: '}${pre.line}\n`);
      fs.rmSync(workDir, { recursive: true, force: true });
      folder.finish();
      return pre.interrupted ? interruptedExit(options.signal) : PREFLIGHT_EXIT;
    }
    for (const line of pre.lines) say(`certify: ${line}\n`);

    say(
      `certify: profile ${config.profile}; phases ${phases.join(' → ')}; keys given: ` +
        `${SECRET_VARIABLES.filter((n) => target.env[n]).join(', ') || 'none'}; reports in ${reportsDir}\n`,
    );
    for (const note of config.notes) say(`certify: note: ${note}\n`);
    for (const s of secrets) {
      if (s.value.length < MIN_SAFE_SECRET_LENGTH) say(`certify: note: ${s.name} is shorter than ${MIN_SAFE_SECRET_LENGTH} characters; the secret scan may report coincidences\n`);
    }

    // Step: one run-wide pacer for every phase.
    pacer = await startRunPacer({ maxRetryAfterS: settings.MAX_RETRY_AFTER_S, workers: settings.WORKERS });
    const childEnv: Record<string, string | undefined> = {
      ...target.env,
      ...pacer.env,
      CONFORMANCE_PROFILE: config.profile,
      REPORTS_DIR: reportsDir,
      CERTIFY_REDACTIONS_FILE: redactionsFile,
    };

    // Step: list what the profile leaves out.
    const leftOut = await listLeftOut(leftOutPhases, config.profile, (ps) => listPhases([...ps], configFile, childEnv, redact, path.join(workDir, 'list.json')));
    for (const line of leftOut.lines) say(line);
    phaseRun.notRun = leftOut.notRun;
    runErrors.push(...leftOut.runErrors);

    // Step: run the phases.
    const ran = await runPhases(
      phases,
      (phase) =>
        runPhase(
          {
            phase,
            configFile,
            env: childEnv,
            blobFile: path.join(blobDir, `${phase}.zip`),
            outputDir: path.join(reportsDir, 'test-results'),
            ...(config.workers ? { workers: config.workers } : {}),
            timeoutS: config.phaseTimeoutS,
            write: say,
            ...(options.signal ? { signal: options.signal } : {}),
          },
          redact,
        ),
      say,
      { phaseTimeoutS: config.phaseTimeoutS, ...(options.signal ? { signal: options.signal } : {}), progress: () => pacer!.progress() },
    );
    phaseRun.results = ran.results;
    runErrors.push(...ran.runErrors);
  } finally {
    if (pacer) pacing = await pacer.close();
    await target.close();
  }

  // Step: merge the phases' blobs into the HTML report, junit.xml and results.json.
  const mergeStart = Date.now();
  const mergeEnv: Record<string, string | undefined> = { ...env };
  for (const n of SECRET_VARIABLES) delete mergeEnv[n];
  const merged = await mergeResults(blobDir, reportsDir, phases.length, () => mergeReports(blobDir, reportsDir, mergeEnv, redact), redact);
  runErrors.push(...merged.runErrors);
  if (merged.tests.length) say(`certify: merged reports in ${((Date.now() - mergeStart) / 1000).toFixed(1)} s\n`);
  const generatedAt = new Date().toISOString();
  const load = mergeLoadReports(reportsDir, generatedAt);
  if (load) fs.writeFileSync(path.join(reportsDir, 'load.json'), `${redact(JSON.stringify(load.document, null, 2))}\n`);
  const redactions = readRedactions(redactionsFile);
  if (redactions.inMemory) say(`certify: note: ${redactions.inMemory} key occurrence(s) in test errors were scrubbed before any report was written\n`);
  fs.rmSync(workDir, { recursive: true, force: true });

  // Step: judge (a replay: only the requirements its case evidences).
  const replayed = new Set(merged.tests.filter((t) => t.outcome !== 'skipped').flatMap((t) => requirementIds(t)));
  const verdictInput: VerdictInput = {
    phases: phaseSummaries(PHASES, phases, leftOutPhases, phaseRun.results, config.profile),
    ledger: replaying ? ledger.filter((r) => replayed.has(r.id)) : ledger,
    gate: replaying ? {} : gateRead.inputs.options,
    tests: replaying ? merged.tests.filter((t) => t.outcome !== 'skipped') : [...merged.tests, ...phaseRun.notRun],
    profile: config.profile,
    target: target.description,
    generatedAt,
    runErrors: runErrors.map(redact),
  };
  return finishRun({
    verdictInput, leaks: redactions.leaks, extra: pacing ? { pacing } : {}, reportsDir, folder, redact, secrets, say, env, replaying,
    ...(gateRead.inputs.previous ? { previous: gateRead.inputs.previous } : {}),
    ...(options.onCertificate ? { onCertificate: options.onCertificate } : {}),
    otherReports: ['conformance.json', 'html/index.html', 'junit.xml', 'results.json', 'evidence.har', ...(load ? ['load.json'] : [])],
    started,
  });
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
