/**
 * Step "judge": the phases' summaries and the verdict (`verdict.ts`, pure) with its gate over the
 * ledger and every test record, then `conformance.json` and `conformance.md` written (redacted);
 * after the secret scan, `junit.xml` made to state the same gate.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseBaseline } from '../baseline.ts';
import { sha256 } from '../certificate/digest.ts';
import { gateLine, type PreviousRun } from '../gate.ts';
import type { Certificate } from '../certificate/types.ts';
import { gateJunit } from '../junit.ts';
import { renderMarkdown } from '../markdown.ts';
import { requirementIds } from '../../core/results.ts';
import { readSettings } from '../../settings/index.ts';
import type { PhaseResult } from '../phases.ts';
import { computeVerdict, type ConformanceReport, type PhaseSummary, type VerdictGateOptions, type VerdictInput } from '../verdict.ts';

/** How each phase of the profile went, in run order: ran (seconds, exit), left out by the profile, or interrupted. */
export function phaseSummaries(
  allPhases: readonly string[],
  ran: readonly string[],
  leftOut: readonly string[],
  results: readonly PhaseResult[],
  profile: string,
): PhaseSummary[] {
  return allPhases
    .filter((p) => ran.includes(p) || leftOut.includes(p))
    .map((name) => {
      const r = results.find((x) => x.phase === name);
      if (r)
        return {
          name,
          ran: true,
          seconds: Math.round(r.durationMs / 100) / 10,
          ...(r.waitedS !== undefined ? { waitedS: r.waitedS } : {}),
          exit: r.exitCode ?? r.signal,
        };
      if (leftOut.includes(name)) return { name, ran: false, reason: `CONFORMANCE_PROFILE=${profile}` };
      return { name, ran: false, reason: 'run interrupted' };
    });
}

/** What the gate reads besides the results: strict mode, the baseline, the certificate to compare with. */
export interface GateInputs {
  options: VerdictGateOptions;
  /** The certificate of `CONFORMANCE_NO_REGRESSION_FROM`, for the certificate's comparison. */
  previous?: Certificate;
}

/**
 * Reads the gate's files before anything runs (`CONFORMANCE_STRICT`, `CONFORMANCE_BASELINE`,
 * `CONFORMANCE_NO_REGRESSION_FROM`): an unreadable one is a usage error, listed in `errors`.
 */
export function readGateInputs(env: Record<string, string | undefined>, cwd = process.cwd()): { inputs: GateInputs; errors: string[] } {
  const errors: string[] = [];
  const options: VerdictGateOptions = { strict: readSettings(env).values.CONFORMANCE_STRICT };
  const inputs: GateInputs = { options };
  const read = (name: string, file: string): string | undefined => {
    try {
      return fs.readFileSync(path.resolve(cwd, file), 'utf8');
    } catch (error) {
      errors.push(`${name} (${file}): ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
      return undefined;
    }
  };
  const baselineFile = env.CONFORMANCE_BASELINE?.trim();
  const baselineText = baselineFile ? read('CONFORMANCE_BASELINE', baselineFile) : undefined;
  if (baselineFile && baselineText !== undefined) {
    try {
      options.baseline = { baseline: parseBaseline(baselineText), file: path.basename(baselineFile), digest: sha256(baselineText) };
    } catch (error) {
      errors.push(`CONFORMANCE_BASELINE (${baselineFile}): ${(error as Error).message}`);
    }
  }
  const previousFile = env.CONFORMANCE_NO_REGRESSION_FROM?.trim();
  const previousText = previousFile ? read('CONFORMANCE_NO_REGRESSION_FROM', previousFile) : undefined;
  if (previousFile && previousText !== undefined) {
    const previous = parsePreviousCertificate(previousText);
    if (typeof previous === 'string') errors.push(`CONFORMANCE_NO_REGRESSION_FROM (${previousFile}): ${previous}`);
    else {
      inputs.previous = previous;
      options.previous = previousRun(previous, path.basename(previousFile));
    }
  }
  return { inputs, errors };
}

/** A certificate.json's text as a Certificate, or why it is not one. */
export function parsePreviousCertificate(text: string): Certificate | string {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return 'not JSON (expected a certificate.json)';
  }
  const c = doc as Partial<Certificate> | null;
  if (
    !c ||
    typeof c.format !== 'string' ||
    !c.format.startsWith('inventory-conformance-certificate/') ||
    !Array.isArray(c.results?.requirements)
  ) {
    return 'not a certificate (expected the certificate.json of a certify run)';
  }
  return c as Certificate;
}

/** The gate's view of a previous certificate. */
export function previousRun(c: Certificate, file: string): PreviousRun {
  return {
    file,
    digest: c.digests?.certificate ?? '',
    generatedAt: c.generatedAt,
    statuses: Object.fromEntries(c.results.requirements.map((r) => [r.id, r.status])),
  };
}

/** What the verdict's input is made of: the phases' outcome, the merged tests, the ledger and the gate's inputs. */
export interface VerdictParts {
  allPhases: readonly string[];
  phases: readonly string[];
  leftOutPhases: readonly string[];
  results: readonly PhaseResult[];
  /** The tests of the phases the profile leaves out (not run). */
  notRun: VerdictInput['tests'];
  /** The tests the merge read back. */
  tests: VerdictInput['tests'];
  ledger: VerdictInput['ledger'];
  gate: GateInputs;
  replaying: boolean;
  profile: string;
  target: VerdictInput['target'];
  generatedAt: string;
  runErrors: readonly string[];
  redact: (s: string) => string;
  /** A signal stopped the run: what did not end is not certified, and the gate says so. */
  interrupted?: VerdictInput['interrupted'];
}

/** The verdict's input; a replay judges only the requirements its case evidences, without the gate's inputs. */
export function verdictInputFor(p: VerdictParts): VerdictInput {
  const ran = p.tests.filter((t) => t.outcome !== 'skipped');
  const replayed = new Set(ran.flatMap((t) => requirementIds(t)));
  return {
    phases: phaseSummaries(p.allPhases, p.phases, p.leftOutPhases, p.results, p.profile),
    ledger: p.replaying ? p.ledger.filter((r) => replayed.has(r.id)) : p.ledger,
    gate: p.replaying ? {} : p.gate.options,
    tests: p.replaying ? ran : [...p.tests, ...p.notRun],
    profile: p.profile,
    target: p.target,
    generatedAt: p.generatedAt,
    runErrors: p.runErrors.map(p.redact),
    ...(p.interrupted ? { interrupted: p.interrupted } : {}),
  };
}

/** The verdict and its gate (pure): the report, with `extra` (pacing, journal) beside it. */
export function judgeReport(input: VerdictInput, extra: Record<string, unknown> = {}): ConformanceReport {
  return { ...computeVerdict(input), ...extra } as ConformanceReport;
}

/** `report` as `conformance.json` states it: every form of every key of the run replaced by its placeholder. */
export function redactReport(report: ConformanceReport, redact: (s: string) => string): ConformanceReport {
  return JSON.parse(redact(JSON.stringify(report))) as ConformanceReport;
}

/** Writes `report` as `conformance.json` and `conformance.md` under `reportsDir`, redacted. */
export function writeReportFiles(report: ConformanceReport, reportsDir: string, redact: (s: string) => string): void {
  fs.writeFileSync(path.join(reportsDir, 'conformance.json'), `${redact(JSON.stringify(report, null, 2))}\n`);
  fs.writeFileSync(path.join(reportsDir, 'conformance.md'), redact(renderMarkdown(report)));
}

/** Computes the verdict and its gate, and writes `conformance.json` and `conformance.md` under `reportsDir`. */
export function judge(
  input: VerdictInput,
  reportsDir: string,
  redact: (s: string) => string,
  extra: Record<string, unknown> = {},
): ConformanceReport {
  const report = judgeReport(input, extra);
  writeReportFiles(report, reportsDir, redact);
  return report;
}

/** Makes `junit.xml` (when the merge wrote one) state the report's gate; known failures become skipped cases. */
export function gateJunitFile(report: ConformanceReport, reportsDir: string, redact: (s: string) => string): void {
  const file = path.join(reportsDir, 'junit.xml');
  if (!fs.existsSync(file)) return;
  fs.writeFileSync(file, redact(gateJunit(fs.readFileSync(file, 'utf8'), report, gateLine(report.gate))));
}
