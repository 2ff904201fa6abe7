/**
 * Faults of a deployment of several instances (spec: Limits — a limit belongs to the key, not to
 * the process that answers): three instances behind one address whose limiters count in their own
 * memory, the commonest rate-limit bug in production. Neither a proxy nor a store of one process
 * can fake it, so the fault is a whole deployment (`upstream`): `startDeployment` of the reference
 * server with per-process limiters (the inventory stays shared on Redis), on a redis-server of its own.
 */
import type { FaultDefinition } from '../fault.ts';
import { DEFAULT_REFERENCE_TARGET, targetEnvOf, type ReferenceTarget } from '../../certify/reference-target.ts';

/**
 * A multi-instance reference deployment as a certification target: its own redis-server, three
 * instances, the windows and keys of `startReferenceTarget`. `perProcessLimiter` breaks it.
 */
export async function startDeploymentTarget(options: { instances?: number; perProcessLimiter?: boolean } = {}): Promise<ReferenceTarget> {
  const { startRedisServer } = await import('../../reference-server/shared-state/redis-server.ts');
  const { startDeployment } = await import('../../reference-server/deployment/start.ts');
  const { minuteWindowMs, banMs, apiPlan } = DEFAULT_REFERENCE_TARGET;
  const redis = await startRedisServer();
  let deployment;
  try {
    deployment = await startDeployment({
      instances: options.instances ?? 3,
      redisUrl: redis.url,
      perProcessLimiter: options.perProcessLimiter,
      server: { minuteWindowMs, banMs },
    });
  } catch (error) {
    await redis.stop();
    throw error;
  }
  const server = deployment;
  return {
    env: targetEnvOf(server, apiPlan),
    server,
    settings: { minuteWindowMs, banMs, apiPlan },
    async close() {
      await server.close();
      await redis.stop();
    },
  };
}

export const faults: FaultDefinition[] = [
  {
    name: 'multi-instance-per-process-limiter',
    description:
      'Three instances behind one address, each counting the key in its own memory: a burst spread over the instances is admitted up to three times the limit.',
    expect: ['LOAD-02'],
    upstream: () => startDeploymentTarget({ perProcessLimiter: true }),
  },
];
