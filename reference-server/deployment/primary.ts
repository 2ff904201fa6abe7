/**
 * The primary of a deployment started by `startDeployment()` (`start.ts`), as a child process:
 * runs `startCluster()` with its environment and reports `{ origin, pids }` over the IPC channel
 * (never stdout; no key crosses it). Stops its workers on SIGTERM or when its parent goes, also
 * while it is still starting: a parent that gave up waiting, or that was itself stopped, gets no
 * report, and the primary ends quietly instead of failing on a closed channel.
 */
import { startCluster, type RunningCluster } from './cluster.ts';

const perProcessLimiter = process.argv.includes('--per-process-limiter');
let running: RunningCluster | undefined;
let stopping = false;

/** Stops the workers (if they were started) and exits with `code`. */
function stop(code = 0): void {
  if (stopping) return;
  stopping = true;
  void (running?.close() ?? Promise.resolve()).finally(() => process.exit(code));
}

/**
 * Sends `message` to the parent, then exits with `exitCode` if one is given; with no parent left
 * to read it, the primary stops (with `exitCode`, else 0).
 */
function report(message: { origin: string; pids: number[] } | { error: string }, exitCode?: number): void {
  if (!process.connected) return stop(exitCode);
  process.send!(message, (error: Error | null) => {
    if (error || exitCode !== undefined) stop(exitCode);
  });
}

process.once('SIGTERM', () => stop());
process.once('SIGINT', () => stop());
process.once('disconnect', () => stop());
try {
  running = await startCluster({ perProcessLimiter });
  if (stopping) await running.close();
  else report({ origin: running.origin, pids: running.pids() });
} catch (error) {
  report({ error: (error as Error).message }, 2);
}
