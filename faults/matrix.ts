import { faults } from './catalogue.ts';
import { variants } from './variants.ts';
import type { MatrixCase } from './harness.ts';

/**
 * The cases of the fault matrix, in the order the meta-test runs them: the unmodified reference
 * server, every fault, every variant. Each fault names the ledger ids that must fail; a variant
 * and the baseline must pass.
 */
export interface NamedCase extends MatrixCase {
  kind: 'baseline' | 'fault' | 'variant';
  name: string;
  expect: string[];
}

/**
 * Settings for certify in the matrix: short load runs and a lenient latency threshold (many runs
 * share two cores; the matrix proves what is caught, not how fast the machine is).
 */
export const MATRIX_ENV: Record<string, string> = {
  WORKERS: '2',
  LOAD_DURATION_S: '1',
  LOAD_CONNECTIONS: '4',
  LOAD_P99_MS: '10000',
  LOAD_MAX_ERROR_RATE: '0.05',
  LOAD_BURST_MAX: '200',
  LOAD_BURST_CONNECTIONS: '50',
  MAX_RETRY_AFTER_S: '30',
  REQUEST_TIMEOUT_MS: '8000',
};

export function matrixCases(): NamedCase[] {
  return [
    { kind: 'baseline', name: 'baseline', id: 'baseline', expect: [] },
    ...faults.map((f): NamedCase => ({
      kind: 'fault', name: f.name, id: `fault:${f.name}`, expect: f.expect,
      ...(f.proxy ? { proxy: f.proxy } : {}), ...(f.store ? { store: f.store } : {}), ...(f.profile ? { profile: f.profile } : {}),
    })),
    ...variants.map((v): NamedCase => ({
      kind: 'variant', name: v.name, id: `variant:${v.name}`, expect: [],
      ...(v.proxy ? { proxy: v.proxy } : {}), ...(v.store ? { store: v.store } : {}),
    })),
  ];
}
