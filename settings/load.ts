/**
 * Settings of the load phase (suites/load/README.md): duration, connections, the user's thresholds
 * and the caps that bound what a load check may spend on a real key.
 */
import { defineGroup, setting } from './define.ts';

export const LOAD_SETTINGS = defineGroup('load', 'Load phase', [
  setting({ name: 'LOAD_DURATION_S', kind: 'number', min: 0, minExclusive: true, max: 3600, default: 5, unit: 'seconds', help: 'Seconds of sustained load per capacity run.' }),
  setting({ name: 'LOAD_CONNECTIONS', kind: 'integer', min: 1, max: 1000, default: 10, help: 'Concurrent connections of a capacity run.' }),
  setting({ name: 'LOAD_P99_MS', kind: 'number', min: 0, minExclusive: true, default: 1000, unit: 'milliseconds', help: 'Threshold: p99 latency of a capacity run, and of the other key during the overload burst.' }),
  setting({ name: 'LOAD_MAX_ERROR_RATE', kind: 'number', min: 0, max: 1, default: 0.01, help: 'Threshold: share of failed requests (non-2xx, socket errors, timeouts) of a capacity run.' }),
  setting({ name: 'LOAD_MAX_REQUESTS', kind: 'integer', min: 1, default: 200_000, help: 'Hard cap on the requests of one capacity run.' }),
  setting({ name: 'LOAD_TIMEOUT_S', kind: 'integer', min: 1, max: 120, default: 10, unit: 'seconds', help: 'Seconds before a load request counts as a timeout.' }),
  setting({ name: 'LOAD_BURST_MAX', kind: 'integer', min: 1, default: 3000, help: 'Hard cap on the overload burst (max(3 × limit, 500), capped here).' }),
  setting({ name: 'LOAD_BURST_CONNECTIONS', kind: 'integer', min: 1, max: 2000, default: 500, help: 'Concurrent connections of the overload burst (at most the burst size).' }),
] as const);
