/**
 * Conformance reports for the certificate and baseline tests, computed by the real verdict
 * (certify/verdict.ts) from test records shaped like a run's: one conformant, one failing AUTH-02
 * and UPD-06, one with checks left out (not certified).
 */
import { computeVerdict, type LedgerRequirement, type TestRecord, type VerdictGateOptions } from '../../certify/verdict.ts';
import { parseBaseline } from '../../certify/baseline.ts';

export const LEDGER: LedgerRequirement[] = [
  { id: 'AUTH-02', section: 'Authentication', title: 'The scheme applies to every inventory operation.', level: 'must', source: 'spec' },
  {
    id: 'UPD-06',
    section: 'Endpoints > 2. Update stock level',
    title: 'negative quantity',
    level: 'must',
    source: 'spec',
    experimental: true,
  },
  { id: 'RL-05', section: 'Limits, rule 2', title: '429 past the limit', level: 'must', source: 'spec' },
  { id: 'LOAD-03', section: 'Limits', title: 'other key unaffected', level: 'should', source: 'spec' },
  { id: 'INV-06', section: 'What the service does', title: 'two deployments', level: 'must', source: 'spec', excluded: 'not observable' },
];

/** A passing run's records (each test passes; LOAD-03 warns). */
export const passingTests = (): TestRecord[] => passing();

export function rec(title: string, outcome: TestRecord['outcome'], extra: Partial<TestRecord> = {}): TestRecord {
  return { title, project: 'functional', tags: [], outcome, errors: [], annotations: [], requests: 2, ...extra };
}

const passing = (): TestRecord[] => [
  rec('AUTH-02 every operation answers 401 without a key', 'passed', {
    annotations: [{ type: 'evidence', description: 'GET /v1/inventory → 401, Authorization: (none)' }],
  }),
  rec('UPD-06 a negative quantity yields 400 or 200', 'passed'),
  rec('RL-05 the request past the limit is refused with 429', 'passed', { project: 'rate-limit' }),
  rec('LOAD-03 the other key is served during the burst', 'passed', {
    project: 'load',
    annotations: [{ type: 'warning', description: 'LOAD-03 p99 1588 ms above LOAD_P99_MS=1000' }],
  }),
];

export function report(tests: TestRecord[], extra: { runErrors?: string[]; secretFindings?: string[]; gate?: VerdictGateOptions } = {}) {
  return computeVerdict({
    ledger: LEDGER,
    tests,
    profile: 'full',
    target: {
      kind: 'external',
      baseUrl: 'https://staging.example.com/v1',
      apiUrl: 'https://staging.example.com/quickstart',
      profile: 'full',
    },
    generatedAt: '2026-11-23T06:00:00.000Z',
    ...extra,
  });
}

export const conformantReport = () => report(passing());

/** A gate option: the baseline given as YAML text (as `--baseline` reads a file). */
export const baselineOf = (text: string, file = 'baseline.yaml'): VerdictGateOptions['baseline'] => ({
  baseline: parseBaseline(text),
  file,
  digest: '0'.repeat(64),
});

/** AUTH-02 and UPD-06 fail (must), the rest passes. */
export const failingReport = (gate?: VerdictGateOptions) =>
  report(
    passing().map((t) =>
      t.title.startsWith('AUTH-02')
        ? { ...t, outcome: 'failed' as const, errors: ['AUTH-02: PATCH /v1/inventory/1 without a key: expected 401, observed 200'] }
        : t.title.startsWith('UPD-06')
          ? { ...t, outcome: 'failed' as const, errors: ['UPD-06: PATCH quantity -1: expected 400 or 200, observed 500'] }
          : t,
    ),
    gate ? { gate } : {},
  );

/** RL-05 left out (no RATE_LIMIT_KEY): not certified; everything that ran passes. */
export const notCertifiedReport = (gate?: VerdictGateOptions) =>
  report(
    passing().map((t) =>
      t.title.startsWith('RL-05')
        ? {
            ...t,
            outcome: 'skipped' as const,
            requests: 0,
            annotations: [{ type: 'not-certified', description: 'RATE_LIMIT_KEY is not set' }],
          }
        : t,
    ),
    gate ? { gate } : {},
  );

export const harnessReport = () => report(passing(), { runErrors: ['phase load was stopped after PHASE_TIMEOUT_S=900 s'] });
export const leakReport = () => report(passing(), { secretFindings: ['reports/junit.xml: API_KEY (raw)'] });
