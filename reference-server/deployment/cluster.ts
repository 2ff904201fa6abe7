/**
 * A multi-instance deployment: N reference-server processes behind one address, node's `cluster`
 * (the primary accepts each connection and hands it to the next worker, round robin), sharing
 * their rate-limit counters and inventory on Redis.
 *
 * Spec: [Limits](spec/inventory-service.md#limits) — limits belong to the key, so every
 * instance answers the same limits, Reset and Retry-After, and a ban earned on one holds on all;
 * [Update stock level](spec/inventory-service.md#2-update-stock-level-experimental) —
 * an update answered by one instance is seen by a list on any other.
 *
 * The primary serves no request: it writes the seed inventory to Redis (`reset`), forks the
 * workers (`worker.ts`, which only add missing pets: `keep`), waits until every one listens, and
 * replaces a worker that dies. `perProcessLimiter` gives each worker its own in-memory limiter
 * (the inventory stays shared): the commonest rate-limit bug of real deployments, kept as a fault
 * of the conformance matrix; never a way to run the service.
 */
import cluster, { type Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import { resolveConfig, type ResolvedConfig } from '../config.ts';
import { loadInventorySeed } from '../fixtures.ts';

export const WORKER_LIMITER_ENV = 'REFERENCE_WORKER_LIMITER';

export interface ClusterOptions {
  /** Environment of the deployment (PORT, REDIS_URL, INSTANCES, windows …); default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Each worker counts on its own (in memory): a deliberately broken deployment. */
  perProcessLimiter?: boolean;
  /** Where worker failures are reported (default stderr). */
  log?: (line: string) => void;
}

export interface RunningCluster {
  /** `http://host:port` every worker listens on. */
  origin: string;
  config: ResolvedConfig;
  /** Worker process ids (for tests). */
  pids(): number[];
  close(): Promise<void>;
}

// `.ts` in a clone, `.js` in the compiled package (the workers inherit the primary's loader).
const WORKER_SCRIPT = fileURLToPath(new URL(`./worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url));

/** Seeds the shared inventory, forks `config.instances` workers and resolves once all listen. */
export async function startCluster(options: ClusterOptions = {}): Promise<RunningCluster> {
  if (!cluster.isPrimary) throw new Error('reference-server: startCluster runs in the primary process only');
  const env = options.env ?? process.env;
  const config = resolveConfig({}, env);
  const log = options.log ?? ((line: string) => console.error(line));
  if (config.redisUrl === undefined) {
    throw new Error(
      `reference-server: INSTANCES=${config.instances} needs REDIS_URL (the instances share their limits and inventory on Redis)`,
    );
  }
  await seedSharedInventory(config);

  cluster.setupPrimary({ exec: WORKER_SCRIPT, silent: false });
  const workerEnv = {
    ...env,
    INSTANCES: '1',
    [WORKER_LIMITER_ENV]: options.perProcessLimiter ? 'memory' : 'redis',
  };
  const workers = new Set<Worker>();
  let closing = false;
  let port = config.port;

  // Every worker asks for the same PORT (0 included): the primary keeps one listening socket per
  // requested address, so they all share it.
  function fork(): Promise<Worker> {
    const worker = cluster.fork(workerEnv);
    workers.add(worker);
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`reference-server: an instance exited with ${code} before it listened`));
      worker.once('exit', onExit);
      worker.once('listening', (address) => {
        worker.off('exit', onExit);
        port = address.port;
        worker.once('exit', (code, signal) => {
          workers.delete(worker);
          if (closing) return;
          log(`reference-server: instance ${worker.process.pid} exited (${signal ?? code}); starting another`);
          fork().catch((error: Error) => log(error.message));
        });
        resolve(worker);
      });
    });
  }

  async function close(): Promise<void> {
    closing = true;
    await Promise.all(
      [...workers].map(
        (worker) =>
          new Promise<void>((resolve) => {
            if (worker.isDead()) return resolve();
            const timer = setTimeout(() => worker.process.kill('SIGKILL'), 5_000);
            worker.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            worker.process.kill('SIGTERM');
          }),
      ),
    );
  }

  try {
    await Promise.all(Array.from({ length: config.instances }, () => fork()));
  } catch (error) {
    await close();
    throw error;
  }
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return { origin: `http://${host}:${port}`, config, pids: () => [...workers].map((w) => w.process.pid!), close };
}

/** The deployment starts from the seed inventory (workers joining later keep what is there). */
async function seedSharedInventory(config: ResolvedConfig): Promise<void> {
  const { connectRedis } = await import('../shared-state/redis.ts');
  const { RedisInventory } = await import('../inventory/redis-store.ts');
  const client = await connectRedis(config.redisUrl!);
  try {
    await new RedisInventory(client, loadInventorySeed(config.inventoryFile), config.redisPrefix).seed('reset');
  } finally {
    await client.quit().catch(() => client.disconnect());
  }
}
