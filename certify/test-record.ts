/**
 * A test as it ended, read from Playwright's reporter objects (`TestCase`, `TestResult`) into the
 * verdict's `TestRecord`: the one place where a run's result becomes data (the run's reporter,
 * certify/phase-reporter.ts, calls it in `onTestEnd`). No report file is read back.
 */
import path from 'node:path';
import type { TestCase, TestError, TestResult } from '@playwright/test/reporter';
import { cleanErrorMessage } from '../core/playwright-report.ts';
import { ANNOTATION, harnessStopReason, type Annotation, type Outcome, type TestRecord } from '../core/results.ts';
import { FINDING_ATTACHMENT, parseFinding, type Finding } from '../core/finding.ts';

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

function outcomeOf(test: TestCase, result: TestResult | undefined): Outcome {
  const interrupted = result?.status === 'interrupted';
  switch (test.outcome()) {
    case 'expected':
      return 'passed';
    case 'flaky':
      return 'flaky';
    case 'skipped':
      return interrupted ? 'interrupted' : 'skipped';
    default:
      return interrupted ? 'interrupted' : 'failed';
  }
}

function errorsOf(result: TestResult | undefined): TestError[] {
  if (!result) return [];
  return result.errors.length ? result.errors : result.error ? [result.error] : [];
}

function messagesOf(result: TestResult | undefined): string[] {
  if (!result || result.status === 'passed' || result.status === 'skipped') return [];
  const out: string[] = [];
  for (const e of errorsOf(result)) {
    const msg = cleanErrorMessage(String(e.message ?? e.value ?? ''));
    if (msg && !out.includes(msg)) out.push(msg);
  }
  if (!out.length && result.status === 'timedOut') out.push('test timed out');
  if (!out.length && result.status === 'interrupted') out.push('test was interrupted');
  return out;
}

/** The result's annotations, the test's static ones added; the typed findings its checks attached, as `finding` annotations. */
function annotationsOf(test: TestCase, result: TestResult | undefined): Annotation[] {
  const all: Annotation[] = [...(result?.annotations.length ? result.annotations : test.annotations)];
  for (const a of test.annotations) if (!all.some((b) => b.type === a.type && b.description === a.description)) all.push(a);
  return all.map((a) => ({ type: String(a.type), ...(a.description !== undefined ? { description: String(a.description) } : {}) }));
}

const TEST_TIMEOUT = /^Test timeout of (\d+)ms exceeded/;

/** A stop of the harness (core/results.ts), or the check's own test timeout: a limit of the run, never a finding on the server. */
function stopReason(message: string): string | undefined {
  const timeout = TEST_TIMEOUT.exec(message);
  if (timeout)
    return `the check did not finish within its test timeout of ${Number(timeout[1]) / 1000} s, a limit of this run (each request has its own deadline, judged apart)`;
  return harnessStopReason(message);
}

/** Reasons of a failed attempt every error of which is a stop of the harness or its test timeout, else undefined. */
function harnessStopsOf(result: TestResult | undefined): string[] | undefined {
  if (!result || (result.status !== 'failed' && result.status !== 'timedOut')) return undefined;
  const reasons = errorsOf(result).map((e) => stopReason(String(e.message ?? e.value ?? '').replace(ANSI, '')));
  if (!reasons.length || reasons.some((r) => r === undefined)) return undefined;
  return [...new Set(reasons as string[])];
}

/** How many requests the attempts of a test sent (`requests` annotations). */
function requestsOf(results: readonly TestResult[]): number {
  let total = 0;
  for (const r of results)
    for (const a of r.annotations) {
      const n = a.type === ANNOTATION.requests ? Number.parseInt(String(a.description ?? ''), 10) : 0;
      if (Number.isFinite(n) && n > 0) total += n;
    }
  return total;
}

/** The findings the last attempt attached (core/finding.ts `attachFinding`), each as its checks wrote it. */
function findingsOf(result: TestResult | undefined): Finding[] {
  const out: Finding[] = [];
  for (const a of result?.attachments ?? []) {
    const f = a.name === FINDING_ATTACHMENT && a.contentType === 'application/json' ? parseFinding(a.body?.toString('utf8')) : undefined;
    if (f) out.push(f);
  }
  return out;
}

/** The record of `test` (its last attempt `result`, none if it never ran), its file relative to `rootDir`. */
export function testRecordOf(test: TestCase, results: readonly TestResult[], rootDir: string): TestRecord {
  const last = results[results.length - 1];
  const record: TestRecord = {
    title: test.title,
    project: test.parent.project()?.name ?? '',
    file: path.relative(rootDir, test.location.file).split(path.sep).join('/'),
    tags: test.tags.map((t) => (t.startsWith('@') ? t : `@${t}`)),
    outcome: outcomeOf(test, last),
    errors: messagesOf(last),
    annotations: annotationsOf(test, last),
    requests: requestsOf(results),
    ...(() => {
      const findings = findingsOf(last);
      return findings.length ? { findings } : {};
    })(),
  };
  const stops = test.outcome() === 'unexpected' ? harnessStopsOf(last) : undefined;
  if (!stops) return record;
  return {
    ...record,
    outcome: 'skipped',
    errors: [],
    annotations: [...record.annotations, ...stops.map((description) => ({ type: ANNOTATION.notCertified, description }))],
  };
}
