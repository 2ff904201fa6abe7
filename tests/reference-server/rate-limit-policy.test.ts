/**
 * Spec "Limits": the pure limiter rules (`reference-server/rate-limit/policy.ts`) and the default
 * in-memory store, without HTTP.
 */
import { test, expect } from '../test.ts';
import { decide, newRateState, type RatePolicy } from '../../reference-server/rate-limit/policy.ts';
import { MemoryRateLimitStore } from '../../reference-server/rate-limit/store.ts';
import { PLAN_LIMITS } from '../../reference-server/rate-limit/plans.ts';

const policy = (minute: number, day: number, banThreshold = 3, banMs = 10_000): RatePolicy => ({
  windows: [
    { name: 'minute', limit: minute, ms: 1_000 },
    { name: 'day', limit: day, ms: 10_000 },
  ],
  banThreshold,
  banMs,
});

const T0 = 1_800_000_000_000; // a window boundary of both windows

test.describe('reference server: limiter rules', () => {
  test("LIMITS the plan table is the spec's", () => {
    expect(PLAN_LIMITS).toEqual({
      free: { minute: 60, day: 1000 },
      pro: { minute: 300, day: 10_000 },
      business: { minute: 1000, day: 100_000 },
    });
  });

  test('LIMITS remaining counts down and the limit-th request is the last admitted', () => {
    const p = policy(3, 100);
    const s = newRateState(p);
    expect([0, 1, 2].map((i) => decide(s, p, T0 + i).remaining)).toEqual([2, 1, 0]);
    const refused = decide(s, p, T0 + 3);
    expect(refused).toMatchObject({ outcome: 'limited', remaining: 0, limit: 3 });
  });

  test('LIMITS Retry-After and Reset are rounded up so waiting them suffices', () => {
    const p = policy(1, 100);
    const s = newRateState(p);
    decide(s, p, T0 + 100);
    const refused = decide(s, p, T0 + 200);
    expect(refused.retryAfterSeconds).toBe(1); // 800 ms left → 1 s
    expect(refused.resetSeconds).toBe((T0 + 1000) / 1000);
    expect(decide(s, p, T0 + 200 + refused.retryAfterSeconds * 1000).outcome).toBe('admitted');
    const q: RatePolicy = { ...p, windows: [{ name: 'minute', limit: 1, ms: 1_500 }, p.windows[1]] };
    const s2 = newRateState(q);
    decide(s2, q, T0 + 1);
    const r = decide(s2, q, T0 + 2);
    expect(r.retryAfterSeconds).toBe(2); // 1498 ms → 2 s
    expect(r.resetSeconds * 1000).toBeGreaterThanOrEqual(T0 + 1500);
  });

  test('LIMITS a refused request counts in no window', () => {
    const p = policy(1, 5, 1000);
    const s = newRateState(p);
    decide(s, p, T0);
    for (let i = 1; i < 50; i++) decide(s, p, T0 + i);
    expect(s.counts).toEqual([1, 1]);
    expect(decide(s, p, T0 + 1000)).toMatchObject({ outcome: 'admitted', remaining: 0, limit: 1 });
    expect(s.counts).toEqual([1, 2]);
  });

  test('LIMITS headers describe the window with the fewest remaining requests', () => {
    const p = policy(10, 3);
    const s = newRateState(p);
    const first = decide(s, p, T0);
    expect(first).toMatchObject({ limit: 3, remaining: 2, resetSeconds: (T0 + 10_000) / 1000 });
    const q = policy(2, 100);
    const t = newRateState(q);
    expect(decide(t, q, T0)).toMatchObject({ limit: 2, remaining: 1, resetSeconds: (T0 + 1000) / 1000 });
  });

  test('LIMITS the day window refuses until the day resets, even when the minute window has room', () => {
    const p = policy(10, 2, 1000);
    const s = newRateState(p);
    decide(s, p, T0);
    decide(s, p, T0 + 1);
    const refused = decide(s, p, T0 + 2_000);
    expect(refused).toMatchObject({ outcome: 'limited', limit: 2, remaining: 0, resetSeconds: (T0 + 10_000) / 1000 });
    expect(refused.retryAfterSeconds).toBe(8);
    expect(decide(s, p, T0 + 10_000).outcome).toBe('admitted');
  });

  test('LIMITS the banThreshold-th early retry starts a ban; the ban ends after banMs', () => {
    const p = policy(1, 100, 3, 5_000);
    const s = newRateState(p);
    decide(s, p, T0);
    expect(decide(s, p, T0 + 10).outcome).toBe('limited'); // the first 429: not early yet
    expect(decide(s, p, T0 + 20).outcome).toBe('limited'); // strike 1
    expect(decide(s, p, T0 + 30).outcome).toBe('limited'); // strike 2
    const ban = decide(s, p, T0 + 40); // strike 3
    expect(ban).toMatchObject({ outcome: 'banned', remaining: 0, retryAfterSeconds: 5 });
    expect(ban.resetSeconds).toBe(Math.ceil((T0 + 5_040) / 1000));
    const during = decide(s, p, T0 + 3_000);
    expect(during).toMatchObject({ outcome: 'banned', retryAfterSeconds: 3 }); // not extended
    expect(decide(s, p, T0 + 5_040)).toMatchObject({ outcome: 'admitted', remaining: 0 });
    expect(s.strikes).toBe(0);
  });

  test('LIMITS a ban shorter than the window lasts until the window resets and admits no second helping of it', () => {
    const p: RatePolicy = {
      windows: [
        { name: 'minute', limit: 2, ms: 10_000 },
        { name: 'day', limit: 100, ms: 100_000 },
      ],
      banThreshold: 2,
      banMs: 1_000,
    };
    const s = newRateState(p);
    decide(s, p, T0);
    decide(s, p, T0 + 1);
    expect(decide(s, p, T0 + 2).outcome).toBe('limited');
    decide(s, p, T0 + 3); // strike 1
    const ban = decide(s, p, T0 + 4); // strike 2: banned
    expect(ban).toMatchObject({ outcome: 'banned', retryAfterSeconds: 10 }); // covers the window, not only banMs
    expect(decide(s, p, T0 + 2_000).outcome).toBe('banned');
    const after = decide(s, p, T0 + 10_000);
    expect(after).toMatchObject({ outcome: 'admitted', remaining: 1 }); // a fresh window, counted from zero once
    let admitted = 1;
    for (let i = 1; i < 50; i++) if (decide(s, p, T0 + 10_000 + i).outcome === 'admitted') admitted++;
    expect(admitted).toBe(2);
  });

  test('LIMITS a client that waits Retry-After is never banned', () => {
    const p = policy(1, 1000, 2, 5_000);
    const s = newRateState(p);
    for (let second = 0; second < 20; second++) {
      const t = T0 + second * 1000;
      expect(decide(s, p, t).outcome).toBe('admitted');
      const refused = decide(s, p, t + 1);
      expect(refused.outcome).toBe('limited');
      expect(t + 1 + refused.retryAfterSeconds * 1000).toBeLessThanOrEqual(T0 + (second + 1) * 1000 + 1);
    }
  });

  test('LIMITS the memory store keeps identities apart and admits exactly the limit', () => {
    const store = new MemoryRateLimitStore();
    const p = policy(5, 100, 1_000_000);
    const outcomes = Array.from({ length: 200 }, (_, i) => store.hit(i % 2 ? 'a' : 'b', p, T0 + (i % 7)));
    expect(outcomes.filter((d) => d.outcome === 'admitted').length).toBe(10);
    expect(store.size).toBe(2);
  });

  test('LIMITS the memory store sweeps idle identities when full', () => {
    const store = new MemoryRateLimitStore({ maxIdentities: 10 });
    const p = policy(5, 100);
    for (let i = 0; i < 10; i++) store.hit(`id${i}`, p, T0);
    store.hit('late', p, T0 + 20_000);
    expect(store.size).toBe(1);
  });
});
