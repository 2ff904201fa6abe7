import nock from 'nock';
import { test, expect } from '@playwright/test';
import {
  errorBodyProblems,
  errorContentTypeProblems,
  errorFieldProblems,
  errorStatusProblems,
  type ErrorResponseLike,
} from '../../suites/lib/error-body.ts';
import { parseJson } from '../../suites/lib/json.ts';

test.afterEach(() => nock.cleanAll());

function like(status: number, contentType: string | undefined, text: string): ErrorResponseLike {
  let json: unknown;
  let jsonError: string | undefined;
  try {
    json = text.trim() ? parseJson(text) : undefined;
  } catch (e) {
    jsonError = (e as Error).message;
  }
  return { status, headers: contentType ? { 'content-type': contentType } : {}, json, jsonError, text };
}

test('a conforming Error response from a real exchange has no problems (charset and extra fields allowed)', async ({ request }) => {
  nock('http://err.test')
    .patch('/v1/inventory/1')
    .reply(400, '{"code":"invalid_body","message":"quantity is required.","status":400,"requestId":"x"}', {
      'Content-Type': 'application/json; charset=utf-8',
    });
  const res = await request.patch('http://err.test/v1/inventory/1', { data: {} });
  expect(
    errorBodyProblems({ status: res.status(), headers: res.headers(), json: parseJson(await res.text()), text: await res.text() }),
  ).toEqual([]);
});

const CASES: Array<[string, ErrorResponseLike, RegExp, (r: ErrorResponseLike) => string[]]> = [
  [
    'text/plain',
    like(400, 'text/plain', '{"code":"x","message":"m","status":400}'),
    /Content-Type is "text\/plain"/,
    errorContentTypeProblems,
  ],
  ['no content type', like(400, undefined, '{"code":"x","message":"m","status":400}'), /Content-Type is missing/, errorContentTypeProblems],
  ['missing code', like(404, 'application/json', '{"message":"m","status":404}'), /"code" is missing/, errorFieldProblems],
  ['code a number', like(404, 'application/json', '{"code":4,"message":"m","status":404}'), /"code" is the number 4/, errorFieldProblems],
  [
    'status a string',
    like(404, 'application/json', '{"code":"x","message":"m","status":"404"}'),
    /"status" is the string "404", expected an integer/,
    errorBodyProblems,
  ],
  [
    'status not the HTTP status',
    like(404, 'application/json', '{"code":"x","message":"m","status":400}'),
    /"status" is the number 400, expected 404/,
    errorStatusProblems,
  ],
  ['HTML body', like(500, 'text/html', '<html>oops</html>'), /body is not JSON/, errorBodyProblems],
  ['empty body', like(401, 'application/json', ''), /body is not JSON \(empty\)/, errorBodyProblems],
  ['array body', like(400, 'application/json', '[]'), /not a JSON object/, errorBodyProblems],
];
for (const [name, res, want, check] of CASES) {
  test(`Error body deviation is reported: ${name}`, () => {
    expect(check(res).join('; ')).toMatch(want);
  });
}

test('a huge non-JSON body is abbreviated in the problem text', () => {
  const problems = errorBodyProblems(like(502, 'text/html', 'x'.repeat(1_000_000)));
  expect(problems.join('; ').length).toBeLessThan(1000);
});
