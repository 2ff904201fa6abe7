/**
 * A multi-instance reference deployment as a target of the fault matrix (spec: Limits — a limit
 * belongs to the key, not to the process that answers): its own redis-server on a free port, N
 * instances of the reference server behind one address (`startDeployment`), the windows and keys
 * of `startReferenceTarget`. The conformant deployment is a variant (`variants.ts`); the same
 * deployment with per-process limiters is a fault (`catalogue/multi-instance.ts`).
 */
import { DEFAULT_REFERENCE_TARGET, referenceTargetOf, type ReferenceTarget } from '../certify/reference-target.ts';
import { CASE_WINDOW_MS } from './reference.ts';

/** Longest wait for every instance to listen: three processes loading TypeScript on a busy 2-core host. */
export const DEPLOYMENT_START_TIMEOUT_MS = 120_000;

export interface DeploymentTargetOptions {
  /** Server processes (default 3). */
  instances?: number;
  /** Each instance counts the key in its own memory: the broken deployment of the fault. */
  perProcessLimiter?: boolean;
  /** Longest wait for every instance to listen (default `DEPLOYMENT_START_TIMEOUT_MS`). */
  startTimeoutMs?: number;
}

/** Starts redis-server and the deployment; `close()` stops both. Holds keys in `env`: never print it. */
export async function startDeploymentTarget(options: DeploymentTargetOptions = {}): Promise<ReferenceTarget> {
  const { startRedisServer } = await import('../reference-server/shared-state/redis-server.ts');
  const { startDeployment } = await import('../reference-server/deployment/start.ts');
  const { banMs, apiPlan } = DEFAULT_REFERENCE_TARGET;
  const minuteWindowMs = CASE_WINDOW_MS;
  const redis = await startRedisServer();
  let deployment;
  try {
    deployment = await startDeployment({
      instances: options.instances ?? 3,
      redisUrl: redis.url,
      perProcessLimiter: options.perProcessLimiter,
      server: { minuteWindowMs, banMs },
      startTimeoutMs: options.startTimeoutMs ?? DEPLOYMENT_START_TIMEOUT_MS,
    });
  } catch (error) {
    await redis.stop();
    throw error;
  }
  return referenceTargetOf(deployment, { minuteWindowMs, banMs, apiPlan }, () => redis.stop());
}
