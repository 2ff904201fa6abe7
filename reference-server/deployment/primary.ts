/**
 * The primary of a deployment started by `startDeployment()` (`start.ts`), as a child process:
 * runs `startCluster()` with its environment and reports `{ origin, pids }` over the IPC channel
 * (never stdout; no key crosses it). Stops its workers on SIGTERM or when its parent goes.
 */
import { startCluster } from './cluster.ts';

const perProcessLimiter = process.argv.includes('--per-process-limiter');
try {
  const running = await startCluster({ perProcessLimiter });
  process.send!({ origin: running.origin, pids: running.pids() });
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    void running.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.once('disconnect', stop);
} catch (error) {
  process.send!({ error: (error as Error).message });
  process.exit(2);
}
