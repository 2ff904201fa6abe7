/**
 * A 429 that says neither how long nor until when (a front door's own gate): the run holds every
 * key a fixed 10 s; such a 429 once more after that hold shows that waiting gives no more evidence:
 * every key waits the doubled hold (spec, Limits rule 4; never past MAX_RETRY_AFTER_S), is closed
 * for the checks, and only restores go out, one at a time, after the hold has passed
 * (suites/pacing/pacer.ts, holds.ts). No ban is read into a 429 after such a hold.
 */
import { test, expect } from '../test.ts';
import { KeyPacer } from '../../suites/pacing/pacer.ts';
import type { RunTraffic } from '../../suites/pacing/pacer-types.ts';

const T0 = Date.UTC(2026, 10, 22, 8, 0, 0);
/** The gate's page: no Retry-After, no X-RateLimit-*. */
const GATE = { 'Content-Type': 'text/html' };

function keys(maxWaitMs = 30_000) {
  const traffic: RunTraffic = { granted: 0, inflight: 0 };
  const key = (label: string) => new KeyPacer({ label, reserve: 3, maxWaitMs }, traffic);
  return { traffic, api: key('<API_KEY>'), load: key('<LOAD_KEY>') };
}
function refused(p: KeyPacer, at: number) {
  p.granted(at, 1);
  return p.observe({ status: 429, headers: GATE, receivedAtMs: at, mode: 'paced' });
}

test('a gate 429 without Retry-After: every key waits 10 s (the 429s of one burst are one hold); once more after it, 20 s, and every key is closed for the checks', () => {
  const { traffic, api, load } = keys();
  expect(refused(api, T0).blockedForMs).toBe(10_000);
  expect(refused(load, T0 + 500).blockedForMs).toBe(10_000);
  expect(traffic.closed).toBeUndefined();
  expect(api.decide(T0 + 10_000, { mode: 'paced' }).kind).toBe('grant');
  const again = refused(load, T0 + 12_000);
  expect(again.blockedForMs).toBe(20_000);
  expect(again.holdAll?.untilMs).toBe(T0 + 32_000);
  expect(traffic.closed).toMatch(
    /came again after the run's hold of 10 s had passed .* waiting gives no more evidence: every key waits 20 s/,
  );
  // Long after the hold, a check gets nothing on any key, the 429's or another.
  for (const p of [api, load])
    expect(p.decide(T0 + 3_600_000, { mode: 'paced' })).toMatchObject({
      kind: 'not-certified',
      reason: expect.stringMatching(/waiting gives no more evidence.*nothing more is sent on <(API|LOAD)_KEY> for the rest of the run/),
    });
  expect(api.report().suspectedBans + load.report().suspectedBans).toBe(0);
});

test('the doubled hold never passes MAX_RETRY_AFTER_S', () => {
  const { api } = keys(15_000);
  expect(refused(api, T0).blockedForMs).toBe(10_000);
  expect(refused(api, T0 + 11_000).blockedForMs).toBe(15_000);
});

test('on a closed key a restore waits for the pending hold (at most MAX_RETRY_AFTER_S), then goes alone, one at a time', () => {
  const { api, load } = keys();
  refused(api, T0);
  refused(api, T0 + 10_000);
  // Every key is held until T0 + 30 s by the last 429 (the coordinator holds them all: it said whose limit it was no more than how long).
  load.hold(T0 + 30_000, 'run-wide');
  expect(api.decide(T0 + 11_000, { mode: 'paced', restore: true })).toMatchObject({ kind: 'wait', waitMs: 19_000 });
  expect(api.decide(T0 + 30_000, { mode: 'paced', restore: true, count: 5 })).toEqual({ kind: 'grant', count: 1 });
  api.granted(T0 + 30_000, 1);
  expect(api.decide(T0 + 30_000, { mode: 'paced', restore: true })).toMatchObject({ kind: 'wait' });
  api.observe({ status: 200, headers: {}, receivedAtMs: T0 + 30_100, mode: 'paced' });
  expect(api.decide(T0 + 30_100, { mode: 'paced', restore: true })).toEqual({ kind: 'grant', count: 1 });
  expect(api.decide(T0 + 30_100, { mode: 'paced' }).kind).toBe('not-certified');
  // A restore that meets a 429 waits for it too: never early.
  refused(load, T0 + 31_000);
  expect(load.decide(T0 + 31_500, { mode: 'paced', restore: true })).toMatchObject({ kind: 'wait' });
});

test('a restore is never sent past a stated Retry-After longer than MAX_RETRY_AFTER_S', () => {
  const { api } = keys();
  api.granted(T0, 1);
  api.observe({ status: 429, headers: { 'Retry-After': '600' }, receivedAtMs: T0, mode: 'paced' });
  expect(api.decide(T0 + 1000, { mode: 'paced' }).kind).toBe('not-certified');
  expect(api.decide(T0 + 1000, { mode: 'paced', restore: true })).toMatchObject({
    kind: 'not-certified',
    reason: expect.stringMatching(/Retry-After: 600\): 599 s is longer than MAX_RETRY_AFTER_S=30 s/),
  });
  expect(api.decide(T0 + 601_000, { mode: 'paced', restore: true })).toEqual({ kind: 'grant', count: 1 });
});

test("a 429 after a fixed hold of the run's own is no suspected ban; after a stated Retry-After it is", () => {
  const { api, load } = keys(120_000);
  refused(api, T0);
  refused(api, T0 + 10_000);
  expect(api.report().suspectedBans).toBe(0);
  load.granted(T0, 1);
  load.observe({ status: 429, headers: { 'Retry-After': '1' }, receivedAtMs: T0, mode: 'paced' });
  load.granted(T0 + 1100, 1);
  load.observe({ status: 429, headers: { 'Retry-After': '1' }, receivedAtMs: T0 + 1100, mode: 'paced' });
  expect(load.report().suspectedBans).toBe(1);
});
