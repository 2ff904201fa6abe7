/**
 * The assertions of the suites (suites/fixtures/assertions.ts) fail one way: a typed finding
 * written as the test's `finding` annotation, and an error naming requirement, expected and
 * observed in plain words, with the curl line of the exchange when there is one. `finding()`
 * (core/finding.ts) takes one object and keeps the shape `parseFinding` reads back.
 */
import type { TestInfo } from '@playwright/test';
import { test, expect } from '../test.ts';
import { expectFact, expectNoDeviation, expectStatus, factFinding, type JudgedResponse } from '../../suites/fixtures/assertions.ts';
import { finding, FINDING_ATTACHMENT, formatFinding, parseFinding, type Finding } from '../../core/finding.ts';

const CURL = "curl -sS -X PATCH 'http://127.0.0.1:1/v1/inventory/7' -H 'Authorization: Bearer $API_KEY' --data-raw '{\"quantity\":3}'";

/** A response as the `api` fixture gives it, reduced to what the assertions read. */
const response = (status: number, text: string, curl = CURL): JudgedResponse => ({
  method: 'PATCH',
  path: '/v1/inventory/7',
  status,
  headers: { 'content-type': 'application/json' },
  text,
  label: `PATCH /v1/inventory/7 → ${status}`,
  curl,
});

/** What `run` threw (it must throw) and the findings it wrote on the running test. */
function failure(testInfo: TestInfo, run: () => void): { message: string; findings: Finding[] } {
  const before = testInfo.attachments.length;
  let message: string | undefined;
  try {
    run();
  } catch (error) {
    message = (error as Error).message;
  }
  const added = testInfo.attachments.splice(before);
  expect(message, 'the assertion threw').toBeDefined();
  return {
    message: message!,
    findings: added
      .filter((a) => a.name === FINDING_ATTACHMENT && a.contentType === 'application/json')
      .map((a) => parseFinding(a.body?.toString('utf8'))!),
  };
}

test('finding() takes one object and leaves out a part or curl given as undefined', () => {
  const f = finding({
    id: 'LOAD-02',
    part: undefined,
    level: 'fail',
    message: 'over-admission',
    expected: 'at most 60',
    observed: '61',
    curl: undefined,
  });
  expect(f).toEqual({ id: 'LOAD-02', level: 'fail', message: 'over-admission', expected: 'at most 60', observed: '61' });
  expect(Object.keys(f)).toEqual(['id', 'level', 'message', 'expected', 'observed']);
  const full = finding({ id: 'LOAD-02', part: 'admission', level: 'warn', message: 'm', expected: 'e', observed: 'o', curl: 'curl x' });
  expect(parseFinding(JSON.stringify(full))).toEqual({
    id: 'LOAD-02',
    part: 'admission',
    level: 'warn',
    message: 'm',
    expected: 'e',
    observed: 'o',
    curl: 'curl x',
  });
});

test('expectFact passes silently when the fact holds', () => {
  const before = test.info().annotations.length;
  expectFact(true, { id: 'UPD-01', expected: 'quantity 3', observed: 'quantity 3', res: response(200, '{}') });
  expect(test.info().annotations.length).toBe(before);
});

test('expectFact fails with a finding naming requirement, expected, observed and the curl line of its exchange', () => {
  const res = response(200, '{"petId":7,"quantity":4}');
  const { message, findings } = failure(test.info(), () =>
    expectFact(false, { id: 'UPD-01', expected: 'quantity 3', observed: 'quantity 4', res }),
  );
  expect(findings).toEqual([
    { id: 'UPD-01', level: 'fail', message: 'PATCH /v1/inventory/7 → 200', expected: 'quantity 3', observed: 'quantity 4', curl: CURL },
  ]);
  expect(message).toBe(`UPD-01 PATCH /v1/inventory/7 → 200: expected quantity 3; observed quantity 4\n  reproduce: ${CURL}`);
});

test('a fact without an exchange has no curl line; without an id it names the running test requirement (here none: ?)', () => {
  const { message, findings } = failure(test.info(), () =>
    expectFact(0, { what: "BASE_URL's path", expected: 'a path ending in /v1', observed: '"/v2"' }),
  );
  expect(findings).toEqual([{ id: '?', level: 'fail', message: "BASE_URL's path", expected: 'a path ending in /v1', observed: '"/v2"' }]);
  expect(message).toBe(`? BASE_URL's path: expected a path ending in /v1; observed "/v2"`);
  expect(message).not.toContain('reproduce');
});

test('expectStatus with 2xx accepts every success and fails any other status through a finding', () => {
  for (const status of [200, 201, 204, 299]) expectStatus(response(status, ''), '2xx');
  const { message, findings } = failure(test.info(), () =>
    expectStatus(response(401, '{"code":"unauthorized"}'), '2xx', 'with "bearer <API_KEY>"'),
  );
  expect(findings).toHaveLength(1);
  expect(findings[0]).toMatchObject({
    level: 'fail',
    message: 'with "bearer <API_KEY>": PATCH /v1/inventory/7',
    expected: 'a 2xx status',
    observed: 'status 401, body {"code":"unauthorized"}',
    curl: CURL,
  });
  expect(message).toContain('expected a 2xx status; observed status 401');
});

test('expectStatus with a list names every accepted status', () => {
  expectStatus(response(401, ''), [400, 401]);
  const { findings } = failure(test.info(), () => expectStatus(response(500, ''), [400, 401]));
  expect(findings[0]).toMatchObject({ expected: 'status 400 or 401', observed: 'status 500, body (empty)' });
});

test('expectNoDeviation joins the deviations as observed; an exchange without a curl line gives none', () => {
  expectNoDeviation([], 'nothing', 'where');
  const { findings } = failure(test.info(), () =>
    expectNoDeviation(['a missing', { b: 1 }], 'a and b', 'the 429', { label: 'GET /v1/inventory → 429' }, 'RL-09'),
  );
  expect(findings).toEqual([{ id: 'RL-09', level: 'fail', message: 'the 429', expected: 'a and b', observed: 'a missing; {"b":1}' }]);
});

test('the rendered line of a fact is the one formatFinding gives the reports', () => {
  const fact = { id: 'VER-04', expected: 'Deprecation @<epoch seconds>', observed: 'true', res: response(200, '', '') };
  const f = factFinding(fact);
  expect(f.curl).toBeUndefined();
  const { message } = failure(test.info(), () => expectFact(false, fact));
  expect(message).toBe(formatFinding(f));
});
