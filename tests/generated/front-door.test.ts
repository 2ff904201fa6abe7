/**
 * Requests outside the API (a method the spec does not define, a target that is not valid HTTP,
 * an oversized field line or body) are judged as HTTP: a front door's 4xx without an Error body or
 * the X-RateLimit headers is a warning naming who answered; a 5xx, a hang or a lost connection
 * still fails. Operations of the spec sent as valid HTTP are judged as before.
 */
import { test, expect } from '../test.ts';
import { openapiDocument } from '../../schemas/index.ts';
import { operationsOf } from '../../suites/generated/document.ts';
import { judge, type JudgedResponse } from '../../suites/generated/judge.ts';
import { coverageCases } from '../../suites/generated/coverage.ts';
import { generatedScope } from '../../suites/generated/scope.ts';
import type { GeneratedRequest } from '../../suites/generated/classes.ts';
import { answeredBy, bodyShape, scopeOf } from '../../suites/lib/front-door.ts';

const ops = operationsOf(openapiDocument());
const update = ops.find((o) => o.id === 'updateInventory')!;
const list = ops.find((o) => o.id === 'listInventory')!;
const NGINX_HTML =
  '<html>\r\n<head><title>405 Not Allowed</title></head>\r\n<body>\r\n<center><h1>405 Not Allowed</h1></center>\r\n</body>\r\n</html>\r\n';
const RL = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];

/** nginx's own answer: HTML, its Server header, none of the API's headers. */
function nginx(method: string, status: number): JudgedResponse {
  return {
    method,
    status,
    headers: { server: 'nginx/1.22.1', 'content-type': 'text/html' },
    text: NGINX_HTML,
    json: undefined,
    jsonError: 'x',
    missingRateLimit: RL,
  };
}
const caseOf = (op: typeof update, name: string): GeneratedRequest => coverageCases(op, ops).find((c) => c.name === name)!.request;
const levels = (f: { id: string; level: string }[]) => f.map((x) => `${x.id} ${x.level}`).sort();

test('a method the spec does not define, an invalid percent-encoding, %00, an oversized line or body are outside the API; the rest are operations', () => {
  const op = (method: string, target: string, extra: Partial<Parameters<typeof scopeOf>[0]> = {}) =>
    scopeOf({ method, target, headers: {}, bodyBytes: 0, ...extra }, ['PATCH']).kind;
  expect(op('PATCH', '/inventory/1')).toBe('operation');
  expect(op('TRACE', '/inventory/1')).toBe('outside');
  expect(scopeOf({ method: 'HEAD', target: '/inventory', headers: {}, bodyBytes: 0 }, ['GET']).kind).toBe('operation');
  for (const t of ['/inventory/1%zz', '/inventory/1%4', '/inventory/1%', '/inventory/%G11', '/inventory?q=%zz'])
    expect(op('PATCH', t), t).toBe('outside');
  for (const t of ['/inventory/1%20', '/inventory/1%C3%28', '/inventory/1%2Fx', '/inventory?q=%E0%A4'])
    expect(op('PATCH', t), t).toBe('operation');
  expect(op('PATCH', '/inventory/1%00')).toBe('outside');
  expect(op('PATCH', `/inventory/${'9'.repeat(4_000)}`)).toBe('operation');
  expect(op('PATCH', `/inventory?pad=${'q'.repeat(8_000)}`)).toBe('outside');
  expect(op('PATCH', '/inventory/1', { headers: { 'x-padding': 'p'.repeat(8_000) } })).toBe('outside');
  expect(op('PATCH', '/inventory/1', { bodyBytes: 64 * 1024 })).toBe('operation');
  expect(op('PATCH', '/inventory/1', { bodyBytes: 100_000 })).toBe('outside');
});

test('the generated cases are classed once: TRACE and the broken escapes outside, the keyword and representation cases operations', () => {
  expect(generatedScope(list, caseOf(list, 'method TRACE /inventory')).kind).toBe('outside');
  expect(generatedScope(update, caseOf(update, 'path petId written as invalid-percent')).kind).toBe('outside');
  expect(generatedScope(update, caseOf(update, 'path petId written as nul-byte')).kind).toBe('outside');
  expect(generatedScope(update, caseOf(update, 'body (body): a body over 64 KiB (100 KB)')).kind).toBe('outside');
  expect(generatedScope(update, caseOf(update, 'body (body): a body at 64 KiB')).kind).toBe('operation');
  expect(generatedScope(update, caseOf(update, 'path petId written as leading-zeros')).kind).toBe('operation');
  expect(generatedScope(update, caseOf(update, 'body (body): truncated JSON')).kind).toBe('operation');
});

test("nginx's 405 to TRACE and 400 to %zz are warnings that name nginx and the body's shape, never failures", () => {
  const trace = judge(list, caseOf(list, 'method TRACE /inventory'), { kind: 'response', response: nginx('TRACE', 405) }, true);
  expect(levels(trace)).toEqual(['GEN-03 warn', 'GEN-04 warn']);
  for (const f of trace)
    expect(f.message).toMatch(/nginx\/1\.22\.1 \(Server header\), an HTML body: outside the API, the spec defines no TRACE/);
  const zz = judge(
    update,
    caseOf(update, 'path petId written as invalid-percent'),
    { kind: 'response', response: nginx('PATCH', 400) },
    true,
  );
  expect(levels(zz)).toEqual(['GEN-03 warn', 'GEN-04 warn']);
  expect(zz[0]!.message).toMatch(/nginx.*RFC 3986 §2\.1/);
});

test('outside the API, a 5xx, a hang or a lost connection still fails; a 2xx to an invalid request still fails', () => {
  const trace = caseOf(list, 'method TRACE /inventory');
  expect(levels(judge(list, trace, { kind: 'response', response: nginx('TRACE', 500) }, true))).toEqual(['GEN-01 fail', 'GEN-04 fail']);
  expect(levels(judge(list, trace, { kind: 'no-response', error: 'socket hang up' }, true))).toEqual(['GEN-02 fail']);
  const zz = caseOf(update, 'path petId written as invalid-percent');
  expect(levels(judge(update, zz, { kind: 'response', response: nginx('PATCH', 502) }, true))).toEqual(['GEN-01 fail', 'GEN-04 fail']);
  const ok = { ...nginx('TRACE', 200), headers: { server: 'x' } };
  expect(levels(judge(list, trace, { kind: 'response', response: ok }, true))).toEqual(['GEN-03 fail', 'GEN-04 fail']);
});

test("outside the API, a 4xx that is the API's own Error object is judged by the spec: its missing X-RateLimit headers fail GEN-04", () => {
  const error = { code: 'method_not_allowed', message: 'no', status: 405 };
  const own: JudgedResponse = {
    ...nginx('TRACE', 405),
    headers: { 'content-type': 'application/json' },
    json: error,
    jsonError: undefined,
    text: JSON.stringify(error),
  };
  expect(levels(judge(list, caseOf(list, 'method TRACE /inventory'), { kind: 'response', response: own }, true))).toEqual(['GEN-04 fail']);
  const mismatch = { ...own, json: { ...error, status: 400 }, text: JSON.stringify({ ...error, status: 400 }), missingRateLimit: [] };
  expect(levels(judge(list, caseOf(list, 'method TRACE /inventory'), { kind: 'response', response: mismatch }, true))).toEqual([
    'GEN-03 fail',
  ]);
});

test('an operation of the spec sent as valid HTTP is judged by the spec: the same HTML 400 fails GEN-03 and GEN-04', () => {
  const truncated = caseOf(update, 'body (body): truncated JSON');
  expect(levels(judge(update, truncated, { kind: 'response', response: nginx('PATCH', 400) }, true))).toEqual([
    'GEN-03 fail',
    'GEN-04 fail',
  ]);
});

test("who answered: the Server header, or its absence, and the body's shape", () => {
  expect(answeredBy({ headers: { Server: 'HAProxy' }, text: 'Too many' })).toBe('HAProxy (Server header), a text body');
  expect(answeredBy({ headers: {}, text: '' })).toBe('an answerer without a Server header, an empty body');
  expect(bodyShape({ headers: { 'content-type': 'application/problem+json' }, text: '{}' })).toBe('a JSON body');
  expect(bodyShape({ headers: { 'content-type': 'text/plain' }, text: '<html><body>x</body></html>' })).toBe('an HTML body');
  expect(bodyShape({ headers: { 'content-type': 'application/octet-stream' }, text: 'x' })).toBe('a body of type application/octet-stream');
  // Headers only (a refused request's record): the shape comes from Content-Type alone.
  expect(answeredBy({ headers: { server: 'gate', 'content-type': 'text/html; charset=utf-8' } })).toBe(
    'gate (Server header), an HTML body',
  );
  expect(answeredBy({ headers: {} })).toBe('an answerer without a Server header, a body without Content-Type');
});
