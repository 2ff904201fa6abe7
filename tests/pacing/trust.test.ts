/**
 * A count the run cannot read as one key's own (`KeyPacer`, suites/pacing/pacer.ts): a Remaining
 * that moved with the run's other keys, or that stayed at Limit on counted responses, makes the
 * run's keys one bucket, sent on one request at a time, every 429 holding every key; another
 * client's fall does so for its key alone. Conformant counts keep their bursts.
 */
import { test, expect } from '../test.ts';
import { KeyPacer, type RunTraffic } from '../../suites/pacing/pacer.ts';

const T0 = Date.UTC(2026, 10, 22, 8, 0, 0);
const reset = T0 / 1000 + 30;
const h = (remaining: number, limit = 60) => ({
  'X-RateLimit-Limit': String(limit),
  'X-RateLimit-Remaining': String(remaining),
  'X-RateLimit-Reset': String(reset),
  Date: new Date(T0).toUTCString(),
});
const run = () => {
  const traffic: RunTraffic = { granted: 0, inflight: 0 };
  const key = (label: string) => new KeyPacer({ label, reserve: 3, maxWaitMs: 120_000 }, traffic);
  return { traffic, key };
};
function send(p: KeyPacer, status: number, headers: Record<string, string>, mode: 'paced' | 'exhaust' = 'paced') {
  p.granted(T0, 1);
  return p.observe({ status, headers, receivedAtMs: T0, mode });
}

test("one bucket for every key: a key's Remaining that fell with another key's requests makes every key one request at a time, and a predicted 429 holds them all", () => {
  const { traffic, key } = run();
  const a = key('<API_KEY>');
  const b = key('<RATE_LIMIT_KEY>');
  send(a, 200, h(50));
  expect(a.decide(T0, { mode: 'paced', count: 10 })).toEqual({ kind: 'grant', count: 10 });
  // Ten requests on B meanwhile; A's next answer shows them: 50 → 39 with one request of its own.
  for (let r = 49; r >= 40; r--) send(b, 200, h(r));
  send(a, 200, h(39));
  expect(traffic.untrusted).toMatch(
    /fell from 50 to 39 while the run sent 1 request\(s\) on it and 10 on its other keys: the limit is shared/,
  );
  expect(a.report().untrusted).toBe(traffic.untrusted);
  // From then on: one request at a time on every key, whatever the mode and Remaining.
  expect(b.decide(T0, { mode: 'exhaust', count: 40 })).toMatchObject({
    kind: 'grant',
    count: 1,
    limitedBy: expect.stringMatching(/^one request at a time: /),
  });
  b.granted(T0, 1);
  expect(a.decide(T0, { mode: 'paced' })).toMatchObject({
    kind: 'wait',
    reason: expect.stringMatching(/one request at a time on every key/),
  });
  // A 429 its own Remaining predicted (0 left) still holds every key: they are one bucket.
  b.observe({ status: 200, headers: h(0), receivedAtMs: T0, mode: 'exhaust' });
  const refused = send(b, 429, { ...h(0), 'Retry-After': '5' }, 'exhaust');
  expect(refused.holdAll).toMatchObject({ untilMs: T0 + 5020, reason: expect.stringMatching(/cannot read as its own/) });
  expect(a.decide(T0, { mode: 'paced' }).kind).toBe('grant'); // nothing in flight: one, until the coordinator's hold
});

test('a Remaining that stays at Limit: one counted answer at Limit is only suspect (a burst of Remaining + 1 still goes at once); twice in a row the run is one bucket', () => {
  const { traffic, key } = run();
  const a = key('<RATE_LIMIT_KEY>');
  send(a, 200, h(60));
  // An off-by-one limiter shows Remaining = Limit after its first request: the burst that catches it goes at once.
  expect(a.decide(T0, { mode: 'exhaust', count: 61 })).toMatchObject({ kind: 'grant', count: 61 });
  expect(traffic.untrusted).toBeUndefined();
  a.granted(T0, 1);
  a.observe({ status: 200, headers: h(60), receivedAtMs: T0, mode: 'exhaust' });
  expect(traffic.untrusted).toMatch(/stayed at X-RateLimit-Limit 60 on two counted responses in a row: it does not fall as the run sends/);
  // The 429 that the static count never announced holds every key; the next key asks one at a time.
  expect(send(a, 429, { ...h(0), 'Retry-After': '3' }, 'exhaust').holdAll).toBeDefined();
  const b = key('<API_KEY>');
  send(b, 200, h(40));
  expect(b.decide(T0, { mode: 'paced', count: 5 })).toMatchObject({ kind: 'grant', count: 1 });
});

test('one uncounted answer at Limit (a fresh window, a request the server does not charge) leaves the count trusted', () => {
  const { traffic, key } = run();
  const a = key('<API_KEY>');
  send(a, 200, h(60));
  send(a, 200, h(59));
  expect(traffic.untrusted).toBeUndefined();
  expect(a.decide(T0, { mode: 'paced', count: 10 })).toEqual({ kind: 'grant', count: 10 });
  // A 401's headers and those of requests without a key are never the key's count.
  const anon = key('<anonymous>');
  send(anon, 401, h(60));
  send(anon, 200, h(60));
  expect(traffic.untrusted).toBeUndefined();
});

test('another client on a key (a fall beyond all the run sent) sends that key one at a time and its 429s hold every key; the other keys keep their bursts', () => {
  const { traffic, key } = run();
  const a = key('<API_KEY>');
  const b = key('<LOAD_KEY>');
  send(a, 200, h(50));
  send(a, 200, h(30));
  expect(traffic.untrusted).toBeUndefined();
  expect(a.report().untrusted).toMatch(/fell from 50 to 30 while the run sent 1 request\(s\) on it: another client spends its limit/);
  expect(a.decide(T0, { mode: 'paced', count: 10 })).toMatchObject({ kind: 'grant', count: 1 });
  send(b, 200, h(50));
  expect(b.decide(T0, { mode: 'paced', count: 10 })).toEqual({ kind: 'grant', count: 10 });
  send(a, 200, h(1));
  expect(send(a, 429, { ...h(0), 'Retry-After': '2' }).holdAll).toBeDefined();
});

test('conformant counts keep their bursts: a per-key limit beside other keys, and a Remaining that rose with time', () => {
  const { traffic, key } = run();
  const a = key('<API_KEY>');
  const b = key('<RATE_LIMIT_KEY>');
  send(a, 200, h(50));
  for (let r = 59; r >= 50; r--) send(b, 200, h(r));
  send(a, 200, h(49));
  send(a, 200, h(55)); // a bucket refilled, alone in flight
  expect(traffic.untrusted).toBeUndefined();
  expect(a.report().untrusted).toBeUndefined();
  expect(b.decide(T0, { mode: 'exhaust', count: 51 })).toEqual({ kind: 'grant', count: 51 });
});
