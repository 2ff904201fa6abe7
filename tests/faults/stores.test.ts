import { test, expect } from '../test.ts';
import {
  racyStore,
  lateByOneStore,
  unenforcedStore,
  slidingWindowStore,
  tokenBucketStore,
  uncountedFirstStore,
} from '../../faults/stores.ts';
import { MemoryRateLimitStore, type RateLimitStore } from '../../reference-server/rate-limit/store.ts';
import type { RatePolicy } from '../../reference-server/rate-limit/policy.ts';

const POLICY: RatePolicy = {
  windows: [
    { name: 'minute', limit: 5, ms: 10_000 },
    { name: 'day', limit: 100, ms: 86_400_000 },
  ],
  banThreshold: 3,
  banMs: 5000,
};
const T0 = 1_700_000_000_000; // a window start (multiple of 10 s)

async function sequential(store: RateLimitStore, n: number, at = T0) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(await store.hit('k', POLICY, at + i));
  return out;
}

test('the reference store is exact: 5 admitted, the 6th refused with Remaining 0', async () => {
  const d = await sequential(new MemoryRateLimitStore(), 6);
  expect(d.map((x) => x.outcome)).toEqual(['admitted', 'admitted', 'admitted', 'admitted', 'admitted', 'limited']);
  expect(d.map((x) => x.remaining)).toEqual([4, 3, 2, 1, 0, 0]);
});

test('racyStore is exact sequentially but over-admits a concurrent burst', async () => {
  const store = racyStore(5);
  const seq = await sequential(store, 6);
  expect(seq.filter((x) => x.outcome === 'admitted')).toHaveLength(5);
  const burst = await Promise.all(Array.from({ length: 20 }, () => store.hit('burst', POLICY, T0 + 1)));
  expect(burst.filter((x) => x.outcome === 'admitted').length).toBeGreaterThan(5);
});

test('lateByOneStore admits Limit+1 while the headers say Limit', async () => {
  const d = await sequential(lateByOneStore(), 7);
  expect(d.map((x) => x.outcome)).toEqual(['admitted', 'admitted', 'admitted', 'admitted', 'admitted', 'admitted', 'limited']);
  expect(d.every((x) => x.limit === 5)).toBe(true);
  expect(d[4]!.remaining).toBe(0);
});

test('unenforcedStore counts down to 0 and never refuses', async () => {
  const d = await sequential(unenforcedStore(), 12);
  expect(d.every((x) => x.outcome === 'admitted' && x.limit === 5)).toBe(true);
  expect(d.map((x) => x.remaining).slice(0, 6)).toEqual([4, 3, 2, 1, 0, 0]);
});

test('slidingWindowStore: exact, Retry-After until the oldest request leaves, a slot frees then', async () => {
  const store = slidingWindowStore();
  const d = await sequential(store, 5, T0 + 3000);
  expect(d.map((x) => x.remaining)).toEqual([4, 3, 2, 1, 0]);
  const refused = await store.hit('k', POLICY, T0 + 4000);
  expect(refused.outcome).toBe('limited');
  expect(refused.retryAfterSeconds).toBe(9); // oldest at T0+3000 leaves at T0+13000
  expect((await store.hit('k', POLICY, T0 + 13_000)).outcome).toBe('admitted');
  expect((await store.hit('k', POLICY, T0 + 13_000)).outcome).toBe('limited');
  expect((await store.hit('k', POLICY, T0 + 13_001)).outcome).toBe('admitted');
});

test('slidingWindowStore bans early retries like the reference server', async () => {
  const store = slidingWindowStore();
  await sequential(store, 5);
  const outcomes = [];
  for (let i = 0; i < 4; i++) outcomes.push((await store.hit('k', POLICY, T0 + 100 + i)).outcome);
  expect(outcomes).toEqual(['limited', 'limited', 'limited', 'banned']);
});

test('uncountedFirstStore admits Limit+1 per window with consistent headers: Remaining equals Limit after the first request', async () => {
  const d = await sequential(uncountedFirstStore(), 7);
  expect(d.map((x) => x.outcome)).toEqual(['admitted', 'admitted', 'admitted', 'admitted', 'admitted', 'admitted', 'limited']);
  expect(d.every((x) => x.limit === 5)).toBe(true);
  expect(d.map((x) => x.remaining)).toEqual([5, 4, 3, 2, 1, 0, 0]);
});

test('tokenBucketStore: Limit in a row, then one token per window/limit; Retry-After until the next token suffices; Reset when full', async () => {
  const store = tokenBucketStore();
  const d = await sequential(store, 6);
  expect(d.map((x) => x.outcome)).toEqual(['admitted', 'admitted', 'admitted', 'admitted', 'admitted', 'limited']);
  expect(d.slice(0, 5).map((x) => x.remaining)).toEqual([4, 3, 2, 1, 0]);
  const refused = d[5]!;
  expect(refused.retryAfterSeconds).toBe(2); // a token every 2 s (5 per 10 s)
  expect(refused.resetSeconds).toBe((T0 + 10_000) / 1000); // full again 10 s after it emptied (rounded up)
  expect((await store.hit('k', POLICY, T0 + 5 + refused.retryAfterSeconds * 1000)).outcome).toBe('admitted');
  expect((await store.hit('k', POLICY, T0 + 5 + refused.retryAfterSeconds * 1000)).outcome).toBe('limited');
  // A long pause fills the bucket again, never beyond the limit.
  const later = await store.hit('k', POLICY, T0 + 100_000);
  expect(later).toMatchObject({ outcome: 'admitted', remaining: 4, limit: 5 });
});

test('tokenBucketStore with tickMs: tokens arrive in whole ticks, so a refusal waits for the next tick; Reset is the tick that fills it', async () => {
  const store = tokenBucketStore({ tickMs: 1000 });
  const d = await sequential(store, 6);
  expect(d.map((x) => x.outcome)).toEqual(['admitted', 'admitted', 'admitted', 'admitted', 'admitted', 'limited']);
  const refused = d[5]!;
  // 5 per 10 s in 1 s ticks: half a token a tick, so a whole token two ticks after the first request.
  expect(refused.retryAfterSeconds).toBe(2);
  expect(refused.resetSeconds).toBe((T0 + 10_000) / 1000);
  expect((await store.hit('k', POLICY, T0 + 1_999)).outcome).toBe('limited');
  expect((await store.hit('k', POLICY, T0 + 2_000)).outcome).toBe('admitted');
  expect((await store.hit('k', POLICY, T0 + 2_001)).outcome).toBe('limited');
});
