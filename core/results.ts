/**
 * What a run's results are made of, shared by the suites (which write them as annotations), the
 * verdict, the gate and every report: outcomes, statuses, annotation kinds, the one rule that says
 * which requirement ids a test evidences, and typed run problems. Pure: no I/O.
 */

import type { Finding } from './finding.ts';

export type RequirementStatus = 'pass' | 'fail' | 'warn' | 'skipped';
export type Outcome = 'passed' | 'failed' | 'flaky' | 'skipped' | 'interrupted';

/** The annotation kinds a suite test writes (`test.info().annotations`); each is described in docs/architecture.md, "Annotations". */
export const ANNOTATION = {
  requirement: 'requirement',
  notCertified: 'not-certified',
  warning: 'warning',
  evidence: 'evidence',
  metFinding: 'met-finding',
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
  /** Not listed before a state-changing request on it, listed after: the request created it (an upsert). */
  created?: boolean;
  /** What to do by hand, in plain words (run level). */
  action?: string;
}

/**
 * Every `unrestored` record among a test's annotations, the one reader of the annotation: one that
 * is not JSON or lacks its pet or original count is skipped; ids and counts are read as text.
 */
export function unrestoredOf(annotations: readonly Annotation[]): Unrestored[] {
  const out: Unrestored[] = [];
  for (const a of annotations) {
    if (a.type !== ANNOTATION.unrestored || !a.description) continue;
    let v: Partial<Record<keyof Unrestored, unknown>> | undefined;
    try {
      v = JSON.parse(a.description) as Partial<Record<keyof Unrestored, unknown>>;
    } catch {
      continue;
    }
    if (v?.petId === undefined || v.original === undefined) continue;
    out.push({
      petId: String(v.petId),
      original: String(v.original),
      current: v.current === null || v.current === undefined ? null : String(v.current),
    });
  }
  return out;
}

export interface RecordedHeader {
  name: string;
  value: string;
}

/**
 * One HTTP exchange as recorded (the `exchange` annotation, JSON): the request and the response
 * with their headers and bodies, every key already replaced by its placeholder (`<API_KEY>`).
 * core/transport.ts writes it; `reports/evidence.har` and a failure's curl line are built from it.
 */
export interface RecordedExchange {
  /** ISO 8601 time the request was sent. */
  startedDateTime: string;
  /** Milliseconds from sending to the whole response read. */
  timeMs: number;
  request: { method: string; url: string; headers: RecordedHeader[]; body?: string };
  response: { status: number; statusText: string; headers: RecordedHeader[]; body: string; bodyTruncated?: boolean };
}

/** Bodies longer than this are cut in the record (the HAR says so in a comment). */
export const MAX_RECORDED_BODY = 64 * 1024;

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
  /** What the last attempt found, typed (its `finding` attachments): requirement, expected, observed, curl. */
  findings?: Finding[];
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
  pets?: Unrestored[];
}

const HARNESS_KINDS: ReadonlySet<RunProblemKind> = new Set(['run-error', 'secret-in-artifact', 'unmapped-failure']);

/** True when the problem is the harness's own (the run could not judge), not the target's. */
export function isHarnessProblem(p: RunProblem): boolean {
  return HARNESS_KINDS.has(p.kind);
}

/**
 * The names of the errors a check throws when a limit of the run stops it (a Retry-After beyond
 * MAX_RETRY_AFTER_S, a key closed after a ban, a budget, the run's pacer out of reach): never the
 * server's failure. Playwright keeps only an error's text, which starts with its name
 * (`NotCertified: not certified: …`); an error a check builds from what a server sent starts
 * with `Error: `, so no server can write one of these.
 */
export const HARNESS_STOP_ERRORS = ['NotCertified', 'PacingNotCertified', 'PacerUnreachable'] as const;

/** Why a check sent nothing more when the run's pacer was out of reach (`detail`: what the call met). */
export const pacerUnreachableReason = (detail: string): string =>
  `the run's pacer could not be reached, so nothing more was sent (${detail})`;

/** The reason of a failure message that is a stop of the harness (`HARNESS_STOP_ERRORS`), else undefined. */
export function harnessStopReason(message: string): string | undefined {
  const m = /^(NotCertified|PacingNotCertified|PacerUnreachable): (?:not certified: )?([^\n]*)/.exec(message);
  if (!m || !(HARNESS_STOP_ERRORS as readonly string[]).includes(m[1]!)) return undefined;
  return m[1] === 'PacerUnreachable' ? pacerUnreachableReason(m[2]!) : m[2]!;
}
