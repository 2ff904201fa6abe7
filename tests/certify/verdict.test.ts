import { test, expect } from '../test.ts';
import { computeVerdict, leftChangedProblem, type LedgerRequirement, type TestRecord } from '../../certify/verdict.ts';
import { requirementIds, titleId as primaryId, unrestoredOf } from '../../core/results.ts';
import { unrestoredAnnotation } from '../../suites/lib/unrestored.ts';
import { cleanErrorMessage, notRunTests, testsFromJsonReport } from '../../core/playwright-report.ts';
import { PROJECT_RULES, renderMarkdown, sectionOf } from '../../certify/markdown.ts';

const must = (id: string, extra: Partial<LedgerRequirement> = {}): LedgerRequirement => ({
  id,
  section: 'Authentication',
  title: `${id} title`,
  level: 'must',
  source: 'spec',
  ...extra,
});
const should = (id: string): LedgerRequirement => ({ id, section: 'Limits', title: `${id} title`, level: 'should', source: 'spec' });

function rec(title: string, outcome: TestRecord['outcome'], extra: Partial<TestRecord> = {}): TestRecord {
  return { title, project: 'functional', tags: [], outcome, errors: [], annotations: [], requests: 1, ...extra };
}

function verdictOf(
  ledger: LedgerRequirement[],
  tests: TestRecord[],
  extra: { secretFindings?: string[]; runErrors?: string[]; profile?: string } = {},
) {
  return computeVerdict({
    ledger,
    tests,
    profile: extra.profile ?? 'full',
    target: { baseUrl: 'http://x/v1' },
    generatedAt: '2026-01-01T00:00:00Z',
    ...extra,
  });
}

const status = (report: ReturnType<typeof verdictOf>, id: string) => report.requirements.find((r) => r.id === id)?.status;

test('verdict: every test passed without warnings → pass, and the verdict passes', () => {
  const r = verdictOf([must('AUTH-01')], [rec('AUTH-01 a', 'passed'), rec('AUTH-01 b', 'passed')]);
  expect(status(r, 'AUTH-01')).toBe('pass');
  expect(r.verdict).toBe('pass');
  expect(r.requests).toBe(2);
  expect(r.requestsByPhase).toEqual({ functional: 2 });
});

test('verdict: a passed test with a warning annotation → warn, verdict still passes', () => {
  const r = verdictOf(
    [must('AUTH-01')],
    [rec('AUTH-01 a', 'passed', { annotations: [{ type: 'warning', description: 'lenient: 400 for a malformed header' }] })],
  );
  expect(status(r, 'AUTH-01')).toBe('warn');
  expect(r.requirements[0].evidence[0].warnings).toEqual(['lenient: 400 for a malformed header']);
  expect(r.verdict).toBe('pass');
});

test('verdict: a must-level test failed → fail with its message as evidence, verdict fails', () => {
  const r = verdictOf(
    [must('AUTH-02'), must('AUTH-03')],
    [
      rec('AUTH-02 invalid key yields 401', 'failed', { errors: ['AUTH-02: expected status 401, observed 200'] }),
      rec('AUTH-03 x', 'passed'),
    ],
  );
  expect(status(r, 'AUTH-02')).toBe('fail');
  expect(status(r, 'AUTH-03')).toBe('pass');
  expect(r.requirements[0].evidence[0].errors).toEqual(['AUTH-02: expected status 401, observed 200']);
  expect(r.verdict).toBe('fail');
});

test('verdict: one failing test among passing ones fails a must requirement', () => {
  const r = verdictOf([must('AUTH-02')], [rec('AUTH-02 a', 'passed'), rec('AUTH-02 b', 'failed'), rec('AUTH-02 c', 'passed')]);
  expect(status(r, 'AUTH-02')).toBe('fail');
});

test('verdict: a should-level test failed → warn, verdict passes', () => {
  const r = verdictOf([should('RL-20')], [rec('RL-20 backoff', 'failed', { errors: ['RL-20: expected …, observed …'] })]);
  expect(status(r, 'RL-20')).toBe('warn');
  expect(r.verdict).toBe('pass');
});

test('verdict: a must-level requirement with no test result fails and is named', () => {
  const r = verdictOf([must('AUTH-01'), must('ERR-03')], [rec('AUTH-01 a', 'passed')]);
  expect(status(r, 'ERR-03')).toBe('fail');
  expect(r.requirements[1].reason).toContain('ERR-03');
  expect(r.requirements[1].reason).toContain('no test result');
  expect(r.verdict).toBe('fail');
});

test('verdict: a should-level requirement with no test result warns', () => {
  const r = verdictOf([should('RL-20')], []);
  expect(status(r, 'RL-20')).toBe('warn');
  expect(r.verdict).toBe('pass');
});

test('verdict: excluded in the ledger → skipped with its reason, even with no test', () => {
  const r = verdictOf([must('INV-06', { excluded: 'not observable from one base address' })], []);
  expect(status(r, 'INV-06')).toBe('skipped');
  expect(r.requirements[0].reason).toBe('excluded: not observable from one base address');
  expect(r.verdict).toBe('pass');
});

test('verdict: left out by the profile → skipped, listed as not certified with the reason; verdict judges the rest', () => {
  const reason = 'CONFORMANCE_PROFILE=readonly leaves out @mutates checks';
  const r = verdictOf(
    [must('UPD-01'), must('INV-01')],
    [
      rec('UPD-01 update', 'skipped', {
        annotations: [
          { type: 'not-certified', description: reason },
          { type: 'skip', description: `not certified: ${reason}` },
        ],
      }),
      rec('INV-01 list', 'passed'),
    ],
    { profile: 'readonly' },
  );
  expect(status(r, 'UPD-01')).toBe('skipped');
  expect(r.requirements[0].reason).toContain('readonly');
  expect(r.notCertified).toEqual([
    {
      id: 'UPD-01',
      title: 'UPD-01 title',
      level: 'must',
      reason: 'CONFORMANCE_PROFILE=readonly leaves out @mutates checks',
      partial: false,
    },
  ]);
  expect(r.requirements[0].reason).toBe('not certified: CONFORMANCE_PROFILE=readonly leaves out @mutates checks');
  expect(r.verdict).toBe('pass');
  const md = renderMarkdown(r);
  // Said plainly, at the top: before the requirement table.
  expect(md.indexOf('## Not certified by this run')).toBeGreaterThan(0);
  expect(md.indexOf('## Not certified by this run')).toBeLessThan(md.indexOf('## All requirements'));
  expect(md).toContain('**UPD-01** (must)');
});

test('verdict: readonly phases not run are listed from `--list` output as not certified', () => {
  const listing = {
    suites: [
      {
        title: 'retry-after.spec.ts',
        file: 'rate-limit/retry-after.spec.ts',
        specs: [
          {
            title: 'RL-05 the request past the limit gets 429',
            tags: ['exhausts'],
            tests: [{ projectName: 'rate-limit', annotations: [], results: [], status: 'skipped' }],
          },
        ],
        suites: [],
      },
    ],
  };
  const tests = notRunTests(listing, 'not certified: CONFORMANCE_PROFILE=readonly does not run the rate-limit phase');
  expect(tests).toHaveLength(1);
  const r = verdictOf([must('RL-05')], tests, { profile: 'readonly' });
  expect(status(r, 'RL-05')).toBe('skipped');
  expect(r.notCertified[0].reason).toContain('rate-limit phase');
  expect(r.verdict).toBe('pass');
});

test('verdict: partly left out by the profile is not certified (never pass) and marked partial', () => {
  const r = verdictOf(
    [must('AUTH-02')],
    [
      rec('AUTH-02 list', 'passed'),
      rec('AUTH-02 update', 'skipped', { annotations: [{ type: 'not-certified', description: 'readonly' }] }),
    ],
  );
  expect(status(r, 'AUTH-02')).toBe('skipped');
  expect(r.notCertified[0].partial).toBe(true);
  expect(r.verdict).toBe('pass');
});

// The harness's own limits are never the server's failure (a cap, a long Retry-After, a shared
// key, a missing prerequisite): the requirement is not certified with the reason, whatever the
// outcome of the test that hit the limit; only a real failure of another test still fails it.
const LIMITS: [string, string, TestRecord['outcome']][] = [
  ['a cap reached', 'MAX_EXHAUST_REQUESTS=2000 reached before the limit', 'skipped'],
  ['a Retry-After beyond MAX_RETRY_AFTER_S', 'Retry-After 600 s is more than MAX_RETRY_AFTER_S=120', 'failed'],
  ['a shared key', 'RATE_LIMIT_KEY equals API_KEY', 'passed'],
  ['a missing prerequisite', 'prerequisite missing: set API_PLAN', 'skipped'],
];
for (const [what, reason, outcome] of LIMITS) {
  for (const level of ['must', 'should'] as const) {
    test(`verdict: ${what} (${level}, test ${outcome}) → not certified with the reason, never fail, warn or pass`, () => {
      const req = level === 'must' ? must('RL-05') : should('RL-05');
      const r = verdictOf(
        [req],
        [
          rec('RL-05 a', outcome, {
            annotations: [
              { type: 'not-certified', description: reason },
              { type: 'warning', description: 'w' },
            ],
          }),
        ],
      );
      expect(status(r, 'RL-05'), `${what}: status`).toBe('skipped');
      expect(r.notCertified).toEqual([{ id: 'RL-05', title: 'RL-05 title', level, reason, partial: false }]);
      expect(r.requirements[0].reason).toBe(`not certified: ${reason}`);
      expect(r.requirements[0].evidence[0].notCertified).toBe(reason);
      expect(r.verdict).toBe('pass');
    });
  }
}

test('verdict: a real failure of another test still fails a requirement that is also partly not certified', () => {
  const r = verdictOf(
    [must('RL-05')],
    [
      rec('RL-05 a', 'failed', { errors: ['RL-05: expected 429, observed 200'] }),
      rec('RL-05 b', 'skipped', { annotations: [{ type: 'not-certified', description: 'cap' }] }),
    ],
  );
  expect(status(r, 'RL-05')).toBe('fail');
  expect(r.notCertified[0]).toMatchObject({ id: 'RL-05', partial: true });
  expect(r.verdict).toBe('fail');
});

test('verdict: a must-level test skipped without a profile reason fails (never silently skipped)', () => {
  const r = verdictOf([must('AUTH-02')], [rec('AUTH-02 a', 'skipped', { annotations: [{ type: 'skip' }] })]);
  expect(status(r, 'AUTH-02')).toBe('fail');
  expect(r.requirements[0].reason).toContain('without a profile reason');
});

test('verdict: flaky (failed, then passed on retry) and interrupted count as failures', () => {
  const r = verdictOf([must('RL-05'), must('RL-06')], [rec('RL-05 a', 'flaky'), rec('RL-06 a', 'interrupted')]);
  expect(status(r, 'RL-05')).toBe('fail');
  expect(r.requirements[0].reason).toContain('passed on retry');
  expect(status(r, 'RL-06')).toBe('fail');
});

test('verdict: `requirement` annotations make a test evidence further ids', () => {
  const t = rec('ERR-01 error bodies on every path', 'failed', {
    annotations: [
      { type: 'requirement', description: 'ERR-02' },
      { type: 'requirement', description: 'ERR-03, ERR-04' },
    ],
  });
  expect(requirementIds(t)).toEqual(['ERR-01', 'ERR-02', 'ERR-03', 'ERR-04']);
  const r = verdictOf([must('ERR-01'), must('ERR-02'), should('ERR-03'), must('ERR-04')], [t]);
  expect(r.requirements.map((x) => x.status)).toEqual(['fail', 'fail', 'warn', 'fail']);
});

test('verdict: a failing test naming no ledger requirement is a run problem; a passing one is only listed', () => {
  const r = verdictOf([must('AUTH-01')], [rec('AUTH-01 a', 'passed'), rec('stray check', 'passed'), rec('NOPE-01 unknown id', 'failed')]);
  expect(r.unmapped.map((u) => u.test)).toEqual(['stray check', 'NOPE-01 unknown id']);
  expect(r.problems.map((p) => p.reason).join('\n')).toContain('NOPE-01');
  // The verdict is the gate's result: an unmapped failure is the harness's trouble, not the target's.
  expect(r.verdict).toBe('harness');
  const ok = verdictOf([must('AUTH-01')], [rec('AUTH-01 a', 'passed'), rec('stray check', 'passed')]);
  expect(ok.verdict).toBe('pass');
});

test('verdict: a secret found in an artifact or a run error fails the run', () => {
  const ledger = [must('AUTH-01')];
  const tests = [rec('AUTH-01 a', 'passed')];
  // The verdict is the gate's result: harness trouble (exit 5), whatever the requirements say.
  expect(verdictOf(ledger, tests, { secretFindings: ['reports/results.json: API_KEY (raw)'] }).verdict).toBe('harness');
  expect(verdictOf(ledger, tests, { runErrors: ['phase load ended without a report'] }).gate).toMatchObject({
    result: 'harness',
    exitCode: 5,
  });
});

test('verdict: experimental requirements are marked in JSON and Markdown', () => {
  const r = verdictOf(
    [must('UPD-01', { experimental: true, section: 'Endpoints > 2. Update stock level (experimental)' })],
    [rec('UPD-01 a', 'passed')],
  );
  expect(r.experimental).toEqual(['UPD-01']);
  expect(r.requirements[0].experimental).toBe(true);
  expect(renderMarkdown(r)).toContain('🧪');
});

test('verdict: conformance.json carries the fields reports/README.md documents', () => {
  const r = verdictOf([must('AUTH-01')], [rec('AUTH-01 a', 'passed')]);
  expect(Object.keys(r)).toEqual(
    expect.arrayContaining(['verdict', 'target', 'requirements', 'profile', 'requests', 'notCertified', 'experimental', 'generatedAt']),
  );
  expect(Object.keys(r.requirements[0])).toEqual(expect.arrayContaining(['id', 'title', 'level', 'status', 'evidence']));
});

test('markdown: failures come first with their evidence, then warnings', () => {
  const r = verdictOf(
    [must('AUTH-01'), must('AUTH-02'), should('RL-20')],
    [
      rec('AUTH-01 a', 'passed'),
      rec('AUTH-02 b', 'failed', {
        errors: ['AUTH-02: expected 401, observed 200'],
        annotations: [{ type: 'evidence', description: 'GET /v1/inventory → 200' }],
      }),
      rec('RL-20 c', 'passed', { annotations: [{ type: 'warning', description: 'no backoff hint' }] }),
    ],
  );
  const md = renderMarkdown(r);
  expect(md.indexOf('## Failures')).toBeLessThan(md.indexOf('## Warnings'));
  expect(md.indexOf('## Warnings')).toBeLessThan(md.indexOf('## All requirements'));
  expect(md).toContain('AUTH-02: expected 401, observed 200');
  expect(md).toContain('GET /v1/inventory → 200');
  expect(md).toContain('no backoff hint');
});

test('title ids: the prefix of a test title is its requirement id', () => {
  expect(primaryId('AUTH-02 invalid key yields 401 with an Error body')).toBe('AUTH-02');
  expect(primaryId('RL-10 a burst admits at most the limit')).toBe('RL-10');
  expect(primaryId('HTTP-01: Date on every response')).toBe('HTTP-01');
  expect(primaryId('auth works')).toBeUndefined();
  expect(primaryId('AUTH invalid')).toBeUndefined();
});

test('JSON report: nested suites, outcomes, annotations, request counts and cleaned errors', () => {
  const report = {
    suites: [
      {
        title: 'a.spec.ts',
        specs: [],
        suites: [
          {
            title: 'describe',
            specs: [
              {
                title: 'AUTH-02 invalid key',
                tags: ['mutates'],
                tests: [
                  {
                    projectName: 'functional',
                    status: 'unexpected',
                    annotations: [{ type: 'requirement', description: 'ERR-01' }],
                    results: [
                      {
                        status: 'failed',
                        errors: [
                          {
                            message:
                              '\u001b[31mError: AUTH-02: expected 401, observed 200\u001b[39m\n\n  10 |   foo\n> 11 |   bar\n     |   ^',
                          },
                        ],
                        annotations: [
                          { type: 'requests', description: '4' },
                          { type: 'evidence', description: 'GET /v1/inventory → 200' },
                        ],
                      },
                    ],
                  },
                ],
              },
            ],
          },
        ],
      },
    ],
  };
  const [t] = testsFromJsonReport(report);
  expect(t.title).toBe('AUTH-02 invalid key');
  expect(t.outcome).toBe('failed');
  expect(t.tags).toEqual(['@mutates']);
  expect(t.requests).toBe(4);
  expect(t.errors).toEqual(['Error: AUTH-02: expected 401, observed 200']);
  expect(requirementIds(t)).toEqual(['AUTH-02', 'ERR-01']);
  expect(cleanErrorMessage('x'.repeat(5000)).length).toBeLessThan(4100);
});

test('error messages: boolean-check boilerplate and stack lines go, diffs stay', () => {
  const boolean =
    'Error: MSG-04: POST /quickstart/messages: expected status 401, observed 201\n\nexpect(received).toBe(expected) // Object.is equality\n\nExpected: true\nReceived: false\n\n   at fixtures.ts:482';
  expect(cleanErrorMessage(boolean)).toBe('Error: MSG-04: POST /quickstart/messages: expected status 401, observed 201');
  const diff =
    'Error: ERR-01: Error body of GET /v1/inventory → 401: expected none, observed these deviations\n\nexpect(received).toEqual(expected) // deep equality\n\n- Expected  - 1\n+ Received  + 3\n\n- Array []\n+ Array [\n+   "code is missing",\n+ ]';
  expect(cleanErrorMessage(diff)).toBe(diff);
  const plain = 'Error: expect(received).toBe(expected)\n\nExpected: 2\nReceived: 1';
  expect(cleanErrorMessage(plain)).toBe(plain);
});

test('markdown: requirements are grouped by top-level spec section, the clause beside them', () => {
  expect(sectionOf('Limits, rule 1')).toEqual(['Limits', 'rule 1']);
  expect(sectionOf('Endpoints > 2. Update stock level (experimental)')).toEqual(['Endpoints', '2. Update stock level (experimental)']);
  expect(sectionOf('Authentication')).toEqual(['Authentication', '—']);
  expect(sectionOf('RFC 9110 §11.1')).toEqual(['HTTP rules, by RFC clause', 'RFC 9110 §11.1']);
  expect(sectionOf('HTTP rules (Values); Errors')).toEqual(['HTTP rules, by RFC clause', 'HTTP rules (Values); Errors']);
  expect(sectionOf('Versioning; RFC 8594 §3')).toEqual(['Versioning', 'RFC 8594 §3']);
  expect(sectionOf('Team rules > Safety')).toEqual(['Team rules', 'Safety']);
  const r = verdictOf(
    [
      must('RL-01', { section: 'Limits, rule 1' }),
      must('AUTH-01', { section: 'Authentication' }),
      must('AUTH-05', { section: 'RFC 9110 §11.1' }),
    ],
    [rec('RL-01 a', 'passed'), rec('AUTH-01 a', 'passed'), rec('AUTH-05 a', 'passed')],
  );
  const md = renderMarkdown(r);
  expect(md.indexOf('### Authentication')).toBeLessThan(md.indexOf('### Limits'));
  expect(md.indexOf('### Limits')).toBeLessThan(md.indexOf('### HTTP rules'));
  expect(md).toContain('| **RL-01** | rule 1 | must | ✅ pass |');
});

test('markdown: project rules are listed apart from spec conformance; pacing per key; not certified says why', () => {
  const r = verdictOf(
    [must('AUTH-02'), must('LOAD-01', { source: 'project', section: 'Limits' }), must('RL-05')],
    [
      rec('AUTH-02 a', 'passed'),
      rec('LOAD-01 a', 'passed'),
      rec('RL-05 a', 'skipped', { annotations: [{ type: 'not-certified', description: 'MAX_EXHAUST_REQUESTS=2000 reached' }] }),
    ],
  );
  expect(r.requirements.find((x) => x.id === 'LOAD-01')?.source).toBe('project');
  expect(r.requirements.find((x) => x.id === 'AUTH-02')?.source).toBe('spec');
  r.pacing = [{ key: '<RATE_LIMIT_KEY>', requests: 61, waits: 2, longestWaitS: 3.5, refused: 1, earlyRequests: 0, suspectedBan: false }];
  const md = renderMarkdown(r);
  const project = md.indexOf(`### ${PROJECT_RULES}`);
  expect(project).toBeGreaterThan(md.indexOf('### Authentication'));
  expect(md.slice(project)).toContain('LOAD-01');
  expect(md.slice(project).split('\n### ')[0]).not.toContain('AUTH-02');
  expect(md).toContain('| `<RATE_LIMIT_KEY>` | 61 | 2 | 3.5 s | 1 | 0 | no |');
  expect(md).toContain('never a failure of the server');
  expect(md).toContain('MAX_EXHAUST_REQUESTS=2000 reached:');
});

test('markdown: a run the user opted out of TLS verification for says so next to the target', () => {
  const r = computeVerdict({
    ledger: [],
    tests: [],
    profile: 'full',
    target: { kind: 'external', baseUrl: 'https://h/v1', tls: 'not verified (INSECURE_TLS)' },
    generatedAt: 't',
  });
  expect(renderMarkdown(r)).toContain('- Target: inventory `https://h/v1` — **TLS certificate not verified (INSECURE_TLS)**');
  const verified = computeVerdict({
    ledger: [],
    tests: [],
    profile: 'full',
    target: { kind: 'external', baseUrl: 'https://h/v1', tls: 'verified' },
    generatedAt: 't',
  });
  expect(renderMarkdown(verified)).not.toContain('TLS certificate');
});

test("verdict: a run stopped by a signal reports what ran; what did not end is not certified, never failed; the gate is interrupted with the signal's exit code", () => {
  const ledger = [must('AUTH-02'), must('UPD-01'), must('MSG-01'), must('INV-01')];
  const tests = [
    rec('AUTH-02 passes', 'passed'),
    rec('UPD-01 cut short', 'interrupted', { errors: ['Test was interrupted.'] }),
    rec('INV-01 fails', 'failed', { errors: ['INV-01: expected 200, observed 500'] }),
    rec('MSG-01 never started', 'skipped'),
  ];
  const stopped = computeVerdict({
    ledger: [...ledger, must('RL-05')],
    tests,
    profile: 'full',
    target: {},
    generatedAt: 't',
    interrupted: { signal: 'SIGINT', exitCode: 130 },
  });
  expect(stopped.requirements.map((r) => [r.id, r.status])).toEqual([
    ['AUTH-02', 'pass'],
    ['UPD-01', 'skipped'],
    ['MSG-01', 'skipped'],
    ['INV-01', 'fail'],
    ['RL-05', 'skipped'],
  ]);
  expect(stopped.notCertified.map((n) => [n.id, n.reason])).toEqual([
    ['UPD-01', 'the run was stopped by SIGINT before this check ended'],
    ['MSG-01', 'the run was stopped by SIGINT before this check ended'],
    ['RL-05', 'the run was stopped by SIGINT before any check of it ended'],
  ]);
  expect(stopped.gate).toMatchObject({ result: 'interrupted', exitCode: 130 });
  expect(stopped.verdict).toBe('interrupted');
  expect(stopped.problems).toEqual([]);
  // The same tests without the signal: the cut-short and unstarted checks are failures, as a check must not silently skip.
  const plain = computeVerdict({ ledger, tests, profile: 'full', target: {}, generatedAt: 't' });
  expect(plain.requirements.filter((r) => r.status === 'fail').map((r) => r.id)).toEqual(['UPD-01', 'MSG-01', 'INV-01']);
});

test('one unrestored record: what the stock fixture writes, the verdict reads back (malformed ones skipped, the last reading of a pet wins)', () => {
  const written = [
    unrestoredAnnotation({ petId: '7', original: '5', current: '12' }),
    { type: 'unrestored', description: 'not json' },
    { type: 'unrestored', description: JSON.stringify({ original: '1' }) },
    unrestoredAnnotation({ petId: '9007199254740993', original: '0', current: null }),
    unrestoredAnnotation({ petId: '7', original: '5', current: '13' }),
  ];
  expect(unrestoredOf(written)).toEqual([
    { petId: '7', original: '5', current: '12' },
    { petId: '9007199254740993', original: '0', current: null },
    { petId: '7', original: '5', current: '13' },
  ]);
  const problem = leftChangedProblem([rec('INV-01 a', 'passed', { annotations: written })]);
  expect(problem?.pets).toEqual([
    { petId: '7', original: '5', current: '13' },
    { petId: '9007199254740993', original: '0', current: null },
  ]);
  expect(leftChangedProblem([rec('INV-01 a', 'passed')])).toBeUndefined();
});
