import { test, expect } from '../test.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import AdmZip from 'adm-zip';
import type { PhaseResult } from '../../certify/phases.ts';
import { judge, phaseSummaries, readGateInputs, verdictInputFor } from '../../certify/steps/judge.ts';
import { abandonRun, prepareRun, titleFilter } from '../../certify/steps/prepare.ts';
import { pacingSummary, startRunPacer } from '../../certify/steps/pacer.ts';
import { atAGlance, printSummary } from '../../certify/steps/print.ts';
import { scanSecrets } from '../../certify/steps/scan-secrets.ts';
import { renderMarkdown } from '../../certify/markdown.ts';
import { computeVerdict, type LedgerRequirement } from '../../certify/verdict.ts';

/** certify's steps from prepare's checks to the verdict, the scan, the summary and the pacer (certify/steps/), one at a time. */

const KEY = 'ik_step_test_7c1d9e0f2a3b4c5d';

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'certify-steps-'));
}

const phaseResult = (phase: string, extra: Partial<PhaseResult> = {}): PhaseResult => ({
  phase,
  exitCode: 0,
  signal: null,
  durationMs: 1234,
  timedOut: false,
  reportWritten: true,
  tail: [],
  ...extra,
});

const ledger: LedgerRequirement[] = [{ id: 'AUTH-02', section: 'Authentication', title: 'AUTH-02 title', level: 'must', source: 'spec' }];

test('prepare: a usage problem is returned and no folder is made; an unreadable ledger is a run problem', () => {
  const dir = tempDir();
  try {
    const reportsDir = path.join(dir, 'reports');
    const refused = prepareRun({ env: { RATE_LIMIT_PLAN: 'basic', REPORTS_DIR: reportsDir } });
    expect(refused).toEqual({ ok: false, errors: ['RATE_LIMIT_PLAN="basic" must be one of free, pro, business, enterprise'] });
    expect(fs.existsSync(reportsDir), 'nothing is written for a usage error').toBe(false);

    const prepared = prepareRun({
      env: { REPORTS_DIR: reportsDir },
      onlyPhases: ['functional'],
      ledgerFile: path.join(dir, 'missing.yaml'),
    });
    if (!prepared.ok) throw new Error(`prepareRun refused: ${prepared.errors.join('; ')}`);
    const { run } = prepared;
    expect(run.phases).toEqual(['functional']);
    expect(run.leftOutPhases).toEqual([]);
    expect(run.replaying).toBe(false);
    expect(fs.existsSync(run.workDir), 'the scratch folder is made').toBe(true);
    expect(run.ledger).toEqual([]);
    expect(run.runErrors).toHaveLength(1);
    expect(run.runErrors[0]).toContain('requirements ledger');
    abandonRun(run);
    expect(fs.existsSync(run.workDir), 'abandoning the run removes the scratch folder').toBe(false);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('prepare: the title filter selects tests by their whole title, as Playwright matches --grep (title path, then tags)', () => {
  const grep = titleFilter(['GEN-01 listInventory: no generated request gets a 5xx', 'AUTH-03 a key (any case) [x] costs $1? @mutates']);
  const match = /^\/(.*)\/([gi]*)$/.exec(grep);
  expect(match, 'a /…/ pattern, so Playwright adds no flags').not.toBeNull();
  const re = new RegExp(match![1]!, match![2]);
  const selected = (titlePath: string) => re.test(titlePath);
  expect(selected('generated generated/cases.spec.ts GEN-01 listInventory: no generated request gets a 5xx')).toBe(true);
  expect(selected('functional auth/bearer.spec.ts AUTH-03 a key (any case) [x] costs $1? @mutates @mutates')).toBe(true);
  expect(selected('generated generated/cases.spec.ts GEN-01 listInventory: no generated request gets a 5xx at all')).toBe(false);
  expect(selected('generated generated/cases.spec.ts XGEN-01 listInventory: no generated request gets a 5xx')).toBe(false);
  expect(selected('generated generated/cases.spec.ts GEN-02 listInventory: every generated request gets a response')).toBe(false);
  expect(selected('functional auth/bearer.spec.ts AUTH-03 a key (any case) [y] costs $1? @mutates')).toBe(false);
});

test('judge: the verdict input holds every test and the gate; a replay only the requirements its case evidences, without the gate', () => {
  const test = (title: string, outcome: 'passed' | 'skipped') => ({
    title,
    project: 'functional',
    tags: [],
    outcome,
    errors: [],
    annotations: [],
    requests: 1,
  });
  const ledger2: LedgerRequirement[] = [
    ...ledger,
    { id: 'INV-01', section: 'Endpoints', title: 'INV-01 title', level: 'must', source: 'spec' },
  ];
  const notRun = [test('INV-01 left out', 'skipped')];
  const parts = {
    allPhases: ['functional', 'load'],
    phases: ['functional'],
    leftOutPhases: ['load'],
    results: [phaseResult('functional')],
    notRun,
    tests: [test('AUTH-02 a missing key gets 401', 'passed'), test('INV-01 skipped here', 'skipped')],
    ledger: ledger2,
    gate: { options: { strict: true } },
    profile: 'full',
    target: 't',
    generatedAt: 'g',
    runErrors: [`a problem naming ${KEY}`],
    redact: (s: string) => s.split(KEY).join('<API_KEY>'),
  };
  const full = verdictInputFor({ ...parts, replaying: false });
  expect(full.tests.map((t) => t.title)).toEqual(['AUTH-02 a missing key gets 401', 'INV-01 skipped here', 'INV-01 left out']);
  expect(full.ledger.map((r) => r.id)).toEqual(['AUTH-02', 'INV-01']);
  expect(full.gate).toEqual({ strict: true });
  expect(full.runErrors).toEqual(['a problem naming <API_KEY>']);
  expect(full.phases?.map((p) => p.name)).toEqual(['functional', 'load']);
  const replay = verdictInputFor({ ...parts, replaying: true });
  expect(replay.tests.map((t) => t.title)).toEqual(['AUTH-02 a missing key gets 401']);
  expect(replay.ledger.map((r) => r.id)).toEqual(['AUTH-02']);
  expect(replay.gate).toEqual({});
});

test('judge: phase summaries in run order; the verdict written as conformance.json and .md, redacted', () => {
  const dir = tempDir();
  try {
    const summaries = phaseSummaries(
      ['functional', 'rate-limit', 'load'],
      ['functional', 'rate-limit'],
      ['load'],
      [phaseResult('functional')],
      'readonly',
    );
    expect(summaries).toEqual([
      { name: 'functional', ran: true, seconds: 1.2, exit: 0 },
      { name: 'rate-limit', ran: false, reason: 'run interrupted' },
      { name: 'load', ran: false, reason: 'CONFORMANCE_PROFILE=readonly' },
    ]);
    const report = judge(
      { ledger, tests: [], profile: 'full', target: { note: KEY }, generatedAt: 't', phases: summaries },
      dir,
      (s) => s.split(KEY).join('[redacted API_KEY]'),
      { pacing: [] },
    );
    expect(report.verdict).toBe('fail');
    const json = fs.readFileSync(path.join(dir, 'conformance.json'), 'utf8');
    expect(json.includes(KEY), 'conformance.json holds no key').toBe(false);
    expect(JSON.parse(json)).toMatchObject({ verdict: 'fail', target: { note: '[redacted API_KEY]' }, pacing: [] });
    expect(fs.readFileSync(path.join(dir, 'conformance.md'), 'utf8')).toContain('AUTH-02');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('scan secrets: a text file holding a key is scrubbed, a zip holding one removed; each is named and fails the run', () => {
  const dir = tempDir();
  try {
    fs.writeFileSync(path.join(dir, 'clean.txt'), 'nothing here');
    fs.writeFileSync(path.join(dir, 'log.txt'), `Authorization: Bearer ${KEY}\nand ${Buffer.from(KEY).toString('base64')}\n`);
    const zip = new AdmZip();
    zip.addFile('trace.json', Buffer.from(`{"auth":"${KEY}"}`));
    fs.writeFileSync(path.join(dir, 'blob.zip'), zip.toBuffer());
    const scan = scanSecrets([dir], [{ name: 'API_KEY', value: KEY }], dir, () => true);
    expect(scan.filesScanned).toBe(3);
    expect(scan.scrubbed).toEqual(['log.txt']);
    expect(scan.removed).toEqual(['blob.zip']);
    expect(fs.existsSync(path.join(dir, 'blob.zip'))).toBe(false);
    const scrubbed = fs.readFileSync(path.join(dir, 'log.txt'), 'utf8');
    expect(scrubbed.includes(KEY), 'the scrubbed file holds no key').toBe(false);
    expect(scrubbed).toContain('Authorization: Bearer <API_KEY>');
    expect(scan.findings.some((f) => f.startsWith('log.txt') && f.endsWith('scrubbed in place'))).toBe(true);
    expect(scan.findings.some((f) => f.startsWith('blob.zip') && f.endsWith('file removed'))).toBe(true);
    for (const f of scan.findings) expect(f.includes(KEY), 'a finding shows no key').toBe(false);
    // The run still fails (harness trouble, exit 5), naming each file.
    const report = computeVerdict({ ledger: [], tests: [], profile: 'full', target: {}, generatedAt: 't', secretFindings: scan.findings });
    expect(report.verdict).toBe('harness');
    expect(report.problems.some((p) => p.reason.includes('log.txt'))).toBe(true);
    expect(report.problems.some((p) => p.reason.includes('blob.zip'))).toBe(true);
    // A second scan finds nothing left.
    expect(scanSecrets([dir], [{ name: 'API_KEY', value: KEY }], dir).findings).toEqual([]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('print: failures, problems, what was not certified and why, pacing per key, the verdict line and requests sent', () => {
  const report = computeVerdict({
    ledger: [...ledger, { id: 'RL-05', section: 'Limits', title: 'RL-05 title', level: 'must', source: 'spec' }],
    tests: [
      {
        title: 'AUTH-02 a',
        project: 'functional',
        tags: [],
        outcome: 'failed',
        errors: ['Error: AUTH-02: expected 401, observed 200\nmore'],
        annotations: [],
        requests: 3,
      },
      {
        title: 'RL-05 a',
        project: 'rate-limit',
        tags: [],
        outcome: 'skipped',
        errors: [],
        annotations: [{ type: 'not-certified', description: 'Retry-After 600 s is more than MAX_RETRY_AFTER_S=120' }],
        requests: 2,
      },
    ],
    profile: 'full',
    target: {},
    generatedAt: 't',
  });
  report.pacing = [
    { key: '<RATE_LIMIT_KEY>', requests: 61, waits: 1, longestWaitS: 3.2, refused: 1, earlyRequests: 0, suspectedBan: false },
  ];
  let out = '';
  printSummary(report, (t) => (out += t), { reportsFile: 'r/conformance.md', otherReports: ['conformance.json'], seconds: 12.34 });
  // The whole message before any assertion diff, never its first line only.
  expect(out).toContain('Failed requirements (1):\n  ✗ AUTH-02 (must) AUTH-02 title\n      AUTH-02: expected 401, observed 200 more\n');
  expect(out).toContain(
    "Not certified (1; a limit of this run, not the server's failure):\n  ◦ RL-05: Retry-After 600 s is more than MAX_RETRY_AFTER_S=120\n",
  );
  expect(out).toContain('pacing <RATE_LIMIT_KEY>: 61 request(s), 1 wait(s), longest wait 3.2 s, 1 429(s), 0 early request(s)\n');
  // "Skipped" told apart: not certified (a limit of the run) or out of scope (the ledger's exclusions).
  expect(out).toContain('certify: verdict FAIL, exit 1 — 0 pass, 0 warn, 1 fail, 1 not certified, 0 out of scope (12.3 s)\n');
  expect(out).toContain('requests by phase: functional 3, rate-limit 2\n');
  expect(out.endsWith('requests sent: 5\n')).toBe(true);
  // Without --verbose: the pacing of a key that met no trouble and the requests by phase are details, not said.
  let quiet = '';
  printSummary(report, (t) => (quiet += t), {
    reportsFile: 'r/conformance.md',
    otherReports: ['conformance.json'],
    seconds: 12.34,
    detail: () => undefined,
  });
  expect(quiet).toContain('Failed requirements (1):');
  expect(quiet).toContain('Not certified (1;');
  expect(quiet).not.toContain('pacing <RATE_LIMIT_KEY>');
  expect(quiet).not.toContain('requests by phase');
  expect(quiet.endsWith('requests sent: 5\n')).toBe(true);
});

test("pacer: one coordinator per run, started with the run's limits; its URL goes to every phase; its report per key on close", async () => {
  let started: unknown;
  let closed = 0;
  const pacer = await startRunPacer({ maxRetryAfterS: 30, workers: 2 }, async (o) => {
    started = o;
    return {
      url: 'http://127.0.0.1:9',
      close: async () => {
        closed++;
      },
      report: () => ({
        keys: [
          {
            label: '<API_KEY>',
            granted: 10,
            observed: 10,
            released: 0,
            refused: 1,
            unplanned429: 0,
            inFlightAt429: 0,
            suspectedBans: 1,
            earlyGrants: 0,
            longestWaitMs: 2500,
            fallbackResponses: 0,
            notCertified: [],
          },
        ],
        pets: { leases: 0, mostWaiting: 0, heldAtEnd: 0, retired: 0 },
      }),
    };
  });
  expect(started).toEqual({ maxWaitMs: 30_000, reserve: 3 });
  expect(pacer.env).toEqual({ CONFORMANCE_PACER_URL: 'http://127.0.0.1:9' });
  const summary = await pacer.close();
  expect(summary).toEqual([{ key: '<API_KEY>', requests: 10, longestWaitS: 2.5, refused: 1, earlyRequests: 0, suspectedBan: true }]);
  expect(await pacer.close()).toBe(summary);
  expect(closed).toBe(1);
  expect(
    pacingSummary({ label: '<X>', granted: 1, waits: 4, longestWaitMs: 0, refused: 0, earlyGrants: 2, suspectedBans: 0 }),
  ).toMatchObject({ waits: 4, earlyRequests: 2, suspectedBan: false });
});

test('pacer: the summary says why a key held every key of the run, and why a key was closed; print and markdown show it', () => {
  const holds = [
    { label: '<API_KEY>', reason: 'a 429 on <API_KEY> that its own X-RateLimit-Remaining (4) did not predict', heldForMs: 2100 },
  ];
  const k = {
    label: '<API_KEY>',
    granted: 6,
    longestWaitMs: 2100,
    refused: 2,
    earlyGrants: 0,
    suspectedBans: 0,
    closed: 'Retry-After 9999 s is longer than MAX_RETRY_AFTER_S=3 s; nothing more is sent on <API_KEY> for the rest of the run',
  };
  const summary = pacingSummary(k, holds);
  expect(summary.notes).toEqual([`${holds[0].reason} (3 s)`, k.closed]);
  expect(pacingSummary({ ...k, label: '<RATE_LIMIT_KEY>', closed: undefined }, holds).notes).toBeUndefined();
  const report = computeVerdict({ ledger, tests: [], profile: 'full', target: {}, generatedAt: 't' });
  report.pacing = [summary];
  let out = '';
  printSummary(report, (t) => (out += t), { reportsFile: 'r/conformance.md', otherReports: [], seconds: 1 });
  expect(out).toContain(`  ◦ ${holds[0].reason} (3 s)\n  ◦ ${k.closed}\n`);
  expect(renderMarkdown(report)).toContain(`- \`<API_KEY>\`: ${k.closed}`);
});

test('pacer: the real coordinator starts on 127.0.0.1 and reports nothing for a run that sent nothing', async () => {
  const pacer = await startRunPacer({ maxRetryAfterS: 5, workers: 1 });
  expect(pacer.env.CONFORMANCE_PACER_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(await pacer.close()).toEqual([]);
});

test('judge: CONFORMANCE_STRICT is read by its setting (settings/), as --strict writes it', () => {
  const strict = (value: string | undefined) => readGateInputs({ CONFORMANCE_STRICT: value }).inputs.options.strict;
  expect([strict('true'), strict('1'), strict('YES'), strict(' true\n')]).toEqual([true, true, true, true]);
  expect([strict('false'), strict('0'), strict('no'), strict(undefined), strict('')]).toEqual([false, false, false, false, false]);
});

test('console: a long not-certified reason is cut after a list item at 240 characters, the whole list left to conformance.md', () => {
  const items = Array.from({ length: 40 }, (_, i) => `case ${i}`).join('; ');
  const reason = `40 coverage cases not sent (raise MAX_MESSAGES to send them): ${items}`;
  const line = atAGlance(reason);
  expect(line.length).toBeLessThan(300);
  expect(line).toMatch(/; case \d+; … \(the whole list in conformance\.md\)$/);
  expect(atAGlance('short reason')).toBe('short reason');
});
