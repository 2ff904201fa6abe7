import os from 'node:os';

/**
 * Niceness of the tests that certify whole servers inside `npm test` (the fault matrix and the
 * `long` project): they run at a lower priority than the other tests, which judge timing on short
 * windows (a `Retry-After`, a slow link, a burst of a 3 s window) and mostly sleep. On 2 cores the
 * certify runs keep both cores busy; at normal priority a test that wakes for its window waits for
 * a core behind them, and its window ends under it. A certify run's verdict must hold on a busy
 * runner anyway (`faults/busy.test.ts`).
 */
export const BACKGROUND_NICE = 10;

/**
 * Lowers this test worker's priority to `BACKGROUND_NICE` (its certify runs and servers inherit it).
 * For `test.beforeAll` of a file whose project has workers of its own, so that no other test runs
 * in a worker it lowered. A system that refuses changes nothing: the tests only run slower.
 */
export function runInBackground(): void {
  try {
    if (os.getPriority() < BACKGROUND_NICE) os.setPriority(BACKGROUND_NICE);
  } catch {
    // Not permitted here: the run keeps its priority.
  }
}
