/**
 * Reading Playwright's JSON report (`results.json` of the merged phases, or the `--list` output of
 * the phases a profile leaves out) into the verdict's `TestRecord`s. `specsOf` is the one walker of
 * that report in the harness.
 */
import type { Annotation, Outcome, TestRecord } from './results.ts';
import { ANNOTATION, harnessStopReason } from './results.ts';

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
  if (
    matcher > 0 &&
    lines
      .slice(0, matcher)
      .join('')
      .replace(/^Error:\s*/, '')
      .trim()
  ) {
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
  const list: Json[] = fromResult?.length ? fromResult : (test.annotations ?? []);
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

/** One spec of a Playwright JSON report, with the file of the suite that holds it. */
export interface ReportSpec {
  spec: Json;
  file?: string;
}

/**
 * The one walker of Playwright's JSON report (`--reporter=json`, of a run or of `--list`): every
 * spec, depth first, in report order. Everything that reads that report walks it through here.
 */
export function specsOf(report: Json): ReportSpec[] {
  const out: ReportSpec[] = [];
  const walk = (suite: Json) => {
    for (const spec of (suite.specs ?? []) as Json[]) out.push({ spec, file: spec.file ?? suite.file });
    for (const child of (suite.suites ?? []) as Json[]) walk(child);
  };
  for (const suite of (report?.suites ?? []) as Json[]) walk(suite);
  return out;
}

/**
 * The reasons of a failed test's last attempt when every error of it is a stop of the harness
 * (core/results.ts `harnessStopReason`), else undefined: the one place where a check stopped by a
 * limit of the run, in its body or in a fixture (a worker-scoped sequence), becomes not certified.
 */
function harnessStopsOf(test: Json): string[] | undefined {
  const results: Json[] = test.results ?? [];
  const last = results[results.length - 1];
  if (!last || (last.status !== 'failed' && last.status !== 'timedOut')) return undefined;
  const errs: Json[] = last.errors?.length ? last.errors : last.error ? [last.error] : [];
  const reasons = errs.map((e) => harnessStopReason(String(e.message ?? e.value ?? '').replace(ANSI, '')));
  if (!reasons.length || reasons.some((r) => r === undefined)) return undefined;
  return [...new Set(reasons as string[])];
}

/** A failed test that a limit of the run stopped, as a not-certified record with the reasons. */
function asStopped(t: TestRecord, reasons: readonly string[]): TestRecord {
  return {
    ...t,
    outcome: 'skipped',
    errors: [],
    annotations: [...t.annotations, ...reasons.map((description) => ({ type: ANNOTATION.notCertified, description }))],
  };
}

/** Flattens a Playwright JSON report (`results.json`) into test records: one per spec and project. */
export function testsFromJsonReport(report: Json): TestRecord[] {
  const out: TestRecord[] = [];
  for (const { spec, file } of specsOf(report)) {
    for (const test of (spec.tests ?? []) as Json[]) {
      const stops = test.status === 'unexpected' ? harnessStopsOf(test) : undefined;
      const push = (r: TestRecord) => out.push(stops ? asStopped(r, stops) : r);
      push({
        title: String(spec.title),
        project: String(test.projectName ?? ''),
        file,
        tags: ((spec.tags ?? []) as string[]).map((t) => (t.startsWith('@') ? t : `@${t}`)),
        outcome: outcomeOf(test),
        errors: errorsOf(test),
        annotations: annotationsOf(test),
        requests: requestsOf(test),
      });
    }
  }
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
    annotations: [
      ...t.annotations.filter((a) => a.type === ANNOTATION.requirement),
      { type: ANNOTATION.notCertified, description: reason },
    ],
  };
}
