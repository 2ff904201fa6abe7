import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseEnv, PHASES, type CertifyConfig, type Phase } from './env.ts';
import { loadLedger } from '../suites/lib/ledger.ts';
import { renderMarkdown } from './markdown.ts';
import { listPhases, mergeReports, REPO_ROOT, runPhase, type PhaseResult } from './phases.ts';
import { startReferenceTarget, type ReferenceTarget } from './reference-target.ts';
import { describeFinding, scanPaths } from './secret-scan.ts';
import { MIN_SAFE_SECRET_LENGTH, redactorFor, secretsFromEnv, SECRET_VARIABLES } from './secrets.ts';
import {
  computeVerdict,
  toNotRun,
  runErrorsFromJsonReport,
  testsFromJsonReport,
  type ConformanceReport,
  type LedgerRequirement,
  type PhaseSummary,
  type TestRecord,
} from './verdict.ts';

/**
 * `npm run certify`: resolve the target, run the phases, merge the reports, compute the verdict,
 * write `conformance.json`/`conformance.md`/`load.json`, scan every written file for keys.
 * Returns the exit status: 0 verdict pass, 1 verdict fail, 2 usage error.
 */

export const LEDGER_FILE = path.join(REPO_ROOT, 'suites', 'requirements.yaml');
export const ROOT_CONFIG = path.join(REPO_ROOT, 'playwright.config.ts');

/** Files and folders certify writes in REPORTS_DIR; only these are deleted at the start of a run. */
export const REPORT_ENTRIES = [
  'conformance.json',
  'conformance.md',
  'junit.xml',
  'results.json',
  'load.json',
  'html',
  'blob',
  'load',
  'test-results',
  '.certify',
] as const;

export interface RunOptions {
  env: Record<string, string | undefined>;
  write: (text: string) => void;
  /** Playwright config of the phases (default: the root `playwright.config.ts`). */
  configFile?: string;
  ledgerFile?: string;
  signal?: AbortSignal;
  /** For tools and tests: run only these of the profile's phases (the others are neither run nor listed). */
  onlyPhases?: Phase[];
}

type Out = (text: string) => void;

function usage(write: Out, errors: string[]): number {
  write('certify: usage error:\n');
  for (const e of errors) write(`  - ${e}\n`);
  write('Run `npm run certify -- --help` for the variables.\n');
  return 2;
}

/** Refuses report folders whose cleaning or scanning would reach far beyond the run's own files. */
function reportsDirProblem(dir: string): string | undefined {
  const forbidden = [path.parse(dir).root, REPO_ROOT, os.homedir(), path.join(REPO_ROOT, 'suites'), path.join(REPO_ROOT, 'certify')];
  if (forbidden.some((f) => path.resolve(f) === dir)) return `REPORTS_DIR must be a dedicated folder, not ${dir}`;
  return undefined;
}

export function cleanReports(dir: string): void {
  for (const entry of REPORT_ENTRIES) fs.rmSync(path.join(dir, entry), { recursive: true, force: true });
}

function readJson(file: string): unknown | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Merges `${dir}/load/*.json` into one document keyed by check name; undefined if there are none. */
export function mergeLoadReports(dir: string, generatedAt: string): { document: unknown; files: string[] } | undefined {
  const loadDir = path.join(dir, 'load');
  if (!fs.existsSync(loadDir)) return undefined;
  const files = fs.readdirSync(loadDir).filter((f) => f.endsWith('.json')).sort();
  if (!files.length) return undefined;
  const checks: Record<string, unknown> = {};
  for (const f of files) {
    const content = readJson(path.join(loadDir, f));
    checks[f.replace(/\.json$/, '')] = content === undefined ? { error: `load/${f} is not valid JSON` } : content;
  }
  return { document: { generatedAt, checks }, files };
}

function secondsSince(start: number): string {
  return `${((Date.now() - start) / 1000).toFixed(1)} s`;
}

function describeTarget(config: CertifyConfig, env: Record<string, string | undefined>, reference?: ReferenceTarget) {
  return {
    kind: reference ? 'reference' : 'external',
    baseUrl: env.BASE_URL,
    apiUrl: env.API_URL ?? null,
    apiPlan: env.API_PLAN?.toLowerCase() ?? null,
    rateLimitKey: env.RATE_LIMIT_KEY ? 'given' : 'not given',
    rateLimitPlan: env.RATE_LIMIT_PLAN?.toLowerCase() ?? null,
    loadKey: env.LOAD_KEY ? 'given' : 'not given',
    ...(reference ? { referenceSettings: reference.settings } : {}),
    profile: config.profile,
  };
}

interface RedactionRecord {
  kind: string;
  file?: string;
  attachment?: string;
  test?: string;
  count?: number;
}

function readRedactions(file: string): RedactionRecord[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      try {
        return JSON.parse(l) as RedactionRecord;
      } catch {
        return { kind: 'unreadable' };
      }
    });
}

export async function runCertify(options: RunOptions): Promise<number> {
  const started = Date.now();
  const { env, write } = options;
  const parsed = parseEnv(env);
  if (!parsed.ok) return usage(write, parsed.errors);
  const config = parsed.config;
  const wanted = (p: Phase) => !options.onlyPhases || options.onlyPhases.includes(p);
  const phases = config.phases.filter(wanted);
  /** Phases the profile leaves out: listed, never run. */
  const skippedPhases = PHASES.filter((p) => !config.phases.includes(p) && wanted(p));

  const reportsDir = path.resolve(config.reportsDir);
  const dirProblem = reportsDirProblem(reportsDir);
  if (dirProblem) return usage(write, [dirProblem]);

  const configFile = options.configFile ?? ROOT_CONFIG;
  const ledgerFile = options.ledgerFile ?? LEDGER_FILE;

  cleanReports(reportsDir);
  fs.mkdirSync(reportsDir, { recursive: true });
  const workDir = path.join(reportsDir, '.certify');
  const blobDir = path.join(reportsDir, 'blob');
  const outputDir = path.join(reportsDir, 'test-results');
  const redactionsFile = path.join(workDir, 'redactions.jsonl');
  fs.mkdirSync(workDir, { recursive: true });

  const runErrors: string[] = [];
  let ledger: LedgerRequirement[] = [];
  try {
    ledger = loadLedger(ledgerFile);
  } catch (error) {
    runErrors.push(`requirements ledger ${path.relative(REPO_ROOT, ledgerFile)}: ${(error as Error).message}`);
  }

  let reference: ReferenceTarget | undefined;
  let targetEnv: Record<string, string | undefined>;
  if (config.baseUrl) {
    targetEnv = { ...env, BASE_URL: config.baseUrl, ...(config.apiUrl ? { API_URL: config.apiUrl } : {}) };
  } else {
    try {
      reference = await startReferenceTarget();
    } catch (error) {
      write(`certify: could not start the bundled reference server: ${(error as Error).message}\n`);
      return 1;
    }
    targetEnv = { ...env, ...reference.env };
  }
  const secrets = secretsFromEnv(targetEnv);
  const redact = redactorFor(secrets);
  const say = (text: string) => write(redact(text));
  const target = describeTarget(config, targetEnv, reference);

  say(
    `certify: target ${targetEnv.BASE_URL}${targetEnv.API_URL ? ` (messages: ${targetEnv.API_URL})` : ''}` +
      (reference
        ? ` — bundled reference server, minute window ${reference.settings.minuteWindowMs / 1000} s, ban ${reference.settings.banMs / 1000} s\n`
        : '\n'),
  );
  say(
    `certify: profile ${config.profile}; phases ${phases.join(' → ')}; keys given: ` +
      `${SECRET_VARIABLES.filter((n) => targetEnv[n]).join(', ') || 'none'}; reports in ${reportsDir}\n`,
  );
  for (const note of config.notes) say(`certify: note: ${note}\n`);
  for (const s of secrets) {
    if (s.value.length < MIN_SAFE_SECRET_LENGTH) say(`certify: note: ${s.name} is shorter than ${MIN_SAFE_SECRET_LENGTH} characters; the secret scan may report coincidences\n`);
  }

  const childEnv: Record<string, string | undefined> = {
    ...targetEnv,
    CONFORMANCE_PROFILE: config.profile,
    REPORTS_DIR: reportsDir,
    CERTIFY_REDACTIONS_FILE: redactionsFile,
    CERTIFY_PHASE: undefined,
  };

  const phaseResults: PhaseResult[] = [];
  const notRun: TestRecord[] = [];
  try {
    if (skippedPhases.length) {
      const listing = await listPhases(skippedPhases, configFile, childEnv, redact, path.join(workDir, 'list.json'));
      const listed = listing ? testsFromJsonReport(listing) : [];
      for (const phase of skippedPhases) {
        const reason = `CONFORMANCE_PROFILE=${config.profile} does not run the ${phase} phase`;
        const tests = listed.filter((x) => x.project === phase).map((t) => toNotRun(t, reason));
        notRun.push(...tests);
        say(`▷ phase ${phase} not run (profile ${config.profile}): ${tests.length} check(s) listed as not certified\n`);
      }
      if (!listing) runErrors.push(`could not list the checks of the phases not run (${skippedPhases.join(', ')}); they are missing from the report`);
    }
    let i = 0;
    for (const phase of phases) {
      if (options.signal?.aborted) break;
      i++;
      const phaseStart = Date.now();
      say(`▶ phase ${i}/${phases.length}: ${phase}\n`);
      const result = await runPhase(
        {
          phase,
          configFile,
          env: { ...childEnv, CERTIFY_PHASE: phase },
          blobFile: path.join(blobDir, `${phase}.zip`),
          outputDir,
          ...(config.workers ? { workers: config.workers } : {}),
          timeoutS: config.phaseTimeoutS,
          write: say,
          ...(options.signal ? { signal: options.signal } : {}),
        },
        redact,
      );
      phaseResults.push(result);
      const how = result.timedOut
        ? 'stopped after PHASE_TIMEOUT_S'
        : result.signal
          ? `killed by ${result.signal}`
          : result.exitCode === 0
            ? 'all checks passed'
            : 'some checks failed';
      say(`■ phase ${phase} finished in ${secondsSince(phaseStart)}: ${how}\n`);
      if (!result.blobWritten) {
        runErrors.push(
          `phase ${phase} ended without a report (exit ${result.exitCode ?? result.signal}); its checks have no result. ` +
            `Last output: ${result.tail.slice(-4).join(' | ') || '(none)'}`,
        );
      }
      else if (result.timedOut) runErrors.push(`phase ${phase} was stopped after PHASE_TIMEOUT_S=${config.phaseTimeoutS} s`);
    }
  } finally {
    if (reference) await reference.close();
  }
  if (options.signal?.aborted) runErrors.push('run interrupted');

  // Merge the phases' blobs into the HTML report, junit.xml and results.json.
  let tests: TestRecord[] = [];
  const mergeStart = Date.now();
  if (fs.existsSync(blobDir) && fs.readdirSync(blobDir).some((f) => f.endsWith('.zip'))) {
    const mergeEnv: Record<string, string | undefined> = { ...env };
    for (const n of SECRET_VARIABLES) delete mergeEnv[n];
    const merged = await mergeReports(blobDir, reportsDir, mergeEnv, redact);
    if (!merged.ok) runErrors.push(`merging the phase reports failed: ${merged.output.trim().split('\n').slice(-3).join(' ')}`);
    const json = readJson(path.join(reportsDir, 'results.json'));
    if (json === undefined) runErrors.push('results.json is missing or unreadable after the merge');
    else {
      tests = testsFromJsonReport(json);
      runErrors.push(...runErrorsFromJsonReport(json).map((e) => redact(e)));
    }
    say(`certify: merged reports in ${secondsSince(mergeStart)}\n`);
  } else if (phases.length) {
    runErrors.push('no phase produced a report');
  }

  const generatedAt = new Date().toISOString();
  const load = mergeLoadReports(reportsDir, generatedAt);
  if (load) fs.writeFileSync(path.join(reportsDir, 'load.json'), `${redact(JSON.stringify(load.document, null, 2))}\n`);

  const leakProblems = readRedactions(redactionsFile)
    .filter((r) => r.kind === 'attachment-file')
    .map((r) => `${r.file} (attachment "${r.attachment}" of "${r.test}"): a key was written there by the Playwright worker; certify scrubbed it afterwards`);
  const inMemory = readRedactions(redactionsFile)
    .filter((r) => r.kind === 'in-memory')
    .reduce((n, r) => n + (r.count ?? 0), 0);
  if (inMemory) say(`certify: note: ${inMemory} key occurrence(s) in test errors were scrubbed before any report was written\n`);
  fs.rmSync(workDir, { recursive: true, force: true });

  const phaseSummaries: PhaseSummary[] = PHASES.filter((p) => phases.includes(p) || skippedPhases.includes(p)).map((name) => {
    const r = phaseResults.find((x) => x.phase === name);
    if (r) return { name, ran: true, seconds: Math.round(r.durationMs / 100) / 10, exit: r.exitCode ?? r.signal };
    if (skippedPhases.includes(name)) return { name, ran: false, reason: `CONFORMANCE_PROFILE=${config.profile}` };
    return { name, ran: false, reason: 'run interrupted' };
  });
  const verdictInput = {
    phases: phaseSummaries,
    ledger,
    tests: [...tests, ...notRun],
    profile: config.profile,
    target,
    generatedAt,
    runErrors: runErrors.map(redact),
  };
  const writeReports = (report: ConformanceReport) => {
    fs.writeFileSync(path.join(reportsDir, 'conformance.json'), `${redact(JSON.stringify(report, null, 2))}\n`);
    fs.writeFileSync(path.join(reportsDir, 'conformance.md'), redact(renderMarkdown(report)));
  };
  let report = computeVerdict({ ...verdictInput, secretFindings: leakProblems });
  writeReports(report);

  // Secret scan of everything the run wrote.
  const scan = scanPaths([reportsDir], secrets, process.cwd());
  const findings = [...scan.findings.map(describeFinding), ...scan.unscannable.map(describeFinding)];
  say(`certify: secret scan of ${scan.filesScanned} files: ${findings.length ? `${findings.length} finding(s)` : 'no key found'}\n`);
  if (findings.length) {
    for (const f of findings) say(`  ✗ ${f}\n`);
    report = computeVerdict({ ...verdictInput, secretFindings: [...leakProblems, ...findings] });
    writeReports(report);
  }

  // Summary.
  const s = report.summary;
  const failed = report.requirements.filter((r) => r.status === 'fail');
  if (failed.length) {
    say(`\nFailed requirements (${failed.length}):\n`);
    for (const r of failed) {
      const first = r.evidence.find((e) => e.errors?.length)?.errors?.[0]?.replace(/^Error: /, '') ?? r.reason ?? '';
      say(`  ✗ ${r.id} (${r.level}) ${r.title}\n      ${first.split('\n')[0]}\n`);
    }
  }
  if (report.problems.length) {
    say(`\nRun problems (${report.problems.length}):\n`);
    for (const p of report.problems) say(`  ✗ ${p.split('\n')[0]}\n`);
  }
  const warned = report.requirements.filter((r) => r.status === 'warn');
  if (warned.length) say(`\nWarnings (${warned.length}, see conformance.md): ${warned.map((r) => r.id).join(', ')}\n`);
  if (report.notCertified.length) {
    say(`\nNot certified (${report.notCertified.length}): ${report.notCertified.map((n) => n.id).join(', ')}\n`);
  }
  say(`\nreports: ${path.join(reportsDir, 'conformance.md')} (also conformance.json, html/index.html, junit.xml, results.json${load ? ', load.json' : ''})\n`);
  say(`certify: verdict ${report.verdict.toUpperCase()} — ${s.pass} pass, ${s.warn} warn, ${s.fail} fail, ${s.skipped} skipped (${secondsSince(started)})\n`);
  const byPhase = Object.entries(report.requestsByPhase).map(([p, n]) => `${p} ${n}`).join(', ');
  if (byPhase) say(`requests by phase: ${byPhase}\n`);
  say(`requests sent: ${report.requests}\n`);
  return report.verdict === 'pass' ? 0 : 1;
}

export type { Phase };
