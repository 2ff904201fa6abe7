/**
 * The limiter zoo (`faults/limiters/`): each limiter admits at most what its algorithm allows in
 * a window, its `X-RateLimit-Remaining` is truthful (that many more requests at the same moment
 * are admitted, one more is refused), its `Retry-After` is truthful (waiting it gets one request
 * through, RFC 9110 §10.2.3) and its `X-RateLimit-Reset` is the moment the algorithm says the
 * limit resets (shared/notes: fixed windows their end, a sliding log the oldest request leaving,
 * a weighted counter its sub-window's end, a bucket or GCRA when full again).
 */
import { test, expect } from '../test.ts';
import { ALGORITHMS, zooStore, type LimiterKind } from '../../faults/limiters/index.ts';
import type { RateDecision, RatePolicy } from '../../reference-server/rate-limit/policy.ts';

const W = 10_000;
const L = 5;
const POLICY: RatePolicy = {
  windows: [
    { name: 'minute', limit: L, ms: W },
    { name: 'day', limit: 1000, ms: 86_400_000 },
  ],
  banThreshold: 3,
  banMs: 5000,
};
const T0 = 1_700_000_000_000; // a multiple of W
const FIRST = T0 + 3000; // a key's first request, 3 s into an aligned window

/** Per kind: the Reset (epoch s) after Limit requests at FIRST..FIRST+4 ms, and what a client gets at that Reset. */
const KINDS: ReadonlyArray<{ kind: LimiterKind; reset: number; atReset: 'full window' | 'one slot' | 'previous weighs' }> = [
  { kind: 'fixed-clock', reset: (T0 + W) / 1000, atReset: 'full window' },
  { kind: 'fixed-first', reset: (FIRST + W) / 1000, atReset: 'full window' },
  { kind: 'sliding-log', reset: (FIRST + W) / 1000, atReset: 'one slot' },
  { kind: 'sliding-counter', reset: (T0 + W) / 1000, atReset: 'previous weighs' },
  { kind: 'token-bucket', reset: (FIRST + W) / 1000, atReset: 'full window' },
  { kind: 'gcra', reset: (FIRST + W) / 1000, atReset: 'full window' },
];

/** A seeded pseudo-random generator (mulberry32), so a failure replays. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Request times: bursts and pauses over about four windows. */
function traffic(seed: number): number[] {
  const r = random(seed);
  const times: number[] = [];
  let t = FIRST;
  while (times.length < 60) {
    t += r() < 0.7 ? Math.floor(r() * 40) : Math.floor(r() * 3000);
    times.push(t);
  }
  return times;
}

/** Replays `times` on a fresh store (no early retry: a refusal's wait is respected before the next hit). */
function replay(kind: LimiterKind, times: readonly number[], store = zooStore(kind)): { at: number; d: RateDecision }[] {
  const out: { at: number; d: RateDecision }[] = [];
  let notBefore = 0;
  for (const at0 of times) {
    const at = Math.max(at0, notBefore);
    const d = store.hit('k', POLICY, at) as RateDecision;
    if (d.outcome !== 'admitted') notBefore = at + d.retryAfterSeconds * 1000;
    out.push({ at, d });
  }
  return out;
}

const hits = (store: ReturnType<typeof zooStore>, n: number, at: (i: number) => number) =>
  Array.from({ length: n }, (_, i) => store.hit('k', POLICY, at(i)) as RateDecision);

for (const { kind, reset, atReset } of KINDS) {
  test(`${kind}: Limit requests in a row with Remaining ${L - 1}…0, the next one refused with Reset ${atReset === 'one slot' ? 'when the oldest leaves' : 'as the algorithm says'}`, () => {
    const store = zooStore(kind);
    const d = hits(store, L + 1, (i) => FIRST + i);
    expect(d.map((x) => x.outcome)).toEqual([...Array(L).fill('admitted'), 'limited']);
    expect(d.slice(0, L).map((x) => x.remaining)).toEqual([4, 3, 2, 1, 0]);
    expect(d.every((x) => x.limit === L)).toBe(true);
    expect(d[L - 1]!.resetSeconds).toBe(reset);
    expect(d[L]!.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  });

  test(`${kind}: Retry-After is truthful and exact to the millisecond in the algorithm`, () => {
    const limiter = ALGORITHMS[kind](POLICY.windows[0]!, FIRST);
    for (let i = 0; i < L; i++) limiter.take(FIRST + i);
    const v = limiter.check(FIRST + L);
    expect(v.ok).toBe(false);
    if (v.ok) return;
    expect(limiter.check(v.retryAtMs - 1).ok).toBe(false);
    expect(limiter.check(v.retryAtMs).ok).toBe(true);
    // Through the store: waiting the whole seconds of Retry-After gets exactly one request through.
    const store = zooStore(kind);
    hits(store, L, (i) => FIRST + i);
    const refused = store.hit('k', POLICY, FIRST + L) as RateDecision;
    const after = FIRST + L + refused.retryAfterSeconds * 1000;
    expect((store.hit('k', POLICY, after) as RateDecision).outcome).toBe('admitted');
  });

  test(`${kind}: at Reset a client finds ${atReset === 'full window' ? 'the whole Limit again' : atReset === 'one slot' ? 'one slot, the rest of the log still counted' : 'the previous window still weighing on Remaining'}`, () => {
    const store = zooStore(kind);
    const d = hits(store, L, (i) => FIRST + i);
    const at = d[L - 1]!.resetSeconds * 1000;
    const burst = hits(store, L + 1, () => at);
    const admitted = burst.filter((x) => x.outcome === 'admitted').length;
    if (atReset === 'full window') expect(admitted).toBe(L);
    if (atReset === 'one slot') expect(admitted).toBe(1);
    if (atReset === 'previous weighs') {
      expect(admitted).toBeLessThan(L);
      expect(burst[0]!.remaining).toBeLessThan(L - 1);
    }
  });

  for (const seed of [1, 2, 3]) {
    test(`${kind}: random traffic (seed ${seed}): Remaining is truthful after every admission, and no window admits more than the algorithm allows`, () => {
      const times = traffic(seed);
      const seen = replay(kind, times);
      for (let k = 5; k < seen.length; k += 11) {
        const { at, d } = seen[k]!;
        if (d.outcome !== 'admitted') continue;
        const store = zooStore(kind);
        replay(kind, times.slice(0, k + 1), store);
        const more = hits(store, d.remaining + 1, () => at);
        expect(
          more.slice(0, d.remaining).every((x) => x.outcome === 'admitted'),
          `${d.remaining} more at the same moment are admitted`,
        ).toBe(true);
        expect(more[d.remaining]!.outcome, 'one past Remaining is refused').toBe('limited');
      }
      expectWithinAlgorithm(
        kind,
        seen.filter((s) => s.d.outcome === 'admitted'),
      );
    });
  }
}

/** What "at most Limit per window" means for each algorithm. */
function expectWithinAlgorithm(kind: LimiterKind, admitted: { at: number; d: RateDecision }[]): void {
  if (kind === 'fixed-clock' || kind === 'fixed-first' || kind === 'sliding-counter') {
    const perReset = new Map<number, number>();
    for (const a of admitted) perReset.set(a.d.resetSeconds, (perReset.get(a.d.resetSeconds) ?? 0) + 1);
    expect(Math.max(...perReset.values()), 'admitted under one Reset (one window)').toBeLessThanOrEqual(L);
    return;
  }
  for (let i = 0; i < admitted.length; i++) {
    for (let j = i; j < admitted.length; j++) {
      const span = admitted[j]!.at - admitted[i]!.at;
      const count = j - i + 1;
      if (kind === 'sliding-log') {
        if (span < W) expect(count, 'admitted in any rolling window').toBeLessThanOrEqual(L);
      } else {
        // A bucket of Limit refilled at Limit per W (the token bucket by whole seconds).
        const refill = kind === 'token-bucket' ? (Math.floor(span / 1000 + 1) * (L * 1000)) / W : (span * L) / W;
        expect(count, 'admitted in an interval: the capacity plus what refilled').toBeLessThanOrEqual(Math.floor(L + refill + 1e-9));
      }
    }
  }
}

test('a zoo store bans early retries after a 429 like the reference server, and a ban lasts banMs and at least until the limit frees', () => {
  const store = zooStore('sliding-log');
  hits(store, L, (i) => FIRST + i);
  const outcomes = hits(store, 4, (i) => FIRST + 100 + i).map((x) => x.outcome);
  expect(outcomes).toEqual(['limited', 'limited', 'limited', 'banned']);
  const banned = store.hit('k', POLICY, FIRST + 200) as RateDecision;
  expect(banned.outcome).toBe('banned');
  // The ban began at FIRST + 103 and lasts max(banMs, until the oldest request leaves at FIRST + W).
  expect(banned.retryAfterSeconds).toBe(Math.ceil((W - 200) / 1000));
});

test('a zoo store on a clock 40 s ahead: windows, Reset and Retry-After are on that clock', () => {
  const store = zooStore('fixed-clock', { clockOffsetMs: 40_000 });
  const d = hits(store, L + 1, (i) => FIRST + i);
  expect(d[0]!.resetSeconds).toBe((T0 + W + 40_000) / 1000);
  // 40 s ahead: FIRST + 40 s is 3 s into its aligned window, so the refusal waits 7 s.
  expect(d[L]!.retryAfterSeconds).toBe(7);
});

test('a zoo store applies the day window too: a refusal by the day quota shows its Reset', () => {
  const policy: RatePolicy = { ...POLICY, windows: [POLICY.windows[0]!, { name: 'day', limit: 3, ms: 86_400_000 }] };
  const store = zooStore('gcra');
  const d = Array.from({ length: 4 }, (_, i) => store.hit('k', policy, FIRST + i) as RateDecision);
  expect(d.map((x) => x.outcome)).toEqual(['admitted', 'admitted', 'admitted', 'limited']);
  expect(d[2]).toMatchObject({ limit: 3, remaining: 0 });
  expect(d[3]!.resetSeconds).toBe(Math.ceil((FIRST - (FIRST % 86_400_000) + 86_400_000) / 1000));
});
