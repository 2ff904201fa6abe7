/** The readonly guard (suites/fixtures/pipeline/readonly-guard.ts): a change carrying a real key is never sent under readonly. */
import { test, expect } from '../../test.ts';
import { readonlyGuard, readonlyRefusal } from '../../../suites/fixtures/pipeline/readonly-guard.ts';
import { Unjudgeable, type PipelineRequest } from '../../../suites/fixtures/pipeline/types.ts';
import type { Lease } from '../../../suites/pacing/client.ts';

function request(method: string, carriesKey: boolean, lease?: Lease): PipelineRequest {
  return {
    s: { method, base: 'inventory', path: '/inventory/1', ...(lease ? { lease } : {}) },
    method,
    url: new URL('http://127.0.0.1:1/v1/inventory/1'),
    authorization: carriesKey ? 'Bearer k' : undefined,
    bucket: carriesKey ? '<API_KEY>' : '<anonymous>',
    carriesKey,
    headers: {},
    body: undefined,
    what: `INV-02: ${method} /v1/inventory/1`,
  };
}

test('under readonly, every method but GET, HEAD and OPTIONS is refused when the request carries a key', () => {
  for (const method of ['PATCH', 'POST', 'PUT', 'DELETE', 'TRACE'])
    expect(readonlyRefusal('readonly', true, method, '/v1/inventory/1')).toContain(`${method} /v1/inventory/1 would carry a real key`);
  for (const method of ['GET', 'HEAD', 'OPTIONS']) expect(readonlyRefusal('readonly', true, method, '/v1/inventory')).toBeUndefined();
});

test('a change without a key, or any request outside readonly, may go', () => {
  expect(readonlyRefusal('readonly', false, 'PATCH', '/v1/inventory/1')).toBeUndefined();
  expect(readonlyRefusal('full', true, 'PATCH', '/v1/inventory/1')).toBeUndefined();
});

test('a refused request is unjudgeable and gives back the lease it was handed; one that may go is left alone', () => {
  let released = 0;
  const lease = { granted: 1, observe: async () => ({}), release: async () => void released++ } as Lease;
  expect(() => readonlyGuard('readonly', request('PATCH', true, lease))).toThrow(Unjudgeable);
  expect(released).toBe(1);
  expect(() => readonlyGuard('readonly', request('GET', true, lease))).not.toThrow();
  expect(() => readonlyGuard('full', request('PATCH', true, lease))).not.toThrow();
  expect(released).toBe(1);
});
