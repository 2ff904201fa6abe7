/**
 * What a run's results are made of, shared by the suites (which write them as annotations), the
 * verdict, the gate and every report: outcomes, statuses, annotation kinds, the one rule that says
 * which requirement ids a test evidences, and typed run problems. Pure: no I/O.
 */

export type RequirementStatus = 'pass' | 'fail' | 'warn' | 'skipped';
export type Outcome = 'passed' | 'failed' | 'flaky' | 'skipped' | 'interrupted';

/**
 * The annotation kinds a suite test writes (Playwright `test.info().annotations`):
 * - `requirement`: a further ledger id the test evidences (one id, or several separated by commas);
 * - `not-certified`: the reason the test could not judge (a limit of the harness or the profile);
 * - `warning`: a should-level deviation, or a choice the spec leaves open, seen;
 * - `evidence`: one redacted exchange line;
 * - `finding`: one typed `Finding` as JSON;
 * - `unrestored`: one `Unrestored` as JSON: a pet the test changed and could not put back;
 * - `requests`: how many requests the test sent;
 * - `exchange`: one redacted HTTP exchange as JSON (suites/lib/exchange.ts), for reports/evidence.har.
 */
export const ANNOTATION = {
  requirement: 'requirement',
  notCertified: 'not-certified',
  warning: 'warning',
  evidence: 'evidence',
  finding: 'finding',
  unrestored: 'unrestored',
  requests: 'requests',
  exchange: 'exchange',
} as const;
export type AnnotationKind = (typeof ANNOTATION)[keyof typeof ANNOTATION];

export interface Annotation {
  type: string;
  description?: string;
}

/** A pet a test changed and could not restore, or could not verify as restored (spec, Inventory: updateInventory sets the quantity). */
export interface Unrestored {
  /** The pet id, exact (int64 as decimal digits). */
  petId: string;
  /** The count as the run first read it (exact text, e.g. `5`). */
  original: string;
  /** The count read last (exact text), or null when the pet was missing from the list. */
  current: string | null;
}

/** Every `unrestored` record among a test's annotations. */
export function unrestoredOf(annotations: readonly Annotation[]): Unrestored[] {
  return annotations.filter((a) => a.type === ANNOTATION.unrestored && a.description).map((a) => JSON.parse(a.description!) as Unrestored);
}

/** One test of one project, normalised from Playwright's JSON report. */
export interface TestRecord {
  title: string;
  project: string;
  file?: string;
  tags: string[];
  outcome: Outcome;
  /** Failure messages (ANSI stripped, code frames cut). */
  errors: string[];
  /** Annotations of the final attempt (`warning`, `evidence`, `requirement`, `not-certified`, …). */
  annotations: Annotation[];
  /** Sum of `requests` annotations over every attempt. */
  requests: number;
}

/**
 * The id a test title starts with (`AUTH-02 invalid key …` or `HTTP-01: Date …` → the id), or
 * undefined. The one rule for reading an id from a title.
 */
export function titleId(title: string): string | undefined {
  return /^([A-Z]+-\d{2})(?=[\s:]|$)/.exec(title.trim())?.[1];
}

/**
 * Every ledger id a test evidences: its title's id, then the ids of its `requirement`
 * annotations (each may list several, separated by commas or spaces). The one rule: the verdict,
 * the ledger's sync check, the phase map and the coverage listing all use it.
 */
export function requirementIds(test: { title: string; annotations: readonly Annotation[] }): string[] {
  const ids: string[] = [];
  const primary = titleId(test.title);
  if (primary) ids.push(primary);
  for (const a of test.annotations) {
    if (a.type !== ANNOTATION.requirement || !a.description) continue;
    for (const id of a.description.split(/[\s,]+/).filter(Boolean)) if (!ids.includes(id)) ids.push(id);
  }
  return ids;
}

/**
 * What went wrong at run level, beside failed requirements. `harness` kinds are the harness's own
 * trouble (the run could not judge); the others are the target's.
 */
export type RunProblemKind =
  /** A phase timed out, crashed or ended without a report; an internal error (harness). */
  | 'run-error'
  /** A key was found in a file the run wrote (harness). */
  | 'secret-in-artifact'
  /** A failing test names no ledger requirement, or one the ledger does not have (harness). */
  | 'unmapped-failure'
  /** The run could not restore what it changed on the target (the target's). */
  | 'target-left-changed';

export interface RunProblem {
  kind: RunProblemKind;
  /** One line in plain words, never a key. */
  reason: string;
  /** The requirement it concerns, when there is one. */
  id?: string;
  expected?: string;
  observed?: string;
  /** `target-left-changed`: each pet the run could not put back, its original and its current count (exact JSON text; null: missing from the list). */
  pets?: LeftChangedPet[];
}

/** A pet the run changed and could not restore. */
export interface LeftChangedPet {
  petId: string;
  /** The count as first read; `not listed` for a pet the run created. */
  original: string;
  current: string | null;
  /** Not listed before a state-changing request on it, listed after: the request created it (an upsert). */
  created?: boolean;
  /** What to do by hand, in plain words. */
  action?: string;
}

const HARNESS_KINDS: ReadonlySet<RunProblemKind> = new Set(['run-error', 'secret-in-artifact', 'unmapped-failure']);

/** True when the problem is the harness's own (the run could not judge), not the target's. */
export function isHarnessProblem(p: RunProblem): boolean {
  return HARNESS_KINDS.has(p.kind);
}
