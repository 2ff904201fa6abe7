/**
 * Spec: Errors ("Error responses use the Error object (`code`, `message`, `status`), content type
 * `application/json`"); Resources > Error. Checked on every error path the suite can provoke.
 */
import { test, expectNoDeviation, expectStatus } from '../fixtures.ts';
import { errorContentTypeProblems, errorFieldProblems, errorStatusProblems, type ErrorResponseLike } from '../lib/error-body.ts';
import { ERROR_PATHS } from './paths.ts';

const CLAUSES: { id: string; fact: string; check: (res: ErrorResponseLike) => string[] }[] = [
  { id: 'ERR-01', fact: 'the body is an Error object with code, message and status', check: errorFieldProblems },
  { id: 'ERR-02', fact: 'the body is application/json', check: errorContentTypeProblems },
  { id: 'ERR-03', fact: 'the Error status equals the HTTP status', check: errorStatusProblems },
];

for (const path of ERROR_PATHS) {
  for (const clause of CLAUSES) {
    test(`${clause.id} ${path.name}: ${clause.fact}`, { tag: path.mutates ? ['@mutates'] : [] }, async ({ api, stock }) => {
      const res = await path.send(api, stock, clause.id);
      expectStatus(res, path.expected, path.name);
      expectNoDeviation(clause.check(res), clause.fact, res.label, res, clause.id);
    });
  }
}
