/**
 * `KeyPacer` (suites/pacing/pacer.ts), the pure logic the coordinator runs per key: reserve and
 * reset waits judged by the server's Date, Retry-After holds in every mode, grants bounded by
 * Remaining minus what is in flight, the newest window wins and late answers are ignored,
 * conservative pacing when the headers are unusable, "not certified" past the maximum wait.
 */
import { test, expect } from '../test.ts';
import { KeyPacer } from '../../suites/pacing/pacer.ts';

const T0 = Date.UTC(2026, 10, 22, 8, 0, 0);
const h = (remaining: number, resetS: number, dateMs = T0, extra: Record<string, string> = {}) => ({
  'X-RateLimit-Limit': '60',
  'X-RateLimit-Remaining': String(remaining),
  'X-RateLimit-Reset': String(resetS),
  Date: new Date(dateMs).toUTCString(),
  ...extra,
});
const pacer = (reserve = 3) => new KeyPacer({ label: '<API_KEY>', reserve, maxWaitMs: 120_000 });
const reset = (inS: number) => T0 / 1000 + inS;
function answer(p: KeyPacer, status: number, headers: Record<string, string>, at = T0) {
  p.granted(at, 1);
  return p.observe({ status, headers, receivedAtMs: at, mode: 'paced' });
}

test('the first request is granted alone; then grants are bounded by Remaining minus the reserve and what is in flight', () => {
  const p = pacer(3);
  expect(p.decide(T0, { mode: 'paced', count: 10 })).toEqual({ kind: 'grant', count: 1 });
  p.granted(T0, 1);
  expect(p.decide(T0, { mode: 'paced' }).kind).toBe('wait'); // learning the window from the first answer
  p.observe({ status: 200, headers: h(10, reset(30)), receivedAtMs: T0 });
  expect(p.decide(T0, { mode: 'paced', count: 10 })).toEqual({ kind: 'grant', count: 7 });
  p.granted(T0, 7);
  expect(p.decide(T0, { mode: 'paced' })).toMatchObject({ kind: 'wait' });
  expect(p.decide(T0, { mode: 'exhaust', count: 10, withinRemaining: true })).toEqual({ kind: 'grant', count: 3 });
});

test('at the reserve it waits for Reset judged by the server Date, not the local clock', () => {
  const p = pacer(3);
  const local = T0 - 500_000; // the local clock runs 500 s behind the server
  answer(p, 200, h(3, reset(30)), local);
  const d = p.decide(local, { mode: 'paced' });
  expect(d.kind).toBe('wait');
  if (d.kind === 'wait') {
    expect(d.waitMs).toBeGreaterThanOrEqual(30_000);
    expect(d.waitMs).toBeLessThanOrEqual(32_000);
    expect(d.reason).toContain('reserve');
  }
  // After the reset, what Remaining said is forgotten: one request learns the new window.
  expect(p.decide(local + 32_000, { mode: 'paced', count: 5 })).toEqual({ kind: 'grant', count: 1 });
});

test('a 429 holds every mode until Retry-After (delta or HTTP-date) has passed', () => {
  for (const retryAfter of ['5', new Date(T0 + 5000).toUTCString()]) {
    const p = pacer();
    const r = answer(p, 429, h(0, reset(30), T0, { 'Retry-After': retryAfter }));
    expect(r.blockedForMs).toBeGreaterThanOrEqual(5000);
    for (const mode of ['paced', 'exhaust'] as const) {
      const d = p.decide(T0 + 4900, { mode, count: 1 });
      expect(d.kind).toBe('wait');
    }
    expect(p.decide(T0 + 5100, { mode: 'exhaust' }).kind).toBe('grant');
  }
});

test('a 429 without a usable Retry-After holds until Reset, else a fixed hold it states, at most the longest wait', () => {
  const p = pacer();
  expect(answer(p, 429, h(0, reset(20), T0, { 'Retry-After': '2.0' })).retryAfterProblem).toContain('not delta-seconds');
  expect(p.blockedUntil).toBeGreaterThanOrEqual(T0 + 20_000);
  const q = pacer();
  expect(answer(q, 429, {}).holdAll?.reason).toMatch(/without Retry-After nor a usable X-RateLimit-Reset .* waits a fixed 10 s$/);
  expect(q.blockedUntil).toBe(T0 + 10_000);
  const short = new KeyPacer({ label: '<API_KEY>', maxWaitMs: 4000, fallbackHoldMs: 60_000 });
  answer(short, 429, {});
  expect(short.blockedUntil).toBe(T0 + 4000);
});

test('exhaust: with nothing in flight a grant asked beyond Remaining is Remaining + 1; withinRemaining keeps the request past the limit alone', () => {
  const p = pacer();
  answer(p, 200, h(5, reset(30)));
  expect(p.decide(T0, { mode: 'exhaust', count: 50 })).toEqual({ kind: 'grant', count: 6 });
  expect(p.decide(T0, { mode: 'exhaust', count: 50, withinRemaining: true })).toEqual({ kind: 'grant', count: 5 });
  p.granted(T0, 4); // the burst of five: four of them end unanswered, the fifth says Remaining 0
  p.release(4);
  answer(p, 200, h(0, reset(30)));
  expect(p.decide(T0, { mode: 'exhaust', count: 50, withinRemaining: true })).toEqual({ kind: 'grant', count: 1 });
  expect(p.decide(T0, { mode: 'paced' }).kind).toBe('wait');
});

test('exhaust: after a 429 its Remaining did not predict, the key gets no burst past the announced limit, and the grant says why', () => {
  const p = pacer();
  answer(p, 200, h(2, reset(30)));
  p.granted(T0, 2);
  p.observe({ status: 200, headers: h(1, reset(30)), receivedAtMs: T0, mode: 'exhaust' });
  // Remaining said 1 with one in flight: the server refused one early.
  p.observe({ status: 429, headers: h(0, reset(30), T0, { 'Retry-After': '2' }), receivedAtMs: T0, mode: 'exhaust' });
  const later = T0 + 31_000;
  answer(p, 200, h(5, reset(90), later), later);
  const d = p.decide(later, { mode: 'exhaust', count: 50 });
  expect(d).toMatchObject({ kind: 'grant', count: 5 });
  expect(d.kind === 'grant' && d.limitedBy).toMatch(/<API_KEY>.*X-RateLimit-Remaining said 1.*no burst goes past the announced limit/);
  // Within Remaining nothing is withheld, so nothing needs saying.
  expect(p.decide(later, { mode: 'exhaust', count: 3 })).toEqual({ kind: 'grant', count: 3 });
});

test('answers out of order: the lowest Remaining of one Reset is kept, a newer Reset replaces it, an older one is ignored', () => {
  const p = pacer(0);
  p.granted(T0, 2); // two in flight: their answers may come in any order
  p.observe({ status: 200, headers: h(5, reset(30)), receivedAtMs: T0, mode: 'paced' });
  p.observe({ status: 200, headers: h(8, reset(30)), receivedAtMs: T0, mode: 'paced' });
  expect(p.lastRemaining).toBe(5);
  answer(p, 200, h(40, reset(31))); // a bucket refilled, or a new window
  expect(p.lastRemaining).toBe(40);
  answer(p, 200, h(2, reset(30))); // a late answer of the older state
  expect(p.lastRemaining).toBe(40);
});

test('the only answer in flight is the newest state: a Remaining that rose under the same Reset (a token bucket, GCRA or weighted counter refilled) is taken', () => {
  const p = pacer(0);
  answer(p, 200, h(0, reset(30)));
  answer(p, 200, h(11, reset(30)));
  expect(p.lastRemaining).toBe(11);
  expect(p.decide(T0, { mode: 'exhaust', count: 12 })).toEqual({ kind: 'grant', count: 12 });
});

test('another consumer: a Remaining below what this run sent since a quiet moment is named; refills, new windows and answers out of order are not', () => {
  // One at a time: 10, then 9 after one more request: all the run's own.
  const p = pacer(0);
  answer(p, 200, h(10, reset(30)));
  answer(p, 200, h(9, reset(30)));
  expect(p.report().anotherClient).toBeUndefined();
  // Overlapped answers read out of order, a refill (a token bucket, GCRA) and a new window: never a fall beyond what was sent.
  p.granted(T0, 3);
  p.observe({ status: 200, headers: h(6, reset(30)), receivedAtMs: T0 });
  p.observe({ status: 200, headers: h(8, reset(30)), receivedAtMs: T0 });
  p.observe({ status: 200, headers: h(7, reset(30)), receivedAtMs: T0 });
  answer(p, 200, h(9, reset(30))); // refilled under the same Reset
  answer(p, 200, h(59, reset(90))); // a new window
  expect(p.report().anotherClient).toBeUndefined();
  // From 59, one request answered with 40: 18 spent by someone else.
  answer(p, 200, h(40, reset(90)));
  expect(p.report().anotherClient).toBe(
    'X-RateLimit-Remaining on <API_KEY> fell from 59 to 40 while this run sent 1 request(s) on it: 18 more were spent by another client on the key, or by others sharing its limit',
  );
});

test('another consumer: answers describing another window (another X-RateLimit-Limit, the day instead of the minute) are not compared', () => {
  const p = pacer(0);
  answer(p, 200, h(986, reset(30), T0, { 'X-RateLimit-Limit': '1000' }));
  answer(p, 200, h(282, reset(30), T0, { 'X-RateLimit-Limit': '300' }));
  answer(p, 200, h(281, reset(30), T0, { 'X-RateLimit-Limit': '300' }));
  expect(p.report().anotherClient).toBeUndefined();
  answer(p, 200, h(270, reset(30), T0, { 'X-RateLimit-Limit': '300' }));
  expect(p.report().anotherClient).toContain('fell from 281 to 270 while this run sent 1 request(s)');
});

test('another consumer: the inventory and the quickstart may count a key in limiters of their own, so only answers of one service are compared', () => {
  const p = pacer(0);
  const from = (service: string, remaining: number) => {
    p.granted(T0, 1);
    p.observe({ status: 200, headers: h(remaining, reset(30)), receivedAtMs: T0, service });
  };
  // Two counters of the same key, read in turn: each falls by one a request.
  for (let i = 0; i < 5; i++) {
    from('http://inventory.test', 290 - i);
    from('http://quickstart.test', 190 - i);
  }
  expect(p.report().anotherClient).toBeUndefined();
  // One service's own counter falls by more than the run sent: named, as before.
  from('http://quickstart.test', 150);
  expect(p.report().anotherClient).toContain('fell from 186 to 150 while this run sent 1 request(s)');
});

test("another consumer: the inventory and the quickstart counting the key in one limiter, their answers overlapped, are the run's own requests", () => {
  const p = pacer(0);
  // Remaining 275 from the list; a list and a message overlap, the server counts the list (274), then the message (273).
  answer(p, 200, h(275, reset(30)));
  p.granted(T0, 2);
  p.observe({ status: 200, headers: h(274, reset(30)), receivedAtMs: T0, service: 'http://inventory.test' });
  p.observe({ status: 200, headers: h(273, reset(30)), receivedAtMs: T0, service: 'http://quickstart.test' });
  // The next list reads 272: one request after the message, and the message was counted after the list's 274.
  p.granted(T0, 1);
  p.observe({ status: 200, headers: h(272, reset(30)), receivedAtMs: T0, service: 'http://inventory.test' });
  expect(p.report().anotherClient).toBeUndefined();
  // A fall beyond every request granted since the batch began is still named.
  p.granted(T0, 1);
  p.observe({ status: 200, headers: h(250, reset(30)), receivedAtMs: T0, service: 'http://inventory.test' });
  expect(p.report().anotherClient).toContain('fell from 272 to 250 while this run sent 1 request(s)');
});

test('a 401 to a request that carried the key in a refused form says nothing of the key: its headers (the limit kept for unauthenticated callers) neither move Remaining nor name another client', () => {
  const p = pacer(0);
  answer(p, 200, h(104, reset(30)));
  answer(p, 401, h(296, reset(30))); // the only answer in flight: it would have raised Remaining to 296
  expect(p.lastRemaining).toBe(104);
  answer(p, 200, h(103, reset(30)));
  expect(p.report().anotherClient).toBeUndefined();
  // Without a key a 401 is the normal answer, and its headers are the label's own.
  const anonymous = new KeyPacer({ label: '<anonymous>', reserve: 0 });
  answer(anonymous, 401, h(50, reset(30)));
  expect(anonymous.lastRemaining).toBe(50);
});

test("another consumer: the run's own requests on other keys explain a fall (a limit shared by several keys)", () => {
  const traffic = { granted: 0, inflight: 0 };
  const a = new KeyPacer({ label: '<API_KEY>', reserve: 0 }, traffic);
  const b = new KeyPacer({ label: '<anonymous>', reserve: 0 }, traffic);
  answer(a, 200, h(50, reset(30)));
  for (let i = 0; i < 5; i++) answer(b, 200, h(40, reset(30)));
  answer(a, 200, h(44, reset(30))); // 1 on this key, 5 on another: 6 of the run's own
  expect(a.report().anotherClient).toBeUndefined();
  answer(a, 200, h(30, reset(30)));
  expect(a.report().anotherClient).toContain('fell from 44 to 30 while this run sent 1 request(s)');
});

test('another consumer: the state of an overlapped batch is its lowest Remaining, so a late answer read last never counts as a fall', () => {
  const p = pacer(0);
  answer(p, 200, h(20, reset(30)));
  p.granted(T0, 2);
  p.observe({ status: 200, headers: h(18, reset(30)), receivedAtMs: T0 }); // counted last, read first
  p.observe({ status: 200, headers: h(19, reset(30)), receivedAtMs: T0 }); // counted first, read last: the quiet state is 18, not 19
  answer(p, 200, h(17, reset(30)));
  expect(p.report().anotherClient).toBeUndefined();
});

test('unusable headers never switch pacing off: one at a time, spaced at the nominal rate', () => {
  const p = pacer();
  answer(p, 200, { 'X-RateLimit-Limit': '120', 'X-RateLimit-Remaining': '50', 'X-RateLimit-Reset': String(T0) }); // Reset in ms
  expect(p.decide(T0, { mode: 'paced', count: 5 })).toMatchObject({ kind: 'wait', waitMs: 500 }); // 120 per minute
  expect(p.decide(T0 + 500, { mode: 'paced', count: 5 })).toEqual({ kind: 'grant', count: 1 });
  p.granted(T0 + 500, 1);
  expect(p.decide(T0 + 2000, { mode: 'paced' })).toMatchObject({ kind: 'wait' }); // one in flight
  // Nothing at all: the plan's rate, else the smallest plan's 60 per minute.
  const q = pacer();
  answer(q, 200, {});
  expect(q.decide(T0, { mode: 'paced', nominalPerMinute: 300 })).toMatchObject({ kind: 'wait', waitMs: 200 });
  const r = pacer();
  answer(r, 200, {});
  expect(r.decide(T0, { mode: 'paced' })).toMatchObject({ kind: 'wait', waitMs: 1000 });
  // Remaining at the reserve without a usable Reset: a nominal minute.
  const s = pacer(3);
  answer(s, 200, { 'X-RateLimit-Remaining': '2' });
  expect(s.decide(T0 + 1000, { mode: 'paced' })).toMatchObject({ kind: 'wait', waitMs: 59_000 });
});

test('a wait beyond the maximum is "not certified" with the reason; the report counts it', () => {
  const p = new KeyPacer({ label: '<RATE_LIMIT_KEY>', maxWaitMs: 30_000 });
  answer(p, 429, { 'Retry-After': '600' });
  const d = p.decide(T0, { mode: 'exhaust' });
  expect(d).toMatchObject({ kind: 'not-certified' });
  if (d.kind === 'not-certified') expect(d.reason).toMatch(/<RATE_LIMIT_KEY>.*600 s is longer than MAX_RETRY_AFTER_S=30 s/);
  expect(p.report()).toMatchObject({ refused: 1, unplanned429: 1, earlyGrants: 0, notCertified: [expect.any(String)] });
});

test("a 429 to the first request after a 429's wait is reported as a suspected ban", () => {
  const p = pacer();
  answer(p, 429, h(0, reset(30), T0, { 'Retry-After': '1' }));
  answer(p, 429, h(0, reset(30), T0 + 1100, { 'Retry-After': '600' }), T0 + 1100);
  expect(p.report().suspectedBans).toBe(1);
});

test('a 429 with an HTTP-date Retry-After in any of the three formats (IMF-fixdate, RFC 850, asctime) holds until that date', () => {
  // T0 is Sun, 22 Nov 2026 08:00:00 GMT; each value is T0 + 4 s.
  for (const value of ['Sun, 22 Nov 2026 08:00:04 GMT', 'Sunday, 22-Nov-26 08:00:04 GMT', 'Sun Nov 22 08:00:04 2026']) {
    const p = pacer();
    const r = answer(p, 429, { 'Retry-After': value, Date: new Date(T0).toUTCString() });
    expect(r.retryAfterProblem).toBeUndefined();
    expect(r.blockedForMs).toBe(4000 + p.options.retryAfterMarginMs);
    expect(p.decide(T0 + 4000, { mode: 'exhaust' }).kind).toBe('wait');
    expect(p.decide(T0 + 4000 + p.options.retryAfterMarginMs, { mode: 'exhaust' }).kind).toBe('grant');
  }
});

test('requests in flight count against Remaining; a release gives them back', () => {
  const p = pacer(2);
  answer(p, 200, h(5, reset(30)));
  p.granted(T0, 3);
  expect(p.decide(T0, { mode: 'paced' })).toMatchObject({ kind: 'wait' });
  p.release(1);
  expect(p.decide(T0, { mode: 'paced', count: 5 })).toEqual({ kind: 'grant', count: 1 });
  expect(p.report()).toMatchObject({ granted: 4, released: 1 });
});

test('a Retry-After beyond the maximum closes the key for the run, however large (never read as a timestamp)', () => {
  for (const retryAfter of ['99999999999', '1000000000', '121']) {
    const p = pacer();
    answer(p, 200, h(1, reset(30)));
    answer(p, 429, h(0, reset(30), T0, { 'Retry-After': retryAfter }));
    const first = p.decide(T0 + 1000, { mode: 'paced' });
    expect(first.kind).toBe('not-certified');
    // Long after the wait, whatever it was: nothing more on this key for the rest of the run.
    const later = p.decide(T0 + 10 * 86_400_000, { mode: 'exhaust' });
    expect(later).toMatchObject({
      kind: 'not-certified',
      reason: expect.stringMatching(/nothing more is sent on <API_KEY> for the rest of the run/),
    });
    expect(p.report().closed).toMatch(/longer than MAX_RETRY_AFTER_S=120 s/);
  }
});

const PREDICTION: Array<{ name: string; before: Array<Record<string, string>>; inFlight: number; holdAll: boolean }> = [
  { name: 'Remaining 0 before the request past the limit', before: [h(0, reset(30))], inFlight: 1, holdAll: false },
  { name: 'Remaining 2 with three in flight', before: [h(2, reset(30))], inFlight: 3, holdAll: false },
  { name: 'Remaining 5 with one in flight', before: [h(5, reset(30))], inFlight: 1, holdAll: true },
  { name: 'no Remaining seen yet', before: [], inFlight: 1, holdAll: true },
];
for (const c of PREDICTION) {
  test(`a 429 with ${c.name} ${c.holdAll ? 'was not' : 'was'} predicted by the key's own Remaining`, () => {
    const p = pacer(0);
    for (const headers of c.before) answer(p, 200, headers);
    p.granted(T0, c.inFlight);
    const r = p.observe({ status: 429, headers: h(0, reset(30), T0, { 'Retry-After': '4' }), receivedAtMs: T0, mode: 'exhaust' });
    expect(r.holdAll !== undefined).toBe(c.holdAll);
    if (r.holdAll) {
      expect(r.holdAll.untilMs).toBeGreaterThanOrEqual(T0 + 4000);
      expect(r.holdAll.reason).toMatch(/did not predict/);
    }
  });
}

test('a run-wide hold keeps another key waiting until it passes; one beyond the maximum closes it', () => {
  const p = pacer();
  p.hold(T0 + 3000, 'held: a 429 on <RATE_LIMIT_KEY>');
  expect(p.decide(T0 + 2900, { mode: 'paced' })).toMatchObject({ kind: 'wait', reason: 'held: a 429 on <RATE_LIMIT_KEY>' });
  expect(p.decide(T0 + 3100, { mode: 'paced' }).kind).toBe('grant');
  p.hold(T0 + 10_000_000, 'held long');
  expect(p.decide(T0 + 4000, { mode: 'paced' }).kind).toBe('not-certified');
  expect(p.decide(T0 + 20_000_000, { mode: 'paced' }).kind).toBe('not-certified');
});
