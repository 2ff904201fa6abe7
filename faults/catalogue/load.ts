/**
 * Faults only load shows (the project's rules and Limits under concurrency): over-admission by a
 * racy limiter, latency and errors when requests overlap.
 */
import { answer } from '../lib.ts';
import { racyStore, uncountedFirstStore } from '../stores.ts';
import type { FaultDefinition } from '../fault.ts';

/**
 * Three burst windows instead of the default two: on the reference server's 5-s windows a busy
 * runner can send a burst so late that a window ends under it, and a burst split over two windows
 * shows no over-admission in either. Another burst is another chance; with a minute's windows the
 * aim at a window's start leaves the burst a whole minute.
 */
const BURSTS_ON_SHORT_WINDOWS = { LOAD_BURST_WINDOWS: '3' };

export const faults: FaultDefinition[] = [
  {
    name: '429-over-admission-under-concurrency',
    description: 'The limiter reads and writes its counter in separate steps, so concurrent requests are over-admitted.',
    expect: ['LOAD-02'],
    store: () => racyStore(),
    env: BURSTS_ON_SHORT_WINDOWS,
  },
  {
    name: '429-limit-plus-one-consistent-headers',
    description:
      "The window's first request is not counted: Remaining equals Limit after it, the headers then count down consistently, and Limit + 1 requests are admitted per window.",
    expect: ['LOAD-02'],
    store: () => uncountedFirstStore(),
    env: BURSTS_ON_SHORT_WINDOWS,
  },
  {
    name: 'load-slow-under-concurrency',
    description:
      'Requests queue behind a single database connection: each holds it for 40 ms, and with two or more in flight each waits 1.2 s, so p99 latency under load is above the threshold the user set.',
    expect: ['LOAD-04'],
    // A threshold the user sets (the spec sets no latency), and runs long enough for the slow responses to complete inside them.
    // 40 ms per request at LOAD_RATE's 20 ms between arrivals: requests overlap however fast the machine is.
    env: { LOAD_P99_MS: '1000', LOAD_DURATION_S: '3', LOAD_RATE: '50' },
    proxy: () => {
      let inflight = 0;
      return {
        request(req) {
          inflight++;
          return req;
        },
        delayMs: () => (inflight >= 2 ? 1200 : 40),
        response(res) {
          inflight--;
          return res;
        },
      };
    },
  },
  {
    name: 'load-503-when-busy',
    description:
      'A too-small connection pool: each request holds a connection for 20 ms, and with 3 in flight further ones get 503 (sequential checks never notice).',
    expect: ['LOAD-01'],
    // Saturation (the user's opt-in) keeps LOAD_CONNECTIONS requests in flight; a gentle open model may never reach 3.
    env: { LOAD_SATURATE: 'true' },
    proxy: () => {
      let inflight = 0;
      return {
        request(req) {
          if (inflight >= 3) return answer(503, { code: 'unavailable', message: 'Service busy', status: 503 });
          inflight++;
          return req;
        },
        // Held long enough that LOAD_CONNECTIONS (4) saturating connections overlap however fast the machine.
        delayMs: () => 20,
        response(res) {
          inflight--;
          return res;
        },
      };
    },
  },
];
