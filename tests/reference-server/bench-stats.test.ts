/**
 * bench/stats.ts: what `npm run bench`'s rounds can say about a goal (the median's interval from
 * the rounds' order statistics).
 */
import { expect, test } from '../test.ts';
import { binomialHalfCdf, median, medianInterval, readGoal } from '../../bench/stats.ts';

/** A seeded generator (mulberry32), so that the coverage below is the same on every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('BENCH-STATS the interval of 12 rounds is their 3rd and 10th values, at 96 % coverage; 6 rounds give their extremes, 5 none', () => {
  const twelve = [12, 3, 7, 1, 9, 5, 11, 2, 8, 4, 10, 6];
  expect(median(twelve)).toBe(6.5);
  const interval = medianInterval(twelve)!;
  expect([interval.low, interval.high]).toEqual([3, 10]);
  expect(interval.confidence).toBeCloseTo(1 - (2 * (1 + 12 + 66)) / 4096, 10);
  expect(medianInterval([6, 1, 5, 2, 4, 3])).toMatchObject({ low: 1, high: 6 });
  expect(medianInterval([1, 2, 3, 4, 5])).toBeUndefined();
  expect(binomialHalfCdf(12, 12)).toBeCloseTo(1, 12);
  expect(binomialHalfCdf(7, 3)).toBeCloseTo(0.5, 12);
});

test('BENCH-STATS the interval holds the true median in about 96 % of runs of 12 rounds, whatever the noise (skewed here)', () => {
  const random = seeded(27);
  // Exponential noise: its median is ln 2, its mean 1.
  const round = () => -Math.log(1 - random());
  const trials = 4000;
  let covered = 0;
  for (let i = 0; i < trials; i++) {
    const interval = medianInterval(Array.from({ length: 12 }, round))!;
    if (interval.low <= Math.LN2 && Math.LN2 <= interval.high) covered++;
  }
  expect(covered / trials).toBeGreaterThan(0.945);
  expect(covered / trials).toBeLessThan(0.975);
});

test('BENCH-STATS a goal is met only when the whole interval is at or above it, not met only when it is below, else the rounds cannot tell', () => {
  const cases: [number[], string][] = [
    [[0.99, 1.0, 1.01, 1.02, 0.98, 1.03, 1.0, 0.99, 1.01, 1.0, 1.02, 0.985], 'met'],
    [[0.9, 0.91, 0.92, 0.93, 0.9, 0.94, 0.95, 0.9, 0.91, 0.92, 0.97, 0.93], 'not met'],
    [[0.68, 0.93, 0.96, 1.23, 0.9, 0.93, 0.68, 1.0, 0.9, 0.72, 0.79, 1.02], 'cannot tell'],
  ];
  for (const [ratios, reading] of cases) expect(readGoal(medianInterval(ratios), 0.98), ratios.join(' ')).toBe(reading);
  expect(readGoal(undefined, 0.98)).toBe('cannot tell');
});
