/**
 * The certification verdict: from the requirements ledger and the merged test results to a status
 * per requirement and one verdict for the run. Pure: no file system, no clock (the caller passes
 * `generatedAt`), no environment.
 *
 * Rules (see reports/README.md):
 * - `pass`: every test evidencing the requirement passed and none wrote a `warning` annotation;
 * - `warn`: the tests passed with `warning` annotations, or a should/may-level test failed
 *   (or a should/may-level requirement has no result);
 * - `fail`: a must-level test failed (also: failed on a first attempt, timed out, was interrupted,
 *   or skipped itself without a profile reason), or a must-level requirement that is neither
 *   excluded nor left out by the profile has no test result at all;
 * - `skipped`: left out by the chosen profile (`not-certified` annotation) or `excluded` in the ledger.
 * The verdict is `pass` iff no requirement failed and the run had no problem (a run error, a
 * failed test mapped to no requirement, or a secret found in an artifact).
 */

import { titleId } from '../suites/lib/ledger.ts';

export type Level = 'must' | 'should' | 'may';
export type RequirementStatus = 'pass' | 'fail' | 'warn' | 'skipped';
export type Outcome = 'passed' | 'failed' | 'flaky' | 'skipped' | 'interrupted';

export interface LedgerRequirement {
  id: string;
  /** Spec section, e.g. `Authentication` or `Endpoints > 2. Update stock level`. */
  section: string;
  /** Short title; falls back to the quoted text. */
  title: string;
  level: Level;
  /** Reason the requirement cannot be observed from outside (ledger `excluded:`). */
  excluded?: string;
  /** The requirement is about an operation marked experimental (or beta) in the spec. */
  experimental?: boolean;
}

export interface Annotation {
  type: string;
  description?: string;
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

export interface EvidenceEntry {
  test: string;
  project: string;
  outcome: Outcome;
  errors?: string[];
  warnings?: string[];
  evidence?: string[];
  notCertified?: string;
  requests?: number;
}

export interface RequirementResult {
  id: string;
  title: string;
  level: Level;
  status: RequirementStatus;
  section: string;
  experimental?: boolean;
  /** Why the status is what it is when the tests alone do not say it (no result, excluded, profile). */
  reason?: string;
  evidence: EvidenceEntry[];
}

export interface NotCertified {
  id: string;
  title: string;
  level: Level;
  reason: string;
  /** Some tests of the requirement ran; others were left out by the profile. */
  partial: boolean;
}

/** How a phase went (for the report; the verdict reads the tests, not this). */
export interface PhaseSummary {
  name: string;
  ran: boolean;
  seconds?: number;
  /** Playwright's exit code, or the signal that ended it. */
  exit?: number | string | null;
  /** Why it did not run (profile). */
  reason?: string;
}

export interface VerdictInput {
  ledger: LedgerRequirement[];
  tests: TestRecord[];
  profile: string;
  target: unknown;
  generatedAt: string;
  /** Errors of the run outside any test (global errors, crashed phases, merge failures). */
  runErrors?: string[];
  /** Secret scan findings, already described without the key (e.g. `reports/x.json: API_KEY (raw)`). */
  secretFindings?: string[];
  phases?: PhaseSummary[];
}

export interface ConformanceReport {
  verdict: 'pass' | 'fail';
  target: unknown;
  profile: string;
  requests: number;
  /** Requests per Playwright project (phase). */
  requestsByPhase: Record<string, number>;
  phases: PhaseSummary[];
  generatedAt: string;
  summary: Record<RequirementStatus, number>;
  /** Run-level reasons for a failing verdict, beside failed requirements. */
  problems: string[];
  notCertified: NotCertified[];
  experimental: string[];
  /** Tests whose title names no ledger requirement. */
  unmapped: { test: string; project: string; outcome: Outcome }[];
  requirements: RequirementResult[];
}

/** `AUTH-02 invalid key yields 401` → `AUTH-02`: the ledger's one title-id rule (suites/lib/ledger.ts). */
export const primaryId = titleId;

/** Every ledger id a test evidences: its title prefix, then `requirement` annotations. */
export function requirementIds(test: TestRecord): string[] {
  const ids: string[] = [];
  const primary = primaryId(test.title);
  if (primary) ids.push(primary);
  for (const a of test.annotations) {
    if (a.type !== 'requirement' || !a.description) continue;
    for (const id of a.description.split(/[\s,]+/).filter(Boolean)) if (!ids.includes(id)) ids.push(id);
  }
  return ids;
}

function descriptions(test: TestRecord, type: string): string[] {
  return test.annotations.filter((a) => a.type === type).map((a) => a.description ?? '').filter((d) => d !== '');
}

function notCertifiedReason(test: TestRecord): string | undefined {
  const reasons = descriptions(test, 'not-certified').map((d) => d.replace(/^not certified:\s*/i, ''));
  if (reasons.length) return reasons.join('; ');
  return test.annotations.some((a) => a.type === 'not-certified') ? 'left out by the profile' : undefined;
}

function toEvidence(test: TestRecord): EvidenceEntry {
  const entry: EvidenceEntry = { test: test.title, project: test.project, outcome: test.outcome };
  if (test.errors.length) entry.errors = test.errors;
  const warnings = descriptions(test, 'warning');
  if (warnings.length) entry.warnings = warnings;
  const evidence = descriptions(test, 'evidence');
  if (evidence.length) entry.evidence = evidence;
  const nc = notCertifiedReason(test);
  if (test.outcome === 'skipped' && nc) entry.notCertified = nc;
  if (test.requests) entry.requests = test.requests;
  return entry;
}

const FAILED: Outcome[] = ['failed', 'flaky', 'interrupted'];

/** Status of one requirement from the tests that evidence it. */
export function requirementStatus(
  req: LedgerRequirement,
  tests: TestRecord[],
): { status: RequirementStatus; reason?: string; notCertified?: NotCertified } {
  const failing = req.level === 'must' ? 'fail' : 'warn';
  if (req.excluded) return { status: 'skipped', reason: `excluded: ${req.excluded}` };

  const ran = tests.filter((t) => t.outcome !== 'skipped');
  const skipped = tests.filter((t) => t.outcome === 'skipped');
  const byProfile = skipped.filter((t) => notCertifiedReason(t) !== undefined);
  const unexplained = skipped.filter((t) => notCertifiedReason(t) === undefined);
  const profileReasons = [...new Set(byProfile.map((t) => notCertifiedReason(t)!))].join('; ');
  const notCertified = byProfile.length
    ? { id: req.id, title: req.title, level: req.level, reason: profileReasons, partial: ran.length > 0 || unexplained.length > 0 }
    : undefined;

  const failed = ran.filter((t) => FAILED.includes(t.outcome));
  if (failed.length) {
    const how = failed.map((t) => (t.outcome === 'flaky' ? `${t.title} (failed, then passed on retry)` : t.title));
    return { status: failing, reason: `${req.level}-level check failed: ${how.join('; ')}`, notCertified };
  }
  if (unexplained.length) {
    return {
      status: failing,
      reason: `check skipped without a profile reason: ${unexplained.map((t) => t.title).join('; ')}`,
      notCertified,
    };
  }
  if (ran.length) {
    const warned = ran.some((t) => descriptions(t, 'warning').length > 0);
    return { status: warned ? 'warn' : 'pass', notCertified };
  }
  if (notCertified) return { status: 'skipped', reason: `not certified: ${profileReasons}`, notCertified };
  return {
    status: failing,
    reason: `no test result for ${req.level}-level requirement ${req.id}: no test in the run evidences it`,
  };
}

/** Computes the conformance report. */
export function computeVerdict(input: VerdictInput): ConformanceReport {
  const known = new Set(input.ledger.map((r) => r.id));
  const byId = new Map<string, TestRecord[]>();
  const unmapped: ConformanceReport['unmapped'] = [];
  const problems: string[] = [];

  for (const test of input.tests) {
    const ids = requirementIds(test);
    const mapped = ids.filter((id) => known.has(id));
    for (const id of ids) if (!known.has(id)) {
      const msg = `test "${test.title}" [${test.project}] names ${id}, which is not in the ledger`;
      if (FAILED.includes(test.outcome)) problems.push(msg);
    }
    if (mapped.length === 0) {
      unmapped.push({ test: test.title, project: test.project, outcome: test.outcome });
      if (FAILED.includes(test.outcome) && ids.length === 0) {
        problems.push(`test "${test.title}" [${test.project}] failed and names no ledger requirement`);
      }
      continue;
    }
    for (const id of mapped) {
      const list = byId.get(id) ?? [];
      list.push(test);
      byId.set(id, list);
    }
  }

  const requirements: RequirementResult[] = [];
  const notCertified: NotCertified[] = [];
  for (const req of input.ledger) {
    const tests = byId.get(req.id) ?? [];
    const { status, reason, notCertified: nc } = requirementStatus(req, tests);
    const result: RequirementResult = {
      id: req.id,
      title: req.title,
      level: req.level,
      status,
      section: req.section,
      ...(req.experimental ? { experimental: true } : {}),
      ...(reason ? { reason } : {}),
      evidence: tests.map(toEvidence),
    };
    requirements.push(result);
    if (nc) notCertified.push(nc);
  }

  for (const e of input.runErrors ?? []) problems.push(`run error: ${e}`);
  for (const f of input.secretFindings ?? []) problems.push(`secret found in an artifact: ${f}`);

  const summary: Record<RequirementStatus, number> = { pass: 0, fail: 0, warn: 0, skipped: 0 };
  for (const r of requirements) summary[r.status]++;

  return {
    verdict: summary.fail === 0 && problems.length === 0 ? 'pass' : 'fail',
    target: input.target,
    profile: input.profile,
    requests: input.tests.reduce((n, t) => n + t.requests, 0),
    requestsByPhase: input.tests.reduce<Record<string, number>>((acc, t) => {
      if (t.requests) acc[t.project] = (acc[t.project] ?? 0) + t.requests;
      return acc;
    }, {}),
    phases: input.phases ?? [],
    generatedAt: input.generatedAt,
    summary,
    problems,
    notCertified,
    experimental: requirements.filter((r) => r.experimental).map((r) => r.id),
    unmapped,
    requirements,
  };
}

// ---------------------------------------------------------------------------------------------
// Playwright JSON report → TestRecord[]

/* eslint-disable @typescript-eslint/no-explicit-any */
type Json = any;

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;
const CODE_FRAME = /^\s*>?\s*\d+\s\|/;

/**
 * Strips ANSI colours, the source code frame and stack lines Playwright appends to a failure
 * message, and the matcher boilerplate of a boolean check that already carries its own message
 * (`expect(ok, 'AUTH-02: … expected 401, observed 200').toBe(true)`). Diffs are kept.
 */
export function cleanErrorMessage(message: string, maxLength = 4000): string {
  let lines = message.replace(ANSI, '').split('\n');
  const frame = lines.findIndex((l) => CODE_FRAME.test(l));
  if (frame >= 0) lines = lines.slice(0, frame);
  lines = lines.filter((l) => !/^\s*at \S+:\d+(:\d+)?\)?$|^\s*at .+\(.+:\d+:\d+\)$/.test(l));
  const matcher = lines.findIndex((l) => /^expect\(/.test(l));
  if (matcher > 0 && lines.slice(0, matcher).join('').replace(/^Error:\s*/, '').trim()) {
    const rest = lines.slice(matcher).join('\n');
    if (/Expected: (true|false)\s*\nReceived: (true|false)/.test(rest)) lines = lines.slice(0, matcher);
  }
  const kept = lines.join('\n').trim();
  return kept.length > maxLength ? `${kept.slice(0, maxLength)}… (truncated)` : kept;
}

function outcomeOf(test: Json): Outcome {
  const results: Json[] = test.results ?? [];
  const last = results[results.length - 1];
  switch (test.status) {
    case 'expected':
      return 'passed';
    case 'flaky':
      return 'flaky';
    case 'skipped':
      return last?.status === 'interrupted' ? 'interrupted' : 'skipped';
    default:
      return last?.status === 'interrupted' ? 'interrupted' : 'failed';
  }
}

function annotationsOf(test: Json): Annotation[] {
  const results: Json[] = test.results ?? [];
  const last = results[results.length - 1];
  const fromResult: Json[] | undefined = last?.annotations;
  const list: Json[] = fromResult && fromResult.length ? fromResult : (test.annotations ?? []);
  // Static annotations (declared with the test) may be missing from the result's list.
  const all = [...list];
  for (const a of test.annotations ?? []) {
    if (!all.some((b) => b.type === a.type && b.description === a.description)) all.push(a);
  }
  return all.map((a) => ({ type: String(a.type), ...(a.description !== undefined ? { description: String(a.description) } : {}) }));
}

function requestsOf(test: Json): number {
  const results: Json[] = test.results ?? [];
  let total = 0;
  const sources: Json[][] = results.length ? results.map((r) => r.annotations ?? []) : [test.annotations ?? []];
  for (const list of sources) {
    for (const a of list) {
      if (a.type !== 'requests') continue;
      const n = Number.parseInt(String(a.description ?? ''), 10);
      if (Number.isFinite(n) && n > 0) total += n;
    }
  }
  return total;
}

function errorsOf(test: Json): string[] {
  const out: string[] = [];
  for (const r of (test.results ?? []) as Json[]) {
    if (r.status === 'passed' || r.status === 'skipped') continue;
    const errs: Json[] = r.errors?.length ? r.errors : r.error ? [r.error] : [];
    for (const e of errs) {
      const msg = cleanErrorMessage(String(e.message ?? e.value ?? ''));
      if (msg && !out.includes(msg)) out.push(msg);
    }
    if (!errs.length && r.status === 'timedOut') out.push('test timed out');
    if (!errs.length && r.status === 'interrupted') out.push('test was interrupted');
  }
  return out;
}

/** Flattens a Playwright JSON report (`results.json`) into test records. */
export function testsFromJsonReport(report: Json): TestRecord[] {
  const out: TestRecord[] = [];
  const walk = (suite: Json) => {
    for (const spec of (suite.specs ?? []) as Json[]) {
      for (const test of (spec.tests ?? []) as Json[]) {
        out.push({
          title: String(spec.title),
          project: String(test.projectName ?? ''),
          file: spec.file ?? suite.file,
          tags: ((spec.tags ?? []) as string[]).map((t) => (t.startsWith('@') ? t : `@${t}`)),
          outcome: outcomeOf(test),
          errors: errorsOf(test),
          annotations: annotationsOf(test),
          requests: requestsOf(test),
        });
      }
    }
    for (const child of (suite.suites ?? []) as Json[]) walk(child);
  };
  for (const suite of (report?.suites ?? []) as Json[]) walk(suite);
  return out;
}

/** Global errors of a Playwright JSON report (errors outside any test). */
export function runErrorsFromJsonReport(report: Json): string[] {
  return ((report?.errors ?? []) as Json[]).map((e) => cleanErrorMessage(String(e.message ?? e.value ?? e))).filter(Boolean);
}

/**
 * Records for tests of a phase that the profile did not run (from `playwright test --list`):
 * each becomes a skipped test with a `not-certified` annotation giving the reason.
 */
export function notRunTests(listing: Json, reason: string): TestRecord[] {
  return testsFromJsonReport(listing).map((t) => toNotRun(t, reason));
}

/** One listed test as a skipped, not-certified record (keeping its `requirement` annotations). */
export function toNotRun(t: TestRecord, reason: string): TestRecord {
  return {
    ...t,
    outcome: 'skipped',
    errors: [],
    requests: 0,
    annotations: [...t.annotations.filter((a) => a.type === 'requirement'), { type: 'not-certified', description: reason }],
  };
}
