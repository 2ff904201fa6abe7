/**
 * One instance of a multi-instance deployment (`cluster.ts` forks it): the reference server with
 * the configuration of its environment, on the port the primary shares, joining the shared
 * inventory without resetting it. `REFERENCE_WORKER_LIMITER=memory` gives it a per-process
 * limiter (the broken deployment of the fault matrix). Stops on SIGTERM or when the primary goes.
 */
import { MemoryRateLimitStore, startReferenceServer } from '../app.ts';
import { WORKER_LIMITER_ENV } from './cluster.ts';

const perProcess = process.env[WORKER_LIMITER_ENV] === 'memory';
try {
  const server = await startReferenceServer({
    redisUrl: process.env.REDIS_URL,
    redisSeed: 'keep',
    ...(perProcess ? { store: new MemoryRateLimitStore() } : {}),
  });
  const stop = (): void => {
    void server.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
} catch (error) {
  console.error(`reference-server: instance ${process.pid}: ${(error as Error).message}`);
  process.exit(2);
}
