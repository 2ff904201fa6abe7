import { test, expect } from '../test.ts';
import { applyBaseline, baselineFromReport, parseBaseline } from '../../certify/baseline.ts';
import { decideGate } from '../../certify/gate.ts';
import { EXIT } from '../../core/exit-codes.ts';
import { conformantReport, failingReport, harnessReport } from './reports.ts';

test('baseline: a listed failure is known, an unlisted one is new and fails the gate', () => {
  const report = failingReport();
  const outcome = applyBaseline(report, parseBaseline('knownFailures:\n  - id: UPD-06\n    reason: fix in 2.4\n'));
  expect(outcome.known.map((k) => k.id)).toEqual(['UPD-06']);
  expect(outcome.known[0]!.reason).toBe('fix in 2.4');
  expect(outcome.newFailures.map((k) => k.id)).toEqual(['AUTH-02']);
  expect(outcome.passes).toBe(false);
  expect(decideGate(report, { strict: false, baseline: outcome }).exitCode).toBe(EXIT.fail);
});

test('baseline: every failure listed → the gate passes and lists the known failures', () => {
  const report = failingReport();
  expect(report.verdict).toBe('fail');
  const outcome = applyBaseline(report, parseBaseline('knownFailures: [UPD-06, AUTH-02]'));
  expect(outcome.newFailures).toEqual([]);
  expect(outcome.passes).toBe(true);
  const gate = decideGate(report, { strict: false, baseline: outcome });
  expect(gate).toMatchObject({ result: 'pass', exitCode: EXIT.pass });
  expect(gate.reasons.join(' ')).toContain('known failures accepted by the baseline: AUTH-02, UPD-06');
});

test('baseline: a known failure that now passes is reported fixed, so it can leave the baseline', () => {
  const outcome = applyBaseline(conformantReport(), parseBaseline('knownFailures: [UPD-06, NOPE-99]'));
  expect(outcome.fixed).toEqual([{ id: 'UPD-06', title: 'negative quantity', status: 'pass' }]);
  expect(outcome.unjudged).toEqual([{ id: 'NOPE-99', why: 'not in the requirements ledger' }]);
  expect(outcome.passes).toBe(true);
});

test('baseline: an entry narrowed to tests does not cover another failing test of the requirement', () => {
  const outcome = applyBaseline(
    failingReport(),
    parseBaseline('knownFailures:\n  - { id: AUTH-02, tests: ["AUTH-02 some other test"] }\n  - UPD-06\n'),
  );
  expect(outcome.newFailures).toEqual([
    {
      id: 'AUTH-02',
      title: expect.any(String),
      level: 'must',
      failingTests: ['AUTH-02 every operation answers 401 without a key'],
      why: 'the baseline lists other tests of it',
    },
  ]);
});

test('baseline: run problems are never baselined (harness trouble keeps its exit code)', () => {
  const report = harnessReport();
  const outcome = applyBaseline(report, parseBaseline('knownFailures: [AUTH-02]'));
  expect(outcome.passes).toBe(false);
  expect(decideGate(report, { strict: false, baseline: outcome }).exitCode).toBe(EXIT.harness);
});

const BAD: [string, string, RegExp][] = [
  ['not a list', 'knownFailures: 3', /expected `knownFailures:`/],
  ['bad id', 'knownFailures: [auth-2]', /"auth-2" is not a requirement id/],
  ['duplicate', 'knownFailures: [UPD-06, UPD-06]', /UPD-06: listed twice/],
  ['unknown field', 'knownFailures: [{ id: UPD-06, ticket: X }]', /unknown field\(s\) ticket/],
  ['empty tests', 'knownFailures: [{ id: UPD-06, tests: [] }]', /tests must be a non-empty list/],
  ['not YAML', 'knownFailures: [UPD-06', /not valid YAML or JSON/],
];
for (const [name, text, message] of BAD) {
  test(`baseline: a bad file is refused with a clear error (${name})`, () => {
    expect(() => parseBaseline(text)).toThrow(message);
  });
}

test('baseline: --write-baseline lists the failed requirements with their failing tests, and reads back', () => {
  const report = failingReport();
  const text = baselineFromReport(report);
  const parsed = parseBaseline(text);
  expect(parsed.knownFailures.map((e) => e.id)).toEqual(['AUTH-02', 'UPD-06']);
  expect(applyBaseline(report, parsed).passes).toBe(true);
});
