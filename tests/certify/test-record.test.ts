import type { TestCase, TestResult } from '@playwright/test/reporter';
import { test, expect } from '../test.ts';
import { testRecordOf } from '../../certify/test-record.ts';
import { ANNOTATION } from '../../core/results.ts';

function testCase(outcome: ReturnType<TestCase['outcome']>): TestCase {
  return {
    title: 'RL-01 a 429 carries Retry-After',
    tags: [],
    annotations: [],
    location: { file: '/repo/suites/rate-limit/rl-01.spec.ts', line: 1, column: 1 },
    outcome: () => outcome,
    parent: { project: () => ({ name: 'rate-limit' }) },
  } as unknown as TestCase;
}

function result(status: TestResult['status'], messages: string[]): TestResult {
  const errors = messages.map((message) => ({ message }));
  return { status, errors, error: errors[0], annotations: [], attachments: [] } as unknown as TestResult;
}

test("a check stopped by its own test timeout is not certified, with the timeout named: the run's limit, not the server's failure", () => {
  const r = testRecordOf(testCase('unexpected'), [result('timedOut', ['Test timeout of 90000ms exceeded.'])], '/repo');
  expect(r.outcome).toBe('skipped');
  expect(r.errors).toEqual([]);
  expect(r.annotations).toContainEqual({
    type: ANNOTATION.notCertified,
    description: expect.stringMatching(/^the check did not finish within its test timeout of 90 s, a limit of this run/),
  });
});

test('a check that failed an assertion before its test timeout still fails', () => {
  const r = testRecordOf(
    testCase('unexpected'),
    [result('timedOut', ['Test timeout of 90000ms exceeded.', 'RL-01 expected Retry-After, observed none'])],
    '/repo',
  );
  expect(r.outcome).toBe('failed');
  expect(r.errors).toContain('RL-01 expected Retry-After, observed none');
});
