/**
 * A 429 a check did not plan (suites/fixtures/unplanned-429.ts): the check is not certified, and
 * what the 429 itself breaks (Retry-After, the three X-RateLimit-* headers) is judged at once as
 * typed findings that fail those requirements in the verdict (certify/verdict.ts, `met-finding`).
 */
import { test, expect } from '../test.ts';
import { computeVerdict, type LedgerRequirement, type TestRecord } from '../../certify/verdict.ts';
import { metFindingAnnotation, refusalFindings, interruptedReason } from '../../suites/fixtures/unplanned-429.ts';

const must = (id: string): LedgerRequirement => ({ id, section: 'Limits', title: `${id} title`, level: 'must', source: 'spec' });
const refusal = (headers: Record<string, string>) => ({
  label: 'GET /v1/inventory → 429',
  curl: "curl -i 'http://127.0.0.1:1/v1/inventory' -H 'Authorization: Bearer $API_KEY'",
  header: (name: string) => Object.entries(headers).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1],
});
const gateway = refusal({ 'Content-Type': 'text/html', Server: 'gate' });

test("a front door's 429 without Retry-After nor X-RateLimit-* breaks RL-06, RL-01 and RL-09, each named with the response and a curl line", () => {
  const findings = refusalFindings(gateway);
  expect(findings.map((f) => f.id)).toEqual(['RL-06', 'RL-01', 'RL-09']);
  for (const f of findings) {
    expect(f).toMatchObject({ level: 'fail', curl: gateway.curl });
    expect(f.message).toContain('GET /v1/inventory → 429; gate (Server header), an HTML body');
  }
  expect(findings[1]).toMatchObject({ observed: 'missing X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset' });
});

test("the API's own 429 (Retry-After and the three headers) breaks nothing; a malformed Retry-After breaks RL-07", () => {
  const own = { 'Retry-After': '3', 'X-RateLimit-Limit': '60', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': '1800000000' };
  expect(refusalFindings(refusal(own))).toEqual([]);
  expect(refusalFindings(refusal({ ...own, 'Retry-After': '2.0' }), 'not delay-seconds').map((f) => f.id)).toEqual(['RL-07']);
});

test('the verdict: the interrupted check is not certified, never failed; the met findings fail their own requirements', () => {
  const findings = refusalFindings(gateway);
  const reason = interruptedReason('AUTH-03: ', gateway, '<API_KEY>', { blockedForMs: 15_000 }, findings);
  expect(reason).toMatch(
    /^AUTH-03: GET \/v1\/inventory → 429: a 429 the check did not plan, on <API_KEY> .*the 429 itself fails RL-06, RL-01, RL-09$/,
  );
  const interrupted: TestRecord = {
    title: 'AUTH-03 an unknown key gets 401',
    project: 'functional',
    tags: [],
    outcome: 'skipped',
    errors: [],
    annotations: [...findings.map(metFindingAnnotation), { type: 'not-certified', description: reason }],
    requests: 3,
  };
  const r = computeVerdict({
    ledger: [must('AUTH-03'), must('RL-06'), must('RL-01'), must('RL-09'), must('RL-05')],
    tests: [interrupted, { ...interrupted, title: 'RL-05 the limit', annotations: [], outcome: 'passed' }],
    profile: 'full',
    target: { baseUrl: 'http://x/v1' },
    generatedAt: '2026-01-01T00:00:00Z',
  });
  const byId = Object.fromEntries(r.requirements.map((q) => [q.id, q]));
  expect(byId['AUTH-03']!.status).toBe('skipped');
  expect(byId['RL-05']!.status).toBe('pass');
  for (const id of ['RL-06', 'RL-01', 'RL-09']) {
    expect(byId[id]!.status).toBe('fail');
    expect(byId[id]!.reason).toMatch(/broken on a response met by AUTH-03 an unknown key gets 401: .*reproduce: curl -i/s);
    expect(byId[id]!.evidence.map((e) => e.test)).toEqual(['AUTH-03 an unknown key gets 401']);
  }
  expect(r.verdict).toBe('fail');
});
