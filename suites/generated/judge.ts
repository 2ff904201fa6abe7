/**
 * The rules judged on every generated response (ledger GEN-01 … GEN-05, GEN-08). Pure: a request,
 * what came back, and what the document says of the operation give findings
 * (`core/finding.ts`), never strings to parse again.
 *
 * - GEN-01 never a 5xx;            - GEN-02 never a hang or a dropped connection;
 * - GEN-03 a negative request gets a 4xx with an Error body whose `status` equals the HTTP status;
 * - GEN-04 every response carries the three X-RateLimit headers;
 * - GEN-05 a positive request gets a documented 2xx with a schema-valid body, or a refusal the
 *   document lists for the operation (not 401 or 429 with a valid key, not 404 for a listed id);
 * - GEN-08 an odd request's 4xx is an Error body too.
 *
 * A request outside the API (`scope.ts`) is judged as HTTP: a 4xx to it that is not the API's
 * Error object may be a front door's (RFC 9110 §3.7), and what it breaks of GEN-03, GEN-04,
 * GEN-05 and GEN-08 is a warning naming who answered.
 */
import { errorBodyProblems, errorFieldProblems, abbreviate, type ErrorResponseLike } from '../lib/error-body.ts';
import { finding, type Finding } from '../../core/finding.ts';
import { schemaNames, validate, type SchemaName } from '../../schemas/index.ts';
import type { Operation } from './document.ts';
import type { GeneratedRequest } from './classes.ts';
import { generatedScope } from './scope.ts';
import { answeredBy, type Scope } from '../lib/front-door.ts';

/** What came back for one generated request: a response, or why none did. */
export type Outcome = { kind: 'response'; response: JudgedResponse } | { kind: 'no-response'; error: string };

export interface JudgedResponse extends ErrorResponseLike {
  method: string;
  status: number;
  /** Names of X-RateLimit headers that were missing. */
  missingRateLimit: string[];
}

export const RULES = {
  noServerError: 'GEN-01',
  noHang: 'GEN-02',
  negative: 'GEN-03',
  rateLimitHeaders: 'GEN-04',
  positive: 'GEN-05',
  oddErrorBody: 'GEN-08',
} as const;

/** Statuses a valid request with a valid key may be refused with: the documented 4xx, less 401, 429 and (for listed ids) 404. */
export function allowedRefusals(op: Operation, listedIds: boolean): number[] {
  return op.statuses
    .filter((s) => /^4\d\d$/.test(s))
    .map(Number)
    .filter((s) => s !== 401 && s !== 429 && !(listedIds && s === 404));
}

/** Validates a 2xx body against the operation's documented schema for that status. */
function successBodyProblems(op: Operation, res: JudgedResponse): string[] {
  const key = String(res.status);
  if (!(key in op.successSchemas))
    return [`${res.status} is not a documented success status of ${op.id} (documented: ${Object.keys(op.successSchemas).join(', ')})`];
  if (res.method === 'HEAD') return [];
  const name = op.successSchemaNames[key];
  if (!name || !(schemaNames as readonly string[]).includes(name)) return [];
  if (res.jsonError !== undefined || res.json === undefined) return [`body is not JSON: ${abbreviate(res.text, 120)}`];
  return validate(name as SchemaName, res.json).errors;
}

const shortBody = (r: JudgedResponse) => (r.method === 'HEAD' ? '' : `; body ${abbreviate(r.text, 160)}`);

/** The problems of a 4xx as an Error body (none for a HEAD, which has no body). */
const errorBody = (res: JudgedResponse): string[] => (res.method === 'HEAD' ? [] : errorBodyProblems(res));

/** GEN-03: a negative request gets a 4xx with an Error body. `what` names the request. */
function negativeFindings(what: string, res: JudgedResponse): Finding[] {
  if (res.status < 400) {
    return [
      finding({
        id: RULES.negative,
        part: 'status',
        level: 'fail',
        message: `${what}: an invalid request was not refused`,
        expected: 'a 4xx with an Error body',
        observed: `${res.status}${shortBody(res)}`,
      }),
    ];
  }
  return errorBodyFindings(RULES.negative, what, res);
}

/** GEN-05: a positive request gets a documented 2xx with a schema-valid body, or a refusal the document lists, as an Error body. */
function positiveFindings(op: Operation, what: string, res: JudgedResponse, listedIds: boolean): Finding[] {
  const refusals = allowedRefusals(op, listedIds);
  if (res.status >= 200 && res.status < 300) {
    const problems = successBodyProblems(op, res);
    return problems.length
      ? [
          finding({
            id: RULES.positive,
            part: 'body',
            level: 'fail',
            message: `${what}: the ${res.status} body is not what the document describes`,
            expected: `a body valid against ${op.successSchemaNames[String(res.status)] ?? 'the documented schema'}`,
            observed: problems.join('; '),
          }),
        ]
      : [];
  }
  if (refusals.includes(res.status)) {
    const problems = errorBody(res);
    return problems.length
      ? [
          finding({
            id: RULES.positive,
            part: 'refusal',
            level: 'fail',
            message: `${what}: the ${res.status} refusal is not an Error body`,
            expected: `an Error body with "status": ${res.status}`,
            observed: problems.join('; '),
          }),
        ]
      : [];
  }
  return [
    finding({
      id: RULES.positive,
      part: 'status',
      level: 'fail',
      message: `${what}: a valid request got neither a success nor a refusal the document allows`,
      expected: `a documented 2xx${refusals.length ? ` or ${refusals.join('/')} with an Error body` : ''}`,
      observed: `${res.status}${shortBody(res)}`,
    }),
  ];
}

/** `id` fails when the refusal `res` is not an Error body (Errors: `code`, `message`, `status`). */
function errorBodyFindings(id: string, what: string, res: JudgedResponse): Finding[] {
  const problems = errorBody(res);
  return problems.length
    ? [
        finding({
          id,
          part: 'error-body',
          level: 'fail',
          message: `${what}: the ${res.status} is not an Error body`,
          expected: `an Error body with "status": ${res.status}`,
          observed: problems.join('; '),
        }),
      ]
    : [];
}

/** GEN-08: an odd request's 4xx is an Error body too. */
function oddFindings(what: string, res: JudgedResponse): Finding[] {
  if (res.status < 400) return [];
  return errorBodyFindings(RULES.oddErrorBody, what, res);
}

/**
 * Every finding on one generated exchange. `listedIds`: the path values came from the list (the
 * resource exists).
 */
export function judge(op: Operation, req: GeneratedRequest, outcome: Outcome, listedIds: boolean): Finding[] {
  const what = `${req.method} ${req.path} (${req.note})`;
  if (outcome.kind === 'no-response') {
    return [
      finding({
        id: RULES.noHang,
        part: req.expect,
        level: 'fail',
        message: `${what}: no response`,
        expected: 'a response within REQUEST_TIMEOUT_MS on an open connection',
        observed: outcome.error,
      }),
    ];
  }
  const res = outcome.response;
  const out: Finding[] = [];
  const serverError = res.status >= 500 && !(req.allowedServerErrors ?? []).includes(res.status);
  if (serverError) {
    out.push(
      finding({
        id: RULES.noServerError,
        part: req.expect,
        level: 'fail',
        message: `${what}: a server error`,
        expected: 'a 2xx or 4xx (never a 5xx)',
        observed: `${res.status}${shortBody(res)}`,
      }),
    );
  }
  if (res.missingRateLimit.length) {
    out.push(
      finding({
        id: RULES.rateLimitHeaders,
        part: req.expect,
        level: 'fail',
        message: `${what}: X-RateLimit headers missing on a ${res.status}`,
        expected: 'X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset',
        observed: `missing ${res.missingRateLimit.join(', ')}`,
      }),
    );
  }
  if (!serverError) {
    if (req.expect === 'negative') out.push(...negativeFindings(what, res));
    else if (req.expect === 'positive') out.push(...positiveFindings(op, what, res, listedIds));
    else out.push(...oddFindings(what, res));
  }
  const scope = generatedScope(op, req);
  return scope.kind === 'outside' ? out.map((f) => asHttp(f, res, scope)) : out;
}

/** Rules of the spec's operations that HTTP does not make of every answer (the headers; an Error body on a 4xx). */
const SPEC_ONLY = [RULES.rateLimitHeaders, RULES.negative, RULES.positive, RULES.oddErrorBody] as string[];

/**
 * A finding on a request outside the API, judged as HTTP: on a 4xx that is not an Error object (not
 * the API's own answer: a front door's), the spec's own rules warn, naming who answered.
 */
function asHttp(f: Finding, res: JudgedResponse, scope: Extract<Scope, { kind: 'outside' }>): Finding {
  const frontDoors = res.status >= 400 && res.status < 500 && errorFieldProblems(res).length > 0;
  if (f.level !== 'fail' || !SPEC_ONLY.includes(f.id) || !frontDoors) return f;
  return { ...f, level: 'warn', message: `${f.message}, answered by ${answeredBy(res)}: outside the API, ${scope.why}` };
}
