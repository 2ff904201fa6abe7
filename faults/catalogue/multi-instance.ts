/**
 * Faults of a deployment of several instances (spec: Limits — a limit belongs to the key, not to
 * the process that answers): three instances behind one address whose limiters count in their own
 * memory, the commonest rate-limit bug in production. Neither a proxy nor a store of one process
 * can fake it, so the fault is a whole deployment (`upstream`, `faults/deployment.ts`): the
 * reference server with per-process limiters (the inventory stays shared on Redis), on a
 * redis-server of its own. The same deployment with its shared limiter is the conformant variant
 * `multi-instance-redis` (`faults/variants.ts`).
 */
import type { FaultDefinition } from '../fault.ts';
import { startDeploymentTarget } from '../deployment.ts';

export const faults: FaultDefinition[] = [
  {
    name: 'multi-instance-per-process-limiter',
    description:
      'Three instances behind one address, each counting the key in its own memory: a burst spread over the instances is admitted up to three times the limit.',
    expect: ['LOAD-02'],
    // Each instance shows its own Remaining: a burst sized by one meets several 429s in flight on another, which bans.
    misleadsRemaining: true,
    upstream: () => startDeploymentTarget({ perProcessLimiter: true }),
  },
];
