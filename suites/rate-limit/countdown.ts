/**
 * The countdown on RATE_LIMIT_KEY (spec, Limits rules 1 and 2; the plans table): three sequential
 * requests on the key, and three more when a window boundary fell inside them (a new window
 * legitimately refills Remaining). RL-04 judges its first X-RateLimit-Limit against
 * RATE_LIMIT_PLAN, RL-11 whether Remaining fell. One record per run (`oncePerRun`), taken before
 * the 429 sequence drives the key: the sequence asks for it first (`sequence.ts`), so the
 * rate-limit phase needs no other phase to have ended, and the countdown never reads, nor spends,
 * a key that is being driven to its limit.
 */
import type { ApiClient, ApiResponse } from '../fixtures.ts';
import type { OncePerRun } from '../fixtures/run.ts';
import { rateLimitOf, type Snapshot } from './exhaust.ts';

/** What the countdown saw: one or two attempts of three answers each, in order. */
export interface Countdown {
  attempts: Snapshot[][];
}

/** The name the run's coordinator holds the countdown under. */
const COUNTDOWN = 'rate-limit/countdown';
/** Sequential requests per attempt, and attempts at most. */
const REQUESTS = 3;
const ATTEMPTS = 2;

/** The parts of a response a record keeps (serialisable; already redacted by the client). */
export function snapshotOf(res: ApiResponse): Snapshot {
  return {
    label: res.label,
    status: res.status,
    headers: res.headers,
    text: res.text.slice(0, 500),
    receivedAtMs: res.receivedAtMs,
    curl: res.curl,
  };
}

/** Whether Remaining fell from the first to the last answer of `seen` (RL-11). */
export function countsDown(seen: readonly Snapshot[]): boolean {
  const first = seen[0] && rateLimitOf(seen[0]).remaining;
  const last = seen.at(-1) && rateLimitOf(seen.at(-1)!).remaining;
  return first !== undefined && last !== undefined && last < first;
}

/** Sends the countdown on RATE_LIMIT_KEY with `api`: a second attempt only when the first spanned two Resets without counting down. */
export async function runCountdown(api: ApiClient): Promise<Countdown> {
  const attempts: Snapshot[][] = [];
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const seen: Snapshot[] = [];
    for (let i = 0; i < REQUESTS; i++) seen.push(snapshotOf(await api.listInventory('rate-limit')));
    attempts.push(seen);
    const sameWindow = seen.every((s) => rateLimitOf(s).reset === rateLimitOf(seen[0]!).reset);
    if (countsDown(seen) || sameWindow) break;
  }
  return { attempts };
}

/** The run's countdown: computed by whichever check asks first (RL-04, RL-11 or the 429 sequence), read back by the others. */
export function countdownOfRun(oncePerRun: OncePerRun, api: ApiClient): Promise<Countdown> {
  return oncePerRun(COUNTDOWN, () => runCountdown(api));
}
