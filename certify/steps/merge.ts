/**
 * Step "merge": each phase's own JSON report becomes test records; the phases' blob reports become
 * one HTML report, `junit.xml` and `results.json` (`playwright merge-reports`, one pass); the load checks' records
 * become `load.json`; the redacting reporter's log says which files a worker wrote a key into.
 */
import fs from 'node:fs';
import path from 'node:path';
import { runErrorsFromJsonReport, testsFromJsonReport } from '../../core/playwright-report.ts';
import { SECRET_VARIABLES } from '../../core/secrets.ts';
import { mergeReports } from '../phases.ts';
import { standbyMerge, type MergeStandby } from '../merge-standby.ts';
import type { TestRecord } from '../verdict.ts';
import { phaseJsonFile, type PreparedRun } from './prepare.ts';

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
 * The test records of the phases that ran, each read from the phase's own JSON report (a phase
 * that wrote a blob but no readable JSON report is a run problem), and merges the blobs of
 * `blobDir` into the HTML report, `junit.xml` and `results.json` under `reportsDir` with `merge`
 * (none for a run that writes no such files, whose phases write no blob). `phaseReports`: the
 * phase and its JSON report, for every phase that was meant to run (none is no problem; phases
 * none of which wrote a blob or a JSON report are).
 */
export async function mergeResults(
  blobDir: string,
  phaseReports: readonly { phase: string; file: string }[],
  merge: (() => Promise<{ ok: boolean; output: string }>) | undefined,
  redact: (s: string) => string,
): Promise<Merged> {
  const out: Merged = { tests: [], runErrors: [] };
  const blobs = fs.existsSync(blobDir) ? fs.readdirSync(blobDir).filter((f) => f.endsWith('.zip')) : [];
  if (!blobs.length && !phaseReports.some(({ file }) => fs.existsSync(file))) {
    if (phaseReports.length) out.runErrors.push('no phase produced a report');
    return out;
  }
  if (merge && blobs.length) {
    const merged = await merge();
    if (!merged.ok) out.runErrors.push(`merging the phase reports failed: ${redact(merged.output).trim().split('\n').slice(-3).join(' ')}`);
  }
  for (const { phase, file } of phaseReports) {
    const json = readJson(file);
    if (json === undefined) {
      if (blobs.includes(`${phase}.zip`)) out.runErrors.push(`phase ${phase} wrote a blob report but no readable JSON report`);
      continue;
    }
    out.tests.push(...testsFromJsonReport(json));
    out.runErrors.push(...runErrorsFromJsonReport(json).map((e) => redact(e)));
  }
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

/** The redaction logs in `dir` (one per phase), their lines in file-name order; none when the folder is absent. */
function redactionLines(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort();
  return files.flatMap((f) => fs.readFileSync(path.join(dir, f), 'utf8').split('\n'));
}

/**
 * What the redacting reporter logged (`CERTIFY_REDACTIONS_FILE`, one log per phase in `dir`):
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

/** `env` without any key: the merge reads blobs the phases have already redacted, and needs none. */
function keyless(env: Record<string, string | undefined>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = { ...env };
  for (const n of SECRET_VARIABLES) delete out[n];
  return out;
}

/**
 * The run's merge, loaded now (`merge-standby.ts`) so that the merge itself is all that is left
 * once the last phase ends; undefined for a run that merges no reports.
 */
export function standbyFor(
  run: PreparedRun,
  env: Record<string, string | undefined>,
  redact: (s: string) => string,
): MergeStandby | undefined {
  return run.mergeReports ? standbyMerge(run.blobDir, run.reportsDir, keyless(env), redact) : undefined;
}

/**
 * Reads the test records from the phases' own JSON reports, merges the phases' blobs (keys withheld
 * from the merge's environment) into the HTML report, `junit.xml` and `results.json` (not in a
 * `verdictOnly` run), writes `load.json`, reads the redaction log, and removes the run's scratch
 * folder.
 */
export async function mergeRun(
  run: PreparedRun,
  env: Record<string, string | undefined>,
  redact: (s: string) => string,
  say: (text: string) => void,
  standby?: MergeStandby,
  /** What only a verbose console shows (the merge's time). */
  detail: (text: string) => void = say,
): Promise<MergedRun> {
  const { blobDir, reportsDir } = run;
  const mergeStart = Date.now();
  const merged = await mergeResults(
    blobDir,
    run.phases.map((phase) => ({ phase, file: phaseJsonFile(run, phase) })),
    run.mergeReports ? () => (standby ? standby.merge() : mergeReports(blobDir, reportsDir, keyless(env), redact)) : undefined,
    redact,
  );
  standby?.cancel();
  if (merged.tests.length && run.mergeReports) detail(`certify: merged reports in ${((Date.now() - mergeStart) / 1000).toFixed(1)} s\n`);
  const generatedAt = new Date().toISOString();
  const load = mergeLoadReports(reportsDir, generatedAt);
  if (load) fs.writeFileSync(path.join(reportsDir, 'load.json'), `${redact(JSON.stringify(load.document, null, 2))}\n`);
  const redactions = readRedactions(run.redactionsDir);
  if (redactions.inMemory)
    say(`certify: note: ${redactions.inMemory} key occurrence(s) in test errors were scrubbed before any report was written\n`);
  fs.rmSync(run.workDir, { recursive: true, force: true });
  return { ...merged, generatedAt, loadWritten: !!load, redactions };
}
