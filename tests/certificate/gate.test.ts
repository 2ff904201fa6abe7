import { test, expect } from '../test.ts';
import { decideGate } from '../../certify/gate.ts';
import { EXIT } from '../../core/exit-codes.ts';
import { conformantReport, failingReport, harnessReport, leakReport, notCertifiedReport } from './reports.ts';

const CASES = [
  { name: 'conformant', report: conformantReport, strict: false, result: 'pass', exit: EXIT.pass },
  { name: 'conformant, strict', report: conformantReport, strict: true, result: 'pass', exit: EXIT.pass },
  { name: 'a must-level failure', report: failingReport, strict: false, result: 'fail', exit: EXIT.fail },
  { name: 'not certified (RATE_LIMIT_KEY unset)', report: notCertifiedReport, strict: false, result: 'pass', exit: EXIT.pass },
  { name: 'not certified, strict', report: notCertifiedReport, strict: true, result: 'not-certified', exit: EXIT.notCertified },
  { name: 'a phase timeout', report: harnessReport, strict: false, result: 'harness', exit: EXIT.harness },
  { name: 'a key found in a report file', report: leakReport, strict: true, result: 'harness', exit: EXIT.harness },
] as const;

for (const c of CASES) {
  test(`gate: ${c.name} → ${c.result}, exit ${c.exit}`, () => {
    const gate = decideGate(c.report(), { strict: c.strict });
    expect(gate.result, gate.reasons.join('; ')).toBe(c.result);
    expect(gate.exitCode).toBe(c.exit);
  });
}

test('gate: the exit codes are distinct', () => {
  expect(new Set(Object.values(EXIT)).size).toBe(Object.keys(EXIT).length);
});

test('gate: strict names what was not certified', () => {
  expect(decideGate(notCertifiedReport(), { strict: true }).reasons[0]).toBe('not certified (strict): RL-05');
});
