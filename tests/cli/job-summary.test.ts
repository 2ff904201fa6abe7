import { test, expect } from '../test.ts';
// @ts-expect-error: a plain Node script of the action, without type declarations.
import { jobSummary } from '../../ci/job-summary.mjs';

test('job summary: the verdict and its reasons, then each failed requirement with expected, observed and curl, then not certified, warnings and the rest counted', () => {
  const failed = (id: string) => ({
    id,
    level: 'must',
    status: 'fail',
    quote: 'q',
    evidence: [
      {
        outcome: 'failed',
        findings: [
          {
            level: 'fail',
            message: `GET /v1/inventory (${id})`,
            expected: 'status 401',
            observed: 'status 403',
            curl: "curl -sS 'https://h/v1/inventory'",
          },
        ],
      },
    ],
  });
  const certificate = {
    profile: 'full',
    target: { kind: 'external', baseUrl: 'https://h/v1' },
    results: {
      gate: { result: 'fail', exitCode: 1, reasons: ['failed: AUTH-03'] },
      summary: { pass: 40, warn: 1, fail: 12, skipped: 21 },
      requests: 900,
      requirements: [
        ...Array.from({ length: 12 }, (_, i) => failed(`AUTH-${String(i + 1).padStart(2, '0')}`)),
        { id: 'UPD-06', level: 'should', status: 'warn', evidence: [] },
        { id: 'INV-06', level: 'must', status: 'skipped', excluded: 'not observable', evidence: [] },
      ],
      notCertified: [{ id: 'RL-05', level: 'must', reason: 'the profile left it out' }],
      journal: { repair: { messages: [] }, end: { messages: [{ address: 'https://h/quickstart', at: 't', by: 'functional MSG-01' }] } },
    },
  };
  const md: string = jobSummary(certificate, '1');
  const at = (s: string) => {
    const i = md.indexOf(s);
    expect(i, s).toBeGreaterThanOrEqual(0);
    return i;
  };
  expect(at('## Inventory Service conformance: FAIL')).toBeLessThan(at('- failed: AUTH-03'));
  expect(at('- failed: AUTH-03')).toBeLessThan(at('### Failed requirements (12)'));
  expect(at('### Failed requirements (12)')).toBeLessThan(at('### Not certified (1)'));
  expect(at('### Not certified (1)')).toBeLessThan(at('### Warnings (1)'));
  expect(at('### Warnings (1)')).toBeLessThan(at('Also: 1 out of scope'));
  expect(md).toContain('  - expected: status 401\n  - observed: status 403\n');
  expect(md).toContain("  - reproduce: `curl -sS 'https://h/v1/inventory'`");
  // Short: ten failed requirements at most, the rest counted.
  expect(md).toContain('- … and 2 more in the certificate');
  expect(md).not.toContain('AUTH-11');
  expect(md).toContain('1 message(s) posted');
});
