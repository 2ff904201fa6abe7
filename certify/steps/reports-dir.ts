/**
 * Step "prepare the reports folder": the run writes only in a folder it owns (fresh, empty, or marked by
 * `.conformance-run.json`) and deletes only what it wrote there (reports/README.md, docs/run-costs.md).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../../core/paths.ts';
import { JOURNAL_DIR, readJournalFile } from '../../core/journal.ts';

/** The run's marker and manifest in the reports folder. */
export const OWNER_FILE = '.conformance-run.json';

/** Files and folders certify writes in REPORTS_DIR (the manifest of a run that did not finish). */
export const REPORT_ENTRIES = [
  'conformance.json',
  'conformance.md',
  'junit.xml',
  'results.json',
  'load.json',
  'pacing.json',
  'evidence.har',
  'certificate.json',
  'certificate.html',
  'html',
  'blob',
  'load',
  'test-results',
  '.certify',
  'replay',
  'journal',
] as const;

/** The folder a replay writes to, inside the reports folder, with a manifest of its own: the run's reports are never touched by it. */
export const REPLAY_DIR = 'replay';

interface Manifest {
  owner: 'inventory-conformance certify';
  /** `false` while a run writes: then everything under `entries` is the run's. */
  complete: boolean;
  entries: string[];
  /** Every file the run wrote, relative to the folder (complete runs). */
  files: string[];
}

export interface ReportsDirOptions {
  home?: string;
  repoRoot?: string;
}

export type PreparedReportsDir =
  | {
      ok: true;
      dir: string;
      /** Whether the run wrote `file` (an absolute path): only such files are ever rewritten or deleted. */
      owns(file: string): boolean;
      /** Records every file the run wrote in the manifest (call when the run ends). */
      finish(): void;
    }
  | { ok: false; problem: string };

const realOrSelf = (p: string): string => {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
};

const inside = (child: string, parent: string): boolean => {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

/** Every file under `dir` (symbolic links count as files, never followed), relative to `dir`. */
export function filesUnder(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const name = path.join(rel, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(dir, name));
    else out.push(name);
  }
  return out;
}

/** Why `dir` can never be the run's folder (a place that holds far more than the run's files). */
function placeProblem(dir: string, o: Required<ReportsDirOptions>): string | undefined {
  let stat: fs.Stats | undefined;
  try {
    stat = fs.lstatSync(dir);
  } catch {
    stat = undefined;
  }
  if (stat?.isSymbolicLink()) return `REPORTS_DIR ${dir} is a symbolic link; give a real folder the run can own (a fresh or empty one)`;
  if (stat && !stat.isDirectory()) return `REPORTS_DIR ${dir} is not a folder`;
  const real = realOrSelf(dir);
  const places: [string, string][] = [
    [path.parse(real).root, 'the file system root'],
    [realOrSelf(o.home), 'the home folder'],
    [realOrSelf(o.repoRoot), 'the repository root'],
  ];
  for (const [place, name] of places) {
    if (inside(place, real)) return `REPORTS_DIR must be a folder of its own, not ${dir} (${real === place ? name : `it holds ${name}`})`;
  }
  return undefined;
}

function readManifest(file: string): Manifest | undefined {
  try {
    const m = JSON.parse(fs.readFileSync(file, 'utf8')) as Manifest;
    return m.owner === 'inventory-conformance certify' && Array.isArray(m.files) && Array.isArray(m.entries) ? m : undefined;
  } catch {
    return undefined;
  }
}

/** The files of `dir` the run may delete, or the ones it did not write (a replay folder judged by its own manifest). */
function classify(dir: string, known: Set<string>): { ours: string[]; foreign: string[] } {
  const manifest = fs.existsSync(path.join(dir, OWNER_FILE)) ? readManifest(path.join(dir, OWNER_FILE)) : undefined;
  const top = (f: string) => f.split(path.sep)[0];
  const replayDir = path.join(dir, REPLAY_DIR);
  const nested =
    fs.existsSync(path.join(replayDir, OWNER_FILE)) && !fs.lstatSync(replayDir).isSymbolicLink()
      ? classify(replayDir, new Set())
      : undefined;
  const files = filesUnder(dir).filter((f) => f !== OWNER_FILE && !known.has(f) && !(nested && top(f) === REPLAY_DIR));
  const inner = nested
    ? {
        ours: [...nested.ours, OWNER_FILE].map((f) => path.join(REPLAY_DIR, f)),
        foreign: nested.foreign.map((f) => path.join(REPLAY_DIR, f)),
      }
    : { ours: [], foreign: [] };
  const entries = new Set<string>(manifest && !manifest.complete ? manifest.entries : REPORT_ENTRIES);
  let isOurs: (f: string) => boolean;
  if (manifest?.complete) {
    const listed = new Set(manifest.files);
    isOurs = (f) => listed.has(f);
  } else if (manifest || files.every((f) => entries.has(top(f)))) {
    isOurs = (f) => entries.has(top(f));
  } else {
    isOurs = () => false;
  }
  return { ours: [...files.filter(isOurs), ...inner.ours], foreign: [...files.filter((f) => !isOurs(f)), ...inner.foreign] };
}

/**
 * A journal file (`journal/*.jsonl`) with an entry still open, or a 429 whose Retry-After has not
 * passed (steps/holds.ts): the next run's input, never deleted by the cleanup.
 */
function isOpenJournal(dir: string, rel: string, nowMs = Date.now()): boolean {
  if (path.dirname(rel) !== JOURNAL_DIR) return false;
  try {
    const j = readJournalFile(dir, rel);
    return j.open.length > 0 || j.limits.some((l) => l.untilMs > nowMs);
  } catch {
    return false;
  }
}

/** Removes the run's folders (`REPORT_ENTRIES`) left empty, deepest first; a user's empty folder stays. */
function removeEmptyFolders(dir: string, rel = ''): void {
  for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    if (!entry.isDirectory() || (rel === '' && !(REPORT_ENTRIES as readonly string[]).includes(entry.name))) continue;
    const sub = path.join(rel, entry.name);
    removeEmptyFolders(dir, sub);
    if (fs.readdirSync(path.join(dir, sub)).length === 0) fs.rmdirSync(path.join(dir, sub));
  }
}

const writeManifest = (dir: string, m: Omit<Manifest, 'owner'>) =>
  fs.writeFileSync(path.join(dir, OWNER_FILE), `${JSON.stringify({ owner: 'inventory-conformance certify', ...m }, null, 2)}\n`);

/** Why `reportsDir` can never be a run's folder (a symbolic link, root, home, the repository), or undefined. */
export function reportsDirProblem(reportsDir: string, options: ReportsDirOptions = {}): string | undefined {
  return placeProblem(path.resolve(reportsDir), { home: options.home ?? os.homedir(), repoRoot: options.repoRoot ?? PROJECT_ROOT });
}

/**
 * Makes `reportsDir` the run's: refuses it (with the reason) or deletes what the last run listed
 * and marks it. Nothing is touched when it is refused.
 */
export function prepareReportsDir(reportsDir: string, options: ReportsDirOptions = {}): PreparedReportsDir {
  const o = { home: options.home ?? os.homedir(), repoRoot: options.repoRoot ?? PROJECT_ROOT };
  const dir = path.resolve(reportsDir);
  const problem = placeProblem(dir, o);
  if (problem) return { ok: false, problem };
  // The repository's own reports/ folder ships a README: known, never deleted nor rewritten.
  const known = new Set(realOrSelf(dir) === path.join(realOrSelf(o.repoRoot), 'reports') ? ['README.md'] : []);
  if (fs.existsSync(dir)) {
    const { ours, foreign } = classify(dir, known);
    if (foreign.length) {
      const shown = foreign.slice(0, 5).join(', ') + (foreign.length > 5 ? `, … (${foreign.length} in all)` : '');
      return {
        ok: false,
        problem: `REPORTS_DIR ${dir} holds files this run did not write (${shown}); give a fresh or empty folder, or one an earlier run wrote`,
      };
    }
    for (const f of ours) if (!isOpenJournal(dir, f)) fs.rmSync(path.join(dir, f), { force: true });
    removeEmptyFolders(dir);
  } else {
    fs.mkdirSync(dir, { recursive: true });
  }
  writeManifest(dir, { complete: false, entries: [...REPORT_ENTRIES], files: [] });
  return {
    ok: true,
    dir,
    owns: (file) => {
      const rel = path.relative(dir, path.resolve(file));
      return rel !== '' && inside(path.resolve(file), dir) && rel !== OWNER_FILE && !known.has(rel);
    },
    finish() {
      const files = filesUnder(dir).filter((f) => f !== OWNER_FILE && !known.has(f));
      writeManifest(dir, { complete: true, entries: [...REPORT_ENTRIES], files });
    },
  };
}
