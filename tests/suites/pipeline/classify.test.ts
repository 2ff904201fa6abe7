/** The one place a request's outcome is decided (suites/fixtures/pipeline/classify.ts): answered, lost, or unjudgeable with the reason. */
import { test, expect } from '../../test.ts';
import {
  classifyAnswer,
  classifyFailure,
  classifyTimeout,
  deliver,
  outcomeOfThrown,
  probeCredential,
  stopOf,
} from '../../../suites/fixtures/pipeline/classify.ts';
import { Unjudgeable, type Outcome } from '../../../suites/fixtures/pipeline/types.ts';
import { TransportError } from '../../../core/transport.ts';
import { ANNOTATION } from '../../../core/results.ts';
import type { ApiResponse } from '../../../suites/fixtures/api-types.ts';

const clean = (t: string) => t.replaceAll('sekrit', '<API_KEY>');
const answer = (status: number, headers: Record<string, string> = {}) =>
  ({
    status,
    label: `GET /v1/inventory → ${status}`,
    curl: 'curl …',
    header: (n: string) => headers[n.toLowerCase()],
  }) as unknown as ApiResponse;
const timeout = (stalledMs: number) =>
  new TransportError('timeout', 'no complete answer within REQUEST_TIMEOUT_MS=2000 ms', undefined, 0, 2000, false, false, stalledMs);
const notCertified = (reason: string): never => {
  throw new Error(`NC ${reason}`);
};

test('an answer is answered; a 429 the check did not plan is unjudgeable, judging what the 429 itself breaks', () => {
  const c = { expect429: false, prefix: 'INV-01: ', bucket: '<API_KEY>', clean };
  expect(classifyAnswer(answer(200), {}, c)).toMatchObject({ kind: 'answered' });
  expect(classifyAnswer(answer(429), {}, { ...c, expect429: true })).toMatchObject({ kind: 'answered' });
  const bare = classifyAnswer(answer(429), { blockedForMs: 5000 }, c);
  expect(bare.kind).toBe('unjudgeable');
  if (bare.kind !== 'unjudgeable') return;
  expect(bare.reason).toMatch(/^INV-01: GET \/v1\/inventory → 429: a 429 the check did not plan, on <API_KEY>/);
  expect(bare.reason).toContain('nothing more is sent on <API_KEY> for 5 s');
  expect(bare.findings?.map((f) => f.id)).toEqual(['RL-06', 'RL-01', 'RL-09']);
  const full = classifyAnswer(
    answer(429, { 'retry-after': '5', 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '5' }),
    {},
    c,
  );
  expect(full).toMatchObject({ kind: 'unjudgeable', findings: [] });
});

test('the stalled-runner rule: a timeout judged by a process held a second or more is unjudgeable; a timeout it kept, or a reset, is lost', () => {
  const held = classifyFailure(timeout(1500), 'INV-01: GET /v1/inventory', 2000, clean);
  expect(held).toMatchObject({ kind: 'unjudgeable' });
  if (held.kind === 'unjudgeable') expect(held.reason).toContain('this process was held 1500 ms from running');
  expect(classifyFailure(timeout(900), 'INV-01: GET /v1/inventory', 2000, clean).kind).toBe('lost');
  // A tenth of a long deadline, when that is more than a second.
  expect(classifyFailure(timeout(1500), 'x', 30_000, clean).kind).toBe('lost');
  const reset = classifyFailure(
    new TransportError('socket', 'read ECONNRESET sekrit', 'ECONNRESET', 0, 5),
    'INV-01: GET /v1/inventory',
    2000,
    clean,
  );
  expect(reset).toMatchObject({ kind: 'lost' });
  if (reset.kind === 'lost') expect(reset.error.message).toBe('INV-01: GET /v1/inventory: request failed: read ECONNRESET <API_KEY>');
});

test('a timeout is lost only when the list right after it came back within half the deadline', () => {
  const failure = new Error('INV-01: GET /v1/inventory: request failed: timeout');
  const probe = (timeMs: number) => ({
    res: { label: 'GET /v1/inventory → 200', exchange: { timeMs } as ApiResponse['exchange'] },
    why: '',
    keyed: true,
  });
  expect(classifyTimeout(failure, probe(1000), 2000, clean).kind).toBe('lost');
  const slow = classifyTimeout(failure, probe(1001), 2000, clean);
  expect(slow.kind).toBe('unjudgeable');
  if (slow.kind === 'unjudgeable')
    expect(slow.reason).toContain('took 1001 ms (GET /v1/inventory → 200), more than half of REQUEST_TIMEOUT_MS');
  const none = classifyTimeout(failure, { why: 'INV-01: GET /v1/inventory: request failed: timeout', keyed: false }, 2000, clean);
  expect(none.kind).toBe('unjudgeable');
  if (none.kind === 'unjudgeable') expect(none.reason).toContain('with no key, as it was sent, got no answer either (GET /v1/inventory');
});

test('the probe goes with the request’s key in its plain form, or with none', () => {
  expect(probeCredential('rate-limit')).toBe('rate-limit');
  expect(probeCredential({ key: 'api', format: (k) => `bearer ${k}` })).toBe('api');
  expect(probeCredential({ authorization: 'Basic x' })).toBe('none');
});

test('delivery: the response returned, a loss thrown, an unjudgeable check not certified after its findings are recorded', () => {
  const annotations: { type: string }[] = [];
  const res = answer(200);
  expect(deliver({ kind: 'answered', res }, (a) => annotations.push(a), notCertified)).toBe(res);
  const error = new Error('lost');
  expect(() => deliver({ kind: 'lost', error }, (a) => annotations.push(a), notCertified)).toThrow(error);
  const findings = (
    classifyAnswer(answer(429), {}, { expect429: false, prefix: '', bucket: '<API_KEY>', clean }) as Outcome & { kind: 'unjudgeable' }
  ).findings;
  expect(() => deliver({ kind: 'unjudgeable', reason: 'why', findings }, (a) => annotations.push(a), notCertified)).toThrow('NC why');
  expect(annotations.map((a) => a.type)).toEqual([ANNOTATION.metFinding, ANNOTATION.metFinding, ANNOTATION.metFinding]);
});

test('a layer’s stop is unjudgeable; anything else a layer throws goes on as it is', () => {
  expect(outcomeOfThrown(new Unjudgeable('pacer gone'))).toEqual({ kind: 'unjudgeable', reason: 'pacer gone' });
  const other = new Error('bug');
  expect(() => outcomeOfThrown(other)).toThrow(other);
  expect(() => stopOf(new Unjudgeable('w'), notCertified)).toThrow('NC w');
  expect(() => stopOf(other, notCertified)).toThrow(other);
});
