/**
 * A baseline of known failures (`--baseline file`): only failures it does not list fail the gate; run problems are
 * never baselined (docs/vendor-guide.md, "Mid-migration"). Pure: the caller reads the file (`parseBaseline`).
 */
import YAML from 'yaml';
import { ID_PATTERN, type Level } from '../core/ledger.ts';
import type { Outcome, RequirementStatus } from '../core/results.ts';

/** What the baseline reads of one requirement of a conformance report. */
export interface BaselineRequirement {
  id: string;
  title: string;
  level: Level;
  status: RequirementStatus;
  reason?: string;
  evidence: readonly { test: string; outcome: Outcome }[];
}

/** What the baseline reads of a conformance report. */
export interface BaselineReport {
  requirements: readonly BaselineRequirement[];
  problems: readonly unknown[];
  generatedAt?: string;
}

/** One known failure: a requirement id, optionally narrowed to the test titles known to fail. */
export interface BaselineEntry {
  id: string;
  /** Why it is accepted for now (a ticket, a release); shown in the report. */
  reason?: string;
  /** Only these tests are known to fail; another failing test of the requirement is a new failure. */
  tests?: string[];
}

export interface Baseline {
  knownFailures: BaselineEntry[];
}

export interface KnownFailure {
  id: string;
  title: string;
  level: Level;
  reason?: string;
  /** The failing tests of the requirement (all listed in the baseline entry, or it has no `tests`). */
  failingTests: string[];
}

export interface BaselineOutcome {
  /** Failures the baseline does not list: these fail the gate. */
  newFailures: { id: string; title: string; level: Level; failingTests: string[]; why: string }[];
  /** Failures the baseline lists: reported apart, they do not fail the gate. */
  known: KnownFailure[];
  /** Baseline entries whose requirement now passes (or warns): remove them from the baseline. */
  fixed: { id: string; title: string; status: RequirementStatus; reason?: string }[];
  /** Baseline entries this run could not judge (skipped, not certified, or not in the ledger). */
  unjudged: { id: string; why: string }[];
  /** True when the baseline leaves no failed requirement and the run had no problem. */
  passes: boolean;
}

/** A requirement id: the ledger's one rule (AREA-NN). */
const ID = ID_PATTERN;

/**
 * Parses a baseline (YAML or JSON): `knownFailures:` as a list of ids or of `{ id, reason?, tests? }`,
 * or such a list at the top level. Throws an Error naming every problem.
 */
export function parseBaseline(text: string): Baseline {
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (error) {
    throw new Error(`baseline: not valid YAML or JSON: ${(error as Error).message.split('\n')[0]}`);
  }
  const list = Array.isArray(doc) ? doc : (doc as { knownFailures?: unknown } | null)?.knownFailures;
  if (!Array.isArray(list)) throw new Error('baseline: expected `knownFailures:` with a list of requirement ids');
  const problems: string[] = [];
  const seen = new Set<string>();
  const knownFailures: BaselineEntry[] = [];
  list.forEach((raw, i) => {
    const entry = typeof raw === 'string' ? { id: raw } : (raw as Record<string, unknown> | null);
    if (!entry || typeof entry !== 'object') return void problems.push(`entry ${i + 1}: expected an id or { id, reason, tests }`);
    const { id, reason, tests, ...rest } = entry as Record<string, unknown>;
    if (typeof id !== 'string' || !ID.test(id))
      return void problems.push(`entry ${i + 1}: id ${JSON.stringify(id)} is not a requirement id (e.g. UPD-06)`);
    if (seen.has(id)) return void problems.push(`${id}: listed twice`);
    seen.add(id);
    const unknown = Object.keys(rest);
    if (unknown.length) problems.push(`${id}: unknown field(s) ${unknown.join(', ')} (allowed: id, reason, tests)`);
    if (reason !== undefined && typeof reason !== 'string') problems.push(`${id}: reason must be a string`);
    if (tests !== undefined && !(Array.isArray(tests) && tests.every((t) => typeof t === 'string') && tests.length)) {
      problems.push(`${id}: tests must be a non-empty list of test titles`);
    }
    knownFailures.push({
      id,
      ...(typeof reason === 'string' ? { reason } : {}),
      ...(Array.isArray(tests) ? { tests: tests as string[] } : {}),
    });
  });
  if (problems.length) throw new Error(`baseline: ${problems.join('; ')}`);
  return { knownFailures };
}

function failingTests(r: BaselineRequirement): string[] {
  return r.evidence.filter((e) => e.outcome === 'failed' || e.outcome === 'flaky' || e.outcome === 'interrupted').map((e) => e.test);
}

/** Splits the report's failed requirements into known (in the baseline) and new ones. */
export function applyBaseline(report: BaselineReport, baseline: Baseline): BaselineOutcome {
  const entries = new Map(baseline.knownFailures.map((e) => [e.id, e]));
  const out: BaselineOutcome = { newFailures: [], known: [], fixed: [], unjudged: [], passes: false };
  for (const r of report.requirements) {
    const entry = entries.get(r.id);
    if (r.status === 'fail') {
      const tests = failingTests(r);
      if (!entry) {
        out.newFailures.push({ id: r.id, title: r.title, level: r.level, failingTests: tests, why: 'not in the baseline' });
        continue;
      }
      const unlisted = entry.tests ? tests.filter((t) => !entry.tests!.includes(t)) : [];
      if (unlisted.length) {
        out.newFailures.push({
          id: r.id,
          title: r.title,
          level: r.level,
          failingTests: unlisted,
          why: 'the baseline lists other tests of it',
        });
        continue;
      }
      // A requirement failing for want of any result (no tests) is known too, if listed.
      out.known.push({ id: r.id, title: r.title, level: r.level, ...(entry.reason ? { reason: entry.reason } : {}), failingTests: tests });
    } else if (entry) {
      if (r.status === 'pass' || r.status === 'warn') {
        out.fixed.push({ id: r.id, title: r.title, status: r.status, ...(entry.reason ? { reason: entry.reason } : {}) });
      } else {
        out.unjudged.push({ id: r.id, why: r.reason ?? 'skipped by this run' });
      }
    }
  }
  const inReport = new Set(report.requirements.map((r) => r.id));
  for (const e of baseline.knownFailures) if (!inReport.has(e.id)) out.unjudged.push({ id: e.id, why: 'not in the requirements ledger' });
  out.passes = out.newFailures.length === 0 && report.problems.length === 0;
  return out;
}

/** A baseline listing every failed requirement of the report (`--write-baseline`), as YAML text. */
export function baselineFromReport(report: BaselineReport, reason = `failed on ${report.generatedAt ?? 'the last run'}`): string {
  const failures = report.requirements.filter((r) => r.status === 'fail');
  const doc = {
    knownFailures: failures.map((r) => {
      const tests = failingTests(r);
      return { id: r.id, reason, ...(tests.length ? { tests } : {}) };
    }),
  };
  const header =
    '# Known failures of this deployment (inventory-conformance --baseline).\n' +
    '# Only failures not listed here fail the gate. Remove an entry when the report says it is fixed.\n';
  return header + YAML.stringify(doc);
}
