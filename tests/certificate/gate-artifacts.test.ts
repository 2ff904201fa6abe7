/**
 * One gate everywhere: conformance.json, conformance.md, junit.xml, the certificate, `--json` and
 * the exit code state the same result, with the baseline's known, fixed and new failures; the
 * run's files validate against schemas/; a target left changed fails the gate on its own.
 */
import fs from 'node:fs';
import path from 'node:path';
import { test, expect } from './scratch.ts';
import { decideGate, gateLine } from '../../certify/gate.ts';
import { writeCertificate } from '../../certify/certificate/index.ts';
import { gateJunit } from '../../certify/junit.ts';
import { renderMarkdown } from '../../certify/markdown.ts';
import { judge } from '../../certify/steps/judge.ts';
import { leftChangedLines, printSummary } from '../../certify/steps/print.ts';
import { openAfterStopProblem } from '../../certify/steps/repair.ts';
import { errorDocument } from '../../cli/main.ts';
import { EXIT } from '../../core/exit-codes.ts';
import { baselineOf, failingReport, passingTests, rec, report, LEDGER } from './reports.ts';
import { certificateProblems, conformanceProblems } from './report-schemas.ts';
import type { ConformanceReport } from '../../certify/verdict.ts';

/** Playwright's JUnit output for the failing report's tests (AUTH-02 and UPD-06 failed). */
const JUNIT = `<testsuites id="" name="" tests="4" failures="2" skipped="0" errors="0" time="1.5">
<testsuite name="auth/bearer.spec.ts" timestamp="2026-11-23T06:00:00.000Z" hostname="functional" tests="2" failures="2" skipped="0" time="0.5" errors="0">
<testcase name="listInventory › AUTH-02 every operation answers 401 without a key" classname="auth/bearer.spec.ts" time="0.1">
<failure message="bearer.spec.ts:10:1 AUTH-02" type="FAILURE">
<![CDATA[AUTH-02: PATCH /v1/inventory/1 without a key: expected 401, observed 200]]>
</failure>
</testcase>
<testcase name="UPD-06 a negative quantity yields 400 or 200" classname="auth/bearer.spec.ts" time="0.1">
<failure message="x" type="FAILURE">
<![CDATA[UPD-06 failed]]>
</failure>
</testcase>
</testsuite>
<testsuite name="rate-limit/limits.spec.ts" timestamp="2026-11-23T06:00:00.000Z" hostname="rate-limit" tests="2" failures="0" skipped="0" time="1" errors="0">
<testcase name="RL-05 the request past the limit is refused with 429" classname="rate-limit/limits.spec.ts" time="1">
</testcase>
<testcase name="LOAD-03 the other key is served during the burst" classname="rate-limit/limits.spec.ts" time="0">
</testcase>
</testsuite>
</testsuites>
`;

/** The gate as junit.xml states it: the gate suite's case, and each case's verdict. */
function junitGate(xml: string): {
  gate: 'passed' | 'failed';
  gateName: string;
  skipped: Record<string, string>;
  failed: string[];
  counts: Record<string, number>;
} {
  const gateCase = /<testsuite name="inventory-conformance gate"[\s\S]*?<testcase name="([^"]*)"[^>]*>([\s\S]*?)<\/testcase>/.exec(xml)!;
  const skipped: Record<string, string> = {};
  const failed: string[] = [];
  for (const m of xml.matchAll(/<testcase name="([^"]*)"[^>]*>([\s\S]*?)<\/testcase>/g)) {
    const skip = /<skipped message="([^"]*)"/.exec(m[2]!);
    if (skip) skipped[m[1]!] = skip[1]!;
    if (/<failure\b/.test(m[2]!)) failed.push(m[1]!);
  }
  const root = /<testsuites\b[^>]*>/.exec(xml)![0];
  const n = (a: string) => Number(new RegExp(` ${a}="(\\d+)"`).exec(root)![1]);
  return {
    gate: /<failure\b/.test(gateCase[2]!) ? 'failed' : 'passed',
    gateName: gateCase[1]!,
    skipped,
    failed,
    counts: { tests: n('tests'), failures: n('failures'), skipped: n('skipped') },
  };
}

const CASES: { name: string; make: () => ConformanceReport; result: string; exit: number; known: string[]; fresh: string[] }[] = [
  {
    name: 'known deviations, all in the baseline',
    make: () => failingReport({ baseline: baselineOf('knownFailures:\n  - { id: AUTH-02, reason: ticket 1 }\n  - UPD-06\n') }),
    result: 'pass',
    exit: EXIT.pass,
    known: ['AUTH-02', 'UPD-06'],
    fresh: [],
  },
  {
    name: 'one deviation beyond the baseline',
    make: () => failingReport({ baseline: baselineOf('knownFailures: [UPD-06]') }),
    result: 'fail',
    exit: EXIT.fail,
    known: ['UPD-06'],
    fresh: ['AUTH-02'],
  },
  { name: 'no baseline', make: () => failingReport(), result: 'fail', exit: EXIT.fail, known: [], fresh: ['AUTH-02', 'UPD-06'] },
  {
    name: 'known deviations, strict, RL-05 not certified',
    make: () =>
      report(
        passingTests().map((t) =>
          t.title.startsWith('AUTH-02')
            ? { ...t, outcome: 'failed' as const, errors: ['x'] }
            : t.title.startsWith('RL-05')
              ? { ...t, outcome: 'skipped' as const, annotations: [{ type: 'not-certified', description: 'RATE_LIMIT_KEY is not set' }] }
              : t,
        ),
        { gate: { strict: true, baseline: baselineOf('knownFailures: [AUTH-02]') } },
      ),
    result: 'not-certified',
    exit: EXIT.notCertified,
    known: ['AUTH-02'],
    fresh: [],
  },
];

for (const c of CASES) {
  test(`gate: ${c.name} → ${c.result}, exit ${c.exit}, the same in conformance.json, conformance.md, junit.xml, the certificate and --json`, async ({
    scratch,
  }) => {
    const dir = scratch('reports');
    fs.mkdirSync(dir);
    const made = c.make();
    // conformance.json and conformance.md, as the judge step writes them.
    fs.writeFileSync(path.join(dir, 'conformance.json'), `${JSON.stringify(made, null, 2)}\n`);
    fs.writeFileSync(path.join(dir, 'conformance.md'), renderMarkdown(made));
    const json = JSON.parse(fs.readFileSync(path.join(dir, 'conformance.json'), 'utf8')) as ConformanceReport;
    expect(conformanceProblems(json)).toEqual([]);
    expect([json.verdict, json.gate.result, json.gate.exitCode]).toEqual([c.result, c.result, c.exit]);
    expect(json.gate.knownFailures.map((k) => k.id)).toEqual(c.known);
    expect(json.gate.newFailures.map((k) => k.id)).toEqual(c.fresh);

    const md = fs.readFileSync(path.join(dir, 'conformance.md'), 'utf8');
    expect(md).toContain(`— exit code ${c.exit}`);
    expect(md).toMatch(new RegExp(`\\*\\*Gate: \\S+ ${c.result === 'not-certified' ? 'NOT CERTIFIED' : c.result.toUpperCase()}`));
    if (c.known.length) expect(md).toContain(`Known failures (they do not fail the gate): **${c.known[0]}**`);
    for (const id of c.known) expect(md).toContain(`### **${id}**`);
    for (const id of c.fresh) expect(md).toContain(`**${id}** (`);

    const junit = junitGate(gateJunit(JUNIT, made, gateLine(made.gate)));
    expect(junit.gate).toBe(c.result === 'pass' ? 'passed' : 'failed');
    expect(junit.gateName).toBe(gateLine(made.gate));
    const knownCases = Object.keys(junit.skipped)
      .map((n) => /\b([A-Z]+-\d{2})\b/.exec(n)![1])
      .sort();
    expect(knownCases).toEqual([...c.known].sort());
    for (const reason of Object.values(junit.skipped)) expect(reason).toMatch(/known failure \(baseline\)/);
    expect(junit.counts).toEqual({ tests: 5, failures: 2 - c.known.length + (c.result === 'pass' ? 0 : 1), skipped: c.known.length });

    const w = writeCertificate({ report: made, reportsDir: dir, env: {} });
    const cert = JSON.parse(fs.readFileSync(w.jsonFile, 'utf8'));
    expect(certificateProblems(cert)).toEqual([]);
    expect(cert.results.gate).toEqual(json.gate);
    expect(cert.results.verdict).toBe(c.result);
    expect(cert.results.requirements.filter((r: { knownFailure?: unknown }) => r.knownFailure).map((r: { id: string }) => r.id)).toEqual(
      c.known,
    );
  });
}

test('gate: --json prints an error document on exit 2 and 3, never empty, with the reasons and no key', () => {
  const key = 'sk_live_0123456789abcdef';
  const redact = (t: string) => t.split(key).join('<API_KEY>');
  const usage = errorDocument(
    EXIT.usage,
    ['--api-key: keys are read only from the environment', `CONFORMANCE_BASELINE (${key}.yaml): no such file`],
    redact,
  );
  expect(usage).toMatchObject({
    verdict: 'usage',
    gate: {
      result: 'usage',
      exitCode: 2,
      reasons: ['--api-key: keys are read only from the environment', 'CONFORMANCE_BASELINE (<API_KEY>.yaml): no such file'],
    },
  });
  const down = errorDocument(EXIT.unreachable, ['preflight failed: connection refused (ECONNREFUSED)'], redact);
  expect(errorDocument(EXIT.harness, [], redact).gate.reasons, 'no reason given: what the exit code means').toHaveLength(1);
  expect(down).toMatchObject({
    verdict: 'unreachable',
    gate: { result: 'unreachable', exitCode: 3, reasons: ['preflight failed: connection refused (ECONNREFUSED)'] },
  });
  expect(conformanceProblems(down)).not.toEqual([]); // an error document is not a report: a CI step tells them apart by `format`
  expect(JSON.stringify(usage)).not.toContain(key);
});

test('gate: the schemas refuse a report whose verdict contradicts its gate, or that has no gate', () => {
  const ok = failingReport({ baseline: baselineOf('knownFailures: [AUTH-02, UPD-06]') });
  expect(conformanceProblems(ok)).toEqual([]);
  expect(conformanceProblems({ ...ok, verdict: 'fail' }).join('\n')).toMatch(/verdict/);
  const { gate: _g, ...noGate } = ok;
  expect(conformanceProblems(noGate).join('\n')).toMatch(/gate/);
  expect(conformanceProblems({ ...ok, gate: { ...ok.gate, exitCode: 1 } })).not.toEqual([]);
});

// --no-regression-from: only what passed (or warned) before and fails now fails the gate.
const PREVIOUS: {
  name: string;
  before: Record<string, 'pass' | 'warn' | 'fail' | 'skipped'>;
  result: string;
  fresh: string[];
  known: string[];
}[] = [
  {
    name: 'both failed before too',
    before: { 'AUTH-02': 'fail', 'UPD-06': 'fail' },
    result: 'pass',
    fresh: [],
    known: ['AUTH-02', 'UPD-06'],
  },
  { name: 'AUTH-02 passed before', before: { 'AUTH-02': 'pass', 'UPD-06': 'fail' }, result: 'fail', fresh: ['AUTH-02'], known: ['UPD-06'] },
  {
    name: 'UPD-06 warned before, not certified',
    before: { 'AUTH-02': 'skipped', 'UPD-06': 'warn' },
    result: 'fail',
    fresh: ['UPD-06'],
    known: ['AUTH-02'],
  },
  {
    name: 'AUTH-02 is new (not in the compared certificate)',
    before: { 'UPD-06': 'fail' },
    result: 'fail',
    fresh: ['AUTH-02'],
    known: ['UPD-06'],
  },
];
for (const p of PREVIOUS) {
  test(`gate: compared with a previous certificate where ${p.name} → ${p.result}`, () => {
    const previous = { file: 'old.json', digest: 'a'.repeat(64), generatedAt: '2026-11-01T00:00:00.000Z', statuses: p.before };
    const gate = decideGate(failingReport(), { strict: false, previous });
    expect(gate.result).toBe(p.result);
    expect(gate.newFailures.map((f) => f.id)).toEqual(p.fresh);
    expect(gate.knownFailures.map((k) => k.id)).toEqual(p.known);
    expect(gate.comparedWith).toEqual({ file: 'old.json', certificate: 'a'.repeat(64), generatedAt: '2026-11-01T00:00:00.000Z' });
  });
}

test('gate: a target left changed is a run-level line in the console, conformance.json and the certificate, and fails the gate although every requirement passed', async ({
  scratch,
}) => {
  const pets = [
    { petId: '7', original: '5', current: '12' },
    { petId: '9007199254740993', original: '0', current: null },
  ];
  const tests = passingTests().map((t, i) =>
    i === 0 ? { ...t, annotations: [...t.annotations, ...pets.map((p) => ({ type: 'unrestored', description: JSON.stringify(p) }))] } : t,
  );
  const dir = scratch('reports');
  fs.mkdirSync(dir);
  const made = judge(
    { ledger: LEDGER, tests, profile: 'full', target: { kind: 'reference' }, generatedAt: '2026-11-23T06:00:00.000Z' },
    dir,
    (s) => s,
  );
  expect(made.summary.fail).toBe(0);
  expect(made.gate).toMatchObject({ result: 'fail', exitCode: EXIT.fail });
  expect(made.problems).toEqual([expect.objectContaining({ kind: 'target-left-changed', pets })]);
  const json = JSON.parse(fs.readFileSync(path.join(dir, 'conformance.json'), 'utf8'));
  expect(conformanceProblems(json)).toEqual([]);
  expect(json.problems[0].pets).toEqual(pets);
  expect(fs.readFileSync(path.join(dir, 'conformance.md'), 'utf8')).toContain('| 9007199254740993 | 0 | missing from the list |');

  let out = '';
  printSummary(made, (t) => (out += t), { reportsFile: 'conformance.md', otherReports: [], seconds: 1 });
  expect(out).toContain('Target left changed: the run could not restore 2 pet(s)');
  expect(out).toContain('  ✗ pet 7: original quantity 5, now 12\n');
  expect(out).toContain('certify: verdict FAIL, exit 1');
  expect(leftChangedLines([])).toEqual([]);

  const w = writeCertificate({ report: made, reportsDir: dir, env: {} });
  expect(certificateProblems(JSON.parse(fs.readFileSync(w.jsonFile, 'utf8')))).toEqual([]);
  const html = fs.readFileSync(w.htmlFile, 'utf8');
  expect(html).toContain('<section id="left-changed"><h2>Target left changed (2)</h2>');
  expect(html).toContain('<tr><td><code>7</code></td><td>5</td><td>12</td><td>set its quantity back by hand</td></tr>');
});

test('gate: what a stopped run left open is named in the console, conformance.json, conformance.md and the certificate, and the gate stays interrupted', async ({
  scratch,
}) => {
  const dir = scratch('reports');
  fs.mkdirSync(dir);
  fs.mkdirSync(path.join(dir, 'journal'));
  const journalFile = 'journal/run-1.jsonl';
  const at = '2026-11-26T00:00:00.000Z';
  fs.writeFileSync(
    path.join(dir, journalFile),
    `${JSON.stringify({ v: 1, at, target: 'http://127.0.0.1:1/v1', kind: 'change', entry: 'a1', by: 'functional UPD-02', petId: '7', original: '5' })}\n`,
  );
  const open = openAfterStopProblem(dir, journalFile, 'SIGINT');
  expect(open).toMatchObject({
    kind: 'target-left-changed',
    observed: '1 pet(s) it changed: pet 7 (quantity 5 before; by functional UPD-02)',
  });
  const made = judge(
    {
      ledger: LEDGER,
      tests: passingTests(),
      profile: 'full',
      target: { kind: 'reference' },
      generatedAt: '2026-11-26T06:00:00.000Z',
      problems: [open!],
      interrupted: { signal: 'SIGINT', exitCode: 130 },
    },
    dir,
    (s) => s,
  );
  expect(made.gate).toMatchObject({ result: 'interrupted', exitCode: 130 });
  const json = JSON.parse(fs.readFileSync(path.join(dir, 'conformance.json'), 'utf8'));
  expect(conformanceProblems(json)).toEqual([]);
  expect(json.problems).toEqual([open]);
  const reason = 'stopped by SIGINT before it put back or confirmed 1 pet(s) it changed: pet 7 (quantity 5 before; by functional UPD-02)';
  expect(fs.readFileSync(path.join(dir, 'conformance.md'), 'utf8')).toContain(`## Target left changed\n\n- ${reason}`);
  let out = '';
  printSummary(made, (t) => (out += t), { reportsFile: 'conformance.md', otherReports: [], seconds: 1 });
  expect(out).toContain(`Target left changed:\n  ✗ ${reason}`);
  const w = writeCertificate({ report: made, reportsDir: dir, env: {} });
  expect(certificateProblems(JSON.parse(fs.readFileSync(w.jsonFile, 'utf8')))).toEqual([]);
  expect(fs.readFileSync(w.htmlFile, 'utf8')).toContain(`<h2>Target left changed (1)</h2><ul class="tight"><li>${reason}`);
});

test('gate: a run whose every change was restored has no such line', () => {
  const made = report([
    ...passingTests(),
    rec('AUTH-02 another', 'passed', { annotations: [{ type: 'requirement', description: 'AUTH-02' }] }),
  ]);
  expect(made.problems).toEqual([]);
  expect(made.gate.result).toBe('pass');
});
