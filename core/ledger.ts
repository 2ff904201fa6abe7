/**
 * The requirements ledger (`suites/requirements.yaml`): its one parser and its sync check with the tests (each testable
 * id has a test, each title a known id); `loadLedger` and `listSuites` alone touch files (docs/adding-a-requirement.md).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { specsOf } from './playwright-report.ts';
import { requirementIds, titleId } from './results.ts';
import { LEDGER_FILE, REPO_ROOT, RULES_FILE, SPEC_FILE } from './paths.ts';
import { playwrightEnv } from './playwright-env.ts';

export type Level = 'must' | 'should' | 'may';
export const LEVELS: readonly Level[] = ['must', 'should', 'may'];

/**
 * Where a quote comes from. `spec` and `rules` quotes are verbatim from their file (SOURCE_FILES,
 * checked by tests/suites/ledger.test.ts); `rfc` quotes an RFC; `project` is the project's own
 * rule (not spec conformance: the report lists it apart).
 */
export type Source = 'spec' | 'rfc' | 'rules' | 'project';
export const SOURCES: readonly Source[] = ['spec', 'rfc', 'rules', 'project'];

/** The files `spec` and `rules` quotes are taken from, verbatim (whitespace aside). */
export const SOURCE_FILES = { spec: SPEC_FILE, rules: RULES_FILE } as const;

export { LEDGER_FILE };

/** One entry of the ledger, as written. */
export interface Requirement {
  id: string;
  section: string;
  quote: string;
  level: Level;
  /** Default `spec`. */
  source?: Source;
  decision?: string;
  excluded?: string;
  experimental?: boolean;
}

/** A requirement as the verdict needs it (certify): the quote shortened into a title. */
export interface LedgerRequirement {
  id: string;
  section: string;
  /** The quote on one line, at most 120 characters. */
  title: string;
  level: Level;
  /** Always set (`spec` when the ledger leaves it out); `project` rules are not spec conformance. */
  source: Source;
  /** Reason the requirement cannot be observed from outside (ledger `excluded:`). */
  excluded?: string;
  /** The requirement is about an operation the spec marks experimental. */
  experimental?: boolean;
}

/** A test as `playwright test --list --reporter=json` shows it. */
export interface ListedTest {
  title: string;
  file?: string;
  line?: number;
  /** The Playwright projects (certify's phases) the test runs in. */
  projects?: string[];
  annotations: { type: string; description?: string }[];
}

export const ID_PATTERN = /^[A-Z]+-\d{2}$/;
const FIELDS = new Set(['id', 'section', 'quote', 'level', 'source', 'decision', 'excluded', 'experimental']);

/** The ledger's top-level keys: the spec it quotes (with its digest) and the requirements. */
const TOP_LEVEL = new Set(['spec', 'requirements']);

/** The ledger's `spec:` record: the file its `spec` quotes come from and that file's SHA-256 (hex). */
export interface LedgerSpec {
  file: string;
  sha256: string;
}

/** Parses the ledger text; shape problems are returned by `checkLedger`, not thrown. */
export function parseLedger(text: string): unknown[] {
  const doc = parseYaml(text) as { requirements?: unknown } | null;
  if (!doc || !Array.isArray(doc.requirements)) throw new Error('the ledger has no `requirements:` list');
  const unknown = Object.keys(doc).filter((k) => !TOP_LEVEL.has(k));
  if (unknown.length)
    throw new Error(`the ledger has unknown top-level key(s): ${unknown.join(', ')} (allowed: ${[...TOP_LEVEL].join(', ')})`);
  return doc.requirements;
}

/** The ledger's `spec:` record; throws when it is missing or malformed (a file name and a 64-hex-digit sha256). */
export function ledgerSpec(text: string): LedgerSpec {
  const spec = (parseYaml(text) as { spec?: unknown } | null)?.spec as Record<string, unknown> | undefined;
  if (!spec || typeof spec !== 'object') throw new Error('the ledger has no `spec:` record (file and sha256 of the spec it quotes)');
  const { file, sha256 } = spec;
  if (typeof file !== 'string' || !file.trim()) throw new Error("the ledger's spec.file is not a file name");
  if (typeof sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(sha256))
    throw new Error(`the ledger's spec.sha256 is not 64 lowercase hex digits: ${JSON.stringify(sha256)}`);
  const extra = Object.keys(spec).filter((k) => k !== 'file' && k !== 'sha256');
  if (extra.length) throw new Error(`the ledger's spec record has unknown field(s): ${extra.join(', ')}`);
  return { file, sha256 };
}

/** Problems of the ledger itself: ids (format, uniqueness), required fields, levels, sources, unknown fields. */
export function checkLedger(entries: readonly unknown[]): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  entries.forEach((raw, i) => {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      problems.push(`entry ${i}: not a mapping`);
      return;
    }
    const e = raw as Record<string, unknown>;
    const where = typeof e.id === 'string' ? e.id : `entry ${i}`;
    if (typeof e.id !== 'string' || !ID_PATTERN.test(e.id)) problems.push(`${where}: id ${JSON.stringify(e.id)} is not AREA-NN`);
    else if (seen.has(e.id)) problems.push(`${where}: duplicate id`);
    else seen.add(e.id);
    for (const f of ['section', 'quote'] as const) {
      if (typeof e[f] !== 'string' || !(e[f] as string).trim()) problems.push(`${where}: ${f} missing or empty`);
    }
    if (!LEVELS.includes(e.level as Level)) problems.push(`${where}: level ${JSON.stringify(e.level)} is not must, should or may`);
    if (e.source !== undefined && !SOURCES.includes(e.source as Source))
      problems.push(`${where}: source ${JSON.stringify(e.source)} is not ${SOURCES.join(', ')}`);
    for (const f of ['decision', 'excluded'] as const) {
      if (e[f] !== undefined && (typeof e[f] !== 'string' || !(e[f] as string).trim()))
        problems.push(`${where}: ${f} must be a non-empty reason`);
    }
    if (e.experimental !== undefined && typeof e.experimental !== 'boolean') problems.push(`${where}: experimental must be true or false`);
    for (const key of Object.keys(e)) if (!FIELDS.has(key)) problems.push(`${where}: unknown field ${key}`);
  });
  return problems;
}

/** The entries of a ledger text; throws listing every problem of `checkLedger`. */
export function requirementsOf(text: string): Requirement[] {
  const entries = parseLedger(text);
  const problems = checkLedger(entries);
  if (problems.length) throw new Error(`the ledger is invalid: ${problems.join('; ')}`);
  return entries as Requirement[];
}

function shortTitle(text: string, max = 120): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}

/** A ledger entry in the shape of the verdict. */
export function toLedgerRequirement(r: Requirement): LedgerRequirement {
  const out: LedgerRequirement = { id: r.id, section: r.section, title: shortTitle(r.quote), level: r.level, source: r.source ?? 'spec' };
  if (r.excluded !== undefined) out.excluded = r.excluded.trim();
  if (r.experimental) out.experimental = true;
  return out;
}

/** Reads and checks the ledger file (default `suites/requirements.yaml`); throws on any problem. */
export function loadLedger(file: string = LEDGER_FILE): LedgerRequirement[] {
  return requirementsOf(fs.readFileSync(file, 'utf8')).map(toLedgerRequirement);
}

/** Collapses runs of whitespace (a quote may be wrapped differently from its source). */
export const normaliseSpace = (s: string): string => s.replace(/\s+/g, ' ').trim();

/**
 * Quotes of `spec` (default) and `rules` entries that are not verbatim in their source text,
 * whitespace-normalised: `{ id, source }` per quote not found.
 */
export function quotesNotVerbatim(
  entries: readonly Requirement[],
  sources: Partial<Record<'spec' | 'rules', string>>,
): { id: string; source: Source }[] {
  const texts = Object.fromEntries(Object.entries(sources).map(([k, v]) => [k, normaliseSpace(v ?? '')]));
  return entries
    .filter((e) => (e.source ?? 'spec') === 'spec' || e.source === 'rules')
    .filter((e) => !texts[e.source ?? 'spec']?.includes(normaliseSpace(e.quote)))
    .map((e) => ({ id: e.id, source: e.source ?? 'spec' }));
}

export { titleId };

/** Every problem of the ledger and of its sync with `tests`, both ways; empty when in sync. */
export function checkLedgerSync(entries: readonly unknown[], tests: readonly ListedTest[]): string[] {
  const problems = checkLedger(entries);
  const byId = new Map<string, Record<string, unknown>>();
  for (const e of entries) {
    if (e && typeof e === 'object' && typeof (e as Record<string, unknown>).id === 'string') {
      byId.set((e as Record<string, string>).id, e as Record<string, unknown>);
    }
  }
  const covered = new Set<string>();
  for (const t of tests) {
    const where = `test "${t.title}"${t.file ? ` (${t.file})` : ''}`;
    const id = titleId(t.title);
    if (!id) problems.push(`${where}: title does not start with a requirement id`);
    else if (!byId.has(id)) problems.push(`${where}: ${id} is not in the ledger`);
    else if (byId.get(id)!.excluded !== undefined) problems.push(`${where}: ${id} is excluded in the ledger, yet tested`);
    else covered.add(id);
    for (const rid of requirementIds(t).slice(id ? 1 : 0)) {
      if (!byId.has(rid)) problems.push(`${where}: requirement annotation ${JSON.stringify(rid)} is not in the ledger`);
      else if (byId.get(rid)!.excluded !== undefined) problems.push(`${where}: requirement annotation ${rid} is excluded in the ledger`);
    }
  }
  for (const [id, e] of byId) {
    if (e.excluded === undefined && !covered.has(id))
      problems.push(`${id}: no test title starts with it (add a test or an excluded: reason)`);
  }
  return problems;
}

/** Flattens the JSON of `playwright test --list --reporter=json` into tests (one per spec, with its projects). */
export function listedTests(report: unknown): ListedTest[] {
  const out: ListedTest[] = [];
  type Spec = { title: string; line?: number; tests?: { projectName?: string; annotations?: ListedTest['annotations'] }[] };
  // The one walker of Playwright's JSON report (core/playwright-report.ts).
  for (const { spec: raw, file } of specsOf(report)) {
    const spec = raw as Spec;
    const annotations = spec.tests?.[0]?.annotations ?? [];
    const projects = [...new Set((spec.tests ?? []).map((t) => t.projectName).filter((p): p is string => !!p))];
    out.push({ title: spec.title, file, ...(spec.line ? { line: spec.line } : {}), projects, annotations });
  }
  return out;
}

/** The projects of a listing, in the config's order. */
export function projectsOf(report: unknown): string[] {
  return ((report as { config?: { projects?: { name: string }[] } }).config?.projects ?? []).map((p) => p.name);
}

/**
 * The phase (Playwright project) of each requirement, derived from where its tests live: every
 * project that runs a test whose title starts with the id or names it in a `requirement`
 * annotation, in the config's project order.
 */
export function phasesByRequirement(tests: readonly ListedTest[], projectOrder: readonly string[] = []): Map<string, string[]> {
  const sets = new Map<string, Set<string>>();
  for (const t of tests) {
    for (const id of requirementIds(t)) {
      const set = sets.get(id) ?? new Set<string>();
      for (const p of t.projects ?? []) set.add(p);
      sets.set(id, set);
    }
  }
  const rank = (p: string) => (projectOrder.includes(p) ? projectOrder.indexOf(p) : projectOrder.length);
  return new Map([...sets].map(([id, s]) => [id, [...s].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))]));
}

/** What `listSuites` returns: the tests, the projects in config order and the listing's errors. */
export interface SuitesListing {
  tests: ListedTest[];
  projects: string[];
  errors: unknown[];
}

/**
 * Lists the conformance suites without running them (`playwright test --list --reporter=json` on
 * the root `playwright.config.ts`, or `configFile`). Takes a few seconds; callers keep the result.
 * With `SUITES_LISTING_CACHE` (a file; the project's own test run sets it, for its processes) the
 * default listing is read from that file once one process has written it.
 */
export function listSuites(configFile = 'playwright.config.ts', env: Record<string, string | undefined> = process.env): SuitesListing {
  const cache = configFile === 'playwright.config.ts' && env === process.env ? env.SUITES_LISTING_CACHE : undefined;
  if (cache && fs.existsSync(cache)) return JSON.parse(fs.readFileSync(cache, 'utf8')) as SuitesListing;
  const listing = runListing(configFile, env);
  if (cache && !listing.errors.length) {
    // Written whole, then renamed: a process reading at the same time sees no file or all of it.
    fs.writeFileSync(`${cache}.${process.pid}`, JSON.stringify(listing));
    fs.renameSync(`${cache}.${process.pid}`, cache);
  }
  return listing;
}

/** `playwright test --list --reporter=json` of `configFile`, parsed. */
function runListing(configFile: string, env: Record<string, string | undefined>): SuitesListing {
  let out: string;
  try {
    out = execFileSync(
      process.execPath,
      [path.join(REPO_ROOT, 'node_modules', '@playwright', 'test', 'cli.js'), 'test', '--list', '--reporter=json', '-c', configFile],
      {
        cwd: REPO_ROOT,
        encoding: 'utf8',
        env: playwrightEnv(env, { REPORTS_DIR: path.join(REPO_ROOT, 'test-results', 'suites-list') }),
        maxBuffer: 64 * 1024 * 1024,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
  } catch (error) {
    // A suite that does not load makes the listing exit non-zero; its JSON still names the error.
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    if (!stdout?.includes('{')) throw new Error(`playwright test --list failed: ${(stderr ?? String(error)).slice(-2000)}`);
    out = stdout;
  }
  const report = JSON.parse(out.slice(out.indexOf('{'))) as { errors?: unknown[] };
  return { tests: listedTests(report), projects: projectsOf(report), errors: report.errors ?? [] };
}
