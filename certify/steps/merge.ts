/**
 * Step "merge": the test records certify's reporter wrote as each phase ended; the load checks'
 * records become `load.json`; the redacting reporter's log says which files a worker wrote a key
 * into. (The HTML report, `junit.xml` and `results.json` come from the run's own reporters.)
 */
import fs from 'node:fs';
import path from 'node:path';
import { resultFile, runFile } from '../../core/phase-gate.ts';
import type { PhaseReport, RunReport } from '../phase-reporter.ts';
import type { TestRecord } from '../verdict.ts';
import { phasesDirOf, type PreparedRun } from './prepare.ts';

export interface Merged {
  tests: TestRecord[];
  runErrors: string[];
}

function readJson(file: string): unknown | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * The test records of the phases that ran, each as certify's reporter wrote it when the phase
 * ended (`<phase>.json` in `phasesDir`), and the run's errors outside any test (`run.json`).
 * `phases`: every phase that was meant to run (none is no problem; phases none of which has a
 * report are).
 */
export function collectResults(phasesDir: string, phases: readonly string[], redact: (s: string) => string): Merged {
  const out: Merged = { tests: [], runErrors: [] };
  const reports = phases.map((phase) => readJson(resultFile(phasesDir, phase)) as PhaseReport | undefined);
  if (phases.length && !reports.some(Boolean)) {
    out.runErrors.push('no phase produced a report');
    return out;
  }
  for (const report of reports) if (report) out.tests.push(...report.tests);
  const runReport = readJson(runFile(phasesDir)) as RunReport | undefined;
  out.runErrors.push(...(runReport?.runErrors ?? []).map((e) => redact(e)));
  return out;
}

/** Merges `${dir}/load/*.json` into one document keyed by check name; undefined if there are none. */
export function mergeLoadReports(dir: string, generatedAt: string): { document: unknown; files: string[] } | undefined {
  const loadDir = path.join(dir, 'load');
  if (!fs.existsSync(loadDir)) return undefined;
  const files = fs
    .readdirSync(loadDir)
    .filter((f) => f.endsWith('.json'))
    .sort();
  if (!files.length) return undefined;
  const checks: Record<string, unknown> = {};
  for (const f of files) {
    const content = readJson(path.join(loadDir, f));
    checks[f.replace(/\.json$/, '')] = content === undefined ? { error: `load/${f} is not valid JSON` } : content;
  }
  return { document: { generatedAt, checks }, files };
}

interface RedactionRecord {
  kind: string;
  file?: string;
  attachment?: string;
  test?: string;
  count?: number;
}

/** The redaction logs in `dir` (one per run), their lines in file-name order; none when the folder is absent. */
function redactionLines(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort();
  return files.flatMap((f) => fs.readFileSync(path.join(dir, f), 'utf8').split('\n'));
}

/**
 * What the redacting reporter logged (`CERTIFY_REDACTIONS_FILE`, in `dir`):
 * attachment files a worker wrote a key into (scrubbed afterwards, still a failure of the run) and
 * how many key occurrences in test errors were scrubbed in memory.
 */
export function readRedactions(dir: string): { leaks: string[]; inMemory: number } {
  const records = redactionLines(dir)
    .filter(Boolean)
    .map((l) => {
      try {
        return JSON.parse(l) as RedactionRecord;
      } catch {
        return { kind: 'unreadable' } as RedactionRecord;
      }
    });
  return {
    leaks: records
      .filter((r) => r.kind === 'attachment-file')
      .map(
        (r) =>
          `${r.file} (attachment "${r.attachment}" of "${r.test}"): a key was written there by the Playwright worker; certify scrubbed it afterwards`,
      ),
    inMemory: records.filter((r) => r.kind === 'in-memory').reduce((n, r) => n + (r.count ?? 0), 0),
  };
}

/** What the merge step leaves for the verdict: the tests, the merge's problems, when it ended, whether `load.json` was written, what the redacting reporter logged. */
export interface MergedRun extends Merged {
  generatedAt: string;
  loadWritten: boolean;
  redactions: { leaks: string[]; inMemory: number };
}

/**
 * Reads the test records the run's reporter wrote per phase (the HTML report, `junit.xml` and
 * `results.json` were written by the same run), writes `load.json`, reads the redaction log, and
 * removes the run's scratch folder.
 */
export async function mergeRun(run: PreparedRun, redact: (s: string) => string, say: (text: string) => void): Promise<MergedRun> {
  const merged = collectResults(phasesDirOf(run), run.phases, redact);
  const generatedAt = new Date().toISOString();
  const load = mergeLoadReports(run.reportsDir, generatedAt);
  if (load) fs.writeFileSync(path.join(run.reportsDir, 'load.json'), `${redact(JSON.stringify(load.document, null, 2))}\n`);
  const redactions = readRedactions(run.redactionsDir);
  if (redactions.inMemory)
    say(`certify: note: ${redactions.inMemory} key occurrence(s) in test errors were scrubbed before any report was written\n`);
  fs.rmSync(run.workDir, { recursive: true, force: true });
  return { ...merged, generatedAt, loadWritten: !!load, redactions };
}
