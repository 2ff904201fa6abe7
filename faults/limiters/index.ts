/**
 * The limiter zoo: conformant rate limiters of their own kind behind the reference server's
 * `RateLimitStore` interface, one algorithm a file (notes: each file's comment says what Remaining,
 * Reset and Retry-After mean for it). The conformant variants of `faults/variants.ts` run them.
 */
import type { RateLimitStore } from '../../reference-server/rate-limit/store.ts';
import { limiterStore, type Algorithm, type LimiterStoreOptions } from './limiter.ts';
import { fixedClock } from './fixed-clock.ts';
import { fixedFirst } from './fixed-first.ts';
import { slidingLog } from './sliding-log.ts';
import { slidingCounter } from './sliding-counter.ts';
import { tokenBucket } from './token-bucket.ts';
import { gcra } from './gcra.ts';

export type LimiterKind = 'fixed-clock' | 'fixed-first' | 'sliding-log' | 'sliding-counter' | 'token-bucket' | 'gcra';

/** Each kind's algorithm. */
export const ALGORITHMS: Readonly<Record<LimiterKind, Algorithm>> = {
  'fixed-clock': fixedClock,
  'fixed-first': fixedFirst,
  'sliding-log': slidingLog,
  'sliding-counter': slidingCounter,
  'token-bucket': tokenBucket,
  gcra,
};

/** A fresh store of `kind` (optionally on a clock `clockOffsetMs` away from the real one). */
export function zooStore(kind: LimiterKind, options: LimiterStoreOptions = {}): RateLimitStore {
  return limiterStore(ALGORITHMS[kind], options);
}

export { limiterStore, type Algorithm, type KeyLimiter, type Verdict } from './limiter.ts';
