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

type Phase = 'functional' | 'rate-limit' | 'load';

/**
 * The certify phases whose checks evidence `ids`: the 429 sequence (RL-05 … RL-10) runs in
 * `rate-limit`, LOAD-* in `load`, everything else in `functional`. A fault runs only those; a
 * wrong entry here cannot pass unnoticed, because a requirement whose phase did not run fails
 * with "no test result" and the matrix never counts that as a catch.
 */
export function phasesFor(ids: readonly string[]): Phase[] {
  const phaseOf = (id: string): Phase => (/^RL-(0[5-9]|10)$/.test(id) ? 'rate-limit' : id.startsWith('LOAD-') ? 'load' : 'functional');
  const wanted = new Set(ids.map(phaseOf));
  return (['functional', 'rate-limit', 'load'] as const).filter((p) => wanted.has(p));
}

/** A fault run uses one Playwright worker per phase: each failing check restarts a worker anyway. */
export const FAULT_ENV: Record<string, string> = { WORKERS: '1' };

/** The cases; extended faults only with `extended` (default: `MATRIX_EXTENDED=1`). */
export function matrixCases(extended = process.env.MATRIX_EXTENDED === '1'): NamedCase[] {
  return [
    { kind: 'baseline', name: 'baseline', id: 'baseline', expect: [] },
    ...faults.filter((f) => extended || !f.extended).map((f): NamedCase => ({
      kind: 'fault', name: f.name, id: `fault:${f.name}`, expect: f.expect, phases: phasesFor(f.expect), env: { ...FAULT_ENV, ...f.env },
      ...(f.proxy ? { proxy: f.proxy } : {}), ...(f.store ? { store: f.store } : {}), ...(f.basePath ? { basePath: f.basePath } : {}),
    })),
    ...variants.map((v): NamedCase => ({
      kind: 'variant', name: v.name, id: `variant:${v.name}`, expect: [],
      ...(v.proxy ? { proxy: v.proxy } : {}), ...(v.store ? { store: v.store } : {}),
    })),
  ];
}
