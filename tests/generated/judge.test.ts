/**
 * The rules judged on every generated response (GEN-01 … GEN-05, GEN-08), and the replay token and
 * curl line of a failure (no key, `$API_KEY` instead).
 */
import { test, expect } from '../test.ts';
import { openapiDocument } from '../../schemas/index.ts';
import { operationsOf } from '../../suites/generated/document.ts';
import { judge, allowedRefusals, type JudgedResponse } from '../../suites/generated/judge.ts';
import type { GeneratedRequest } from '../../suites/generated/classes.ts';
import { curlCommand, decodeToken, encodeToken, shellQuote } from '../../suites/generated/replay.ts';

const ops = operationsOf(openapiDocument());
const update = ops.find((o) => o.id === 'updateInventory')!;
const RL = { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '5', 'x-ratelimit-reset': '1800000000' };

function res(status: number, body: unknown, extra: Partial<JudgedResponse> = {}): JudgedResponse {
  const text = body === undefined ? '' : JSON.stringify(body);
  return {
    method: 'PATCH',
    status,
    headers: { 'content-type': 'application/json', ...RL },
    json: body,
    text,
    missingRateLimit: [],
    ...extra,
  };
}
const req = (expect: GeneratedRequest['expect']): GeneratedRequest => ({
  method: 'PATCH',
  path: '/inventory/{petId}',
  headers: {},
  body: '{}',
  expect,
  note: 'test',
});
const ids = (f: { id: string }[]) => f.map((x) => x.id);
const err = (status: number) => ({ code: 'x', message: 'y', status });

test('a 5xx fails GEN-01 for every expectation; a missing answer fails GEN-02', () => {
  for (const e of ['negative', 'positive', 'odd'] as const)
    expect(ids(judge(update, req(e), { kind: 'response', response: res(500, err(500)) }, true))).toEqual(['GEN-01']);
  expect(ids(judge(update, req('odd'), { kind: 'no-response', error: 'socket hang up' }, true))).toEqual(['GEN-02']);
});

test('negative requests need a 4xx Error body whose status matches (GEN-03)', () => {
  expect(judge(update, req('negative'), { kind: 'response', response: res(400, err(400)) }, true)).toEqual([]);
  expect(judge(update, req('negative'), { kind: 'response', response: res(405, err(405)) }, true)).toEqual([]);
  expect(
    ids(judge(update, req('negative'), { kind: 'response', response: res(200, { petId: 1, quantity: 1, status: 'sold' }) }, true)),
  ).toEqual(['GEN-03']);
  expect(ids(judge(update, req('negative'), { kind: 'response', response: res(400, err(404)) }, true))).toEqual(['GEN-03']);
  expect(
    ids(
      judge(
        update,
        req('negative'),
        { kind: 'response', response: res(400, undefined, { text: 'Bad Request', json: undefined, jsonError: 'x' }) },
        true,
      ),
    ),
  ).toEqual(['GEN-03']);
});

test('every response needs the X-RateLimit headers (GEN-04)', () => {
  const r = res(405, err(405), { missingRateLimit: ['X-RateLimit-Limit'] });
  expect(ids(judge(update, req('odd'), { kind: 'response', response: r }, true))).toEqual(['GEN-04']);
});

test('positive requests need a schema-valid documented 2xx or a documented refusal (GEN-05)', () => {
  expect(allowedRefusals(update, true)).toEqual([400]);
  expect(allowedRefusals(update, false)).toEqual([400, 404]);
  expect(judge(update, req('positive'), { kind: 'response', response: res(200, { petId: 1, quantity: 5, status: 'sold' }) }, true)).toEqual(
    [],
  );
  expect(judge(update, req('positive'), { kind: 'response', response: res(400, err(400)) }, true)).toEqual([]);
  expect(ids(judge(update, req('positive'), { kind: 'response', response: res(404, err(404)) }, true))).toEqual(['GEN-05']);
  expect(judge(update, req('positive'), { kind: 'response', response: res(404, err(404)) }, false)).toEqual([]);
  expect(
    ids(judge(update, req('positive'), { kind: 'response', response: res(200, { petId: '1', quantity: 5, status: 'sold' }) }, true)),
  ).toEqual(['GEN-05']);
  expect(
    ids(judge(update, req('positive'), { kind: 'response', response: res(201, { petId: 1, quantity: 5, status: 'sold' }) }, true)),
  ).toEqual(['GEN-05']);
  expect(ids(judge(update, req('positive'), { kind: 'response', response: res(401, err(401)) }, true))).toEqual(['GEN-05']);
});

test('odd requests may get any 2xx, 3xx or 4xx, but a 4xx is an Error body (GEN-08)', () => {
  expect(judge(update, req('odd'), { kind: 'response', response: res(200, 'anything') }, true)).toEqual([]);
  expect(judge(update, req('odd'), { kind: 'response', response: res(301, undefined) }, true)).toEqual([]);
  expect(judge(update, req('odd'), { kind: 'response', response: res(415, err(415)) }, true)).toEqual([]);
  expect(ids(judge(update, req('odd'), { kind: 'response', response: res(415, { error: 'nope' }) }, true))).toEqual(['GEN-08']);
  expect(
    judge(
      update,
      { ...req('odd'), method: 'HEAD' },
      { kind: 'response', response: res(405, undefined, { method: 'HEAD', json: undefined }) },
      true,
    ),
  ).toEqual([]);
});

test('a replay token round-trips and a damaged one is refused', () => {
  const t = { check: 'cases' as const, op: 'updateInventory', cls: 'updateInventory url-form', seed: 12345, path: '0:1' };
  expect(decodeToken(encodeToken(t))).toEqual(t);
  expect(encodeToken(t)).toMatch(/^gen1\.[A-Za-z0-9_-]+$/);
  expect(() => decodeToken('nonsense')).toThrow(/not a replay token/);
  expect(() => decodeToken('gen1.!!!')).toThrow(/damaged|lacks/);
});

test('the curl line writes the key as $API_KEY and keeps every byte of the body', () => {
  const line = curlCommand({
    method: 'PATCH',
    url: 'http://127.0.0.1:1/v1/inventory/1',
    headers: { accept: "it's" },
    scheme: 'bearer',
    contentType: 'application/json',
    body: '{"quantity":5.0}',
  });
  expect(line).toBe(
    `curl -sS -i --path-as-is -X PATCH 'http://127.0.0.1:1/v1/inventory/1' -H "Authorization: bearer $API_KEY" -H 'accept: it'\\''s' -H 'Content-Type: application/json' --data-binary '{"quantity":5.0}'`,
  );
  const nul = curlCommand({
    method: 'POST',
    url: 'http://h/m',
    headers: {},
    scheme: 'Bearer',
    contentType: null,
    body: '\u0000{"m":"é%"}',
  });
  expect(nul).toBe(
    `printf '\\000{"m":"\\303\\251%%"}' | curl -sS -i --path-as-is -X POST 'http://h/m' -H "Authorization: Bearer $API_KEY" -H 'Content-Type:' --data-binary @-`,
  );
  expect(shellQuote("a'b")).toBe(`'a'\\''b'`);
});
