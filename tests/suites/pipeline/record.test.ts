/** The record layer (suites/fixtures/pipeline/record.ts): the answer redacted, and at most MAX_EVIDENCE_PER_TEST exchanges listed. */
import { test, expect } from '../../test.ts';
import { evidenceRecorder, headerPairs, MAX_EVIDENCE_PER_TEST, recordedResponse } from '../../../suites/fixtures/pipeline/record.ts';
import { ANNOTATION } from '../../../core/results.ts';
import { redactorOf, type Secret } from '../../../core/secrets.ts';
import type { RecordedExchange } from '../../../core/exchange.ts';

const KEY = 'pipeline-test-key-0123456789abcdef';
const secrets: Secret[] = [{ name: 'API_KEY', value: KEY }];
const clean = redactorOf(secrets);
const exchange: RecordedExchange = {
  startedDateTime: new Date(0).toISOString(),
  timeMs: 3,
  request: { method: 'GET', url: 'http://127.0.0.1:9/v1/inventory', headers: [] },
  response: { status: 401, statusText: '', headers: [], body: '' },
};
const raw = {
  status: 401,
  rawHeaders: ['X-Echo', `Bearer ${KEY}`, 'Content-Type', 'application/json'],
  body: `{"code":"unauthorized","message":"bad key ${KEY}","petId":9007199254740993}`,
};

test('the answer as the checks read it: headers and body redacted, int64-safe, labelled, with a curl line', () => {
  const pairs = headerPairs(raw, clean);
  expect(pairs).toEqual([
    { name: 'X-Echo', value: 'Bearer <API_KEY>' },
    { name: 'Content-Type', value: 'application/json' },
  ]);
  const res = recordedResponse(
    {
      s: { method: 'GET', base: 'inventory', path: '/inventory' },
      url: new URL('http://127.0.0.1:9/v1/inventory'),
      raw,
      pairs,
      exchange,
      receivedAtMs: 1,
    },
    clean,
  );
  expect(res.text).not.toContain(KEY);
  expect(res.header('x-echo')).toBe('Bearer <API_KEY>');
  expect((res.json as { petId: unknown }).petId).toBe(9007199254740993n);
  expect(res.label).toBe('GET /v1/inventory → 401');
  expect(res.curl).toContain('curl');
});

test('evidence: two annotations an exchange up to the cap, then one line for the rest, then the requests count; no key in any', () => {
  const annotations: { type: string; description: string }[] = [];
  const evidence = evidenceRecorder((a) => annotations.push(a), secrets);
  const res = recordedResponse(
    {
      s: { method: 'GET', base: 'inventory', path: '/inventory' },
      url: new URL('http://127.0.0.1:9/v1/inventory'),
      raw,
      pairs: headerPairs(raw, clean),
      exchange,
      receivedAtMs: 1,
    },
    clean,
  );
  for (let i = 0; i < MAX_EVIDENCE_PER_TEST + 3; i++) evidence.record(res, `Bearer ${KEY}`, headerPairs(raw, clean));
  evidence.finish(31);
  expect(annotations.filter((a) => a.type === ANNOTATION.evidence)).toHaveLength(MAX_EVIDENCE_PER_TEST + 1);
  expect(annotations).toHaveLength(2 * MAX_EVIDENCE_PER_TEST + 2);
  expect(annotations.at(-2)).toEqual({ type: ANNOTATION.evidence, description: '… 3 more exchanges not listed' });
  expect(annotations.at(-1)).toEqual({ type: ANNOTATION.requests, description: '31' });
  expect(JSON.stringify(annotations)).not.toContain(KEY);
});
