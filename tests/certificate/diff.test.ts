/**
 * `inventory-conformance diff`, `certify --no-regression-from` and the certificate's "compared
 * with" section, on certificates written from the real verdict.
 */
import fs from 'node:fs';
import path from 'node:path';
import { test, expect } from './scratch.ts';
import { diffCertificates, renderDiff } from '../../certify/certificate/diff.ts';
import { verifyCertificate, writeCertificate } from '../../certify/certificate/index.ts';
import type { Certificate } from '../../certify/certificate/types.ts';
import { previousRun } from '../../certify/steps/judge.ts';
import { main } from '../../cli/main.ts';
import { EXIT } from '../../core/exit-codes.ts';
import { conformantReport, failingReport } from './reports.ts';
import { certificateProblems } from './report-schemas.ts';
import type { ConformanceReport } from '../../certify/verdict.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

function certificateOf(dir: string, report: ConformanceReport, previous?: Certificate): { file: string; cert: Certificate } {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'conformance.json'), JSON.stringify(report));
  const w = writeCertificate({ report, reportsDir: dir, env: {}, ...(previous ? { previous } : {}) });
  return { file: w.jsonFile, cert: w.certificate };
}

async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), env: {}, cwd: ROOT });
  return { code, stdout, stderr };
}

test('diff: AUTH-02 and UPD-06 regressed from the conformant certificate to the one with deviations: exit 1 naming them', async ({
  scratch,
}) => {
  const before = certificateOf(scratch('old'), conformantReport());
  const after = certificateOf(scratch('new'), failingReport());
  const text = await cli(['diff', before.file, after.file]);
  expect(text.code).toBe(EXIT.fail);
  expect(text.stdout).toContain('Regressed (2):\n  AUTH-02 (must) pass → fail');
  expect(text.stdout).toContain('  UPD-06 (must) pass → fail');
  expect(text.stdout).toContain('diff: REGRESSED — must-level: AUTH-02, UPD-06 (exit 1)');

  const json = await cli(['diff', before.file, after.file, '--json']);
  expect(json.code).toBe(EXIT.fail);
  const doc = JSON.parse(json.stdout);
  expect(doc).toMatchObject({
    result: 'regressed',
    exitCode: 1,
    mustRegressions: ['AUTH-02', 'UPD-06'],
    fixed: [],
    added: [],
    removed: [],
  });
  expect(doc.regressed.map((c: { id: string; before: string; now: string }) => `${c.id} ${c.before}→${c.now}`)).toEqual([
    'AUTH-02 pass→fail',
    'UPD-06 pass→fail',
  ]);

  const back = await cli(['diff', after.file, before.file]);
  expect(back.code).toBe(EXIT.pass);
  expect(back.stdout).toContain('Fixed (2):');
});

test('diff: requirements added and removed, digests, target and profile changes are named; a should-level regression exits 0', () => {
  const base = {
    generatedAt: 'a',
    target: { kind: 'external', baseUrl: 'https://a.example/v1' },
    profile: 'full',
    digests: { suite: '1', spec: 's', interface: 'i', ledger: 'l' },
  };
  const old = {
    ...base,
    results: {
      requirements: [
        { id: 'GEN-01', level: 'must' as const, status: 'pass' as const },
        { id: 'LOAD-03', level: 'should' as const, status: 'pass' as const },
        { id: 'OLD-01', level: 'must' as const, status: 'pass' as const },
      ],
    },
  };
  const now = {
    ...base,
    generatedAt: 'b',
    profile: 'readonly',
    target: { kind: 'external', baseUrl: 'https://b.example/v1' },
    digests: { ...base.digests, suite: '2', ledger: 'm' },
    results: {
      requirements: [
        { id: 'GEN-01', level: 'must' as const, status: 'skipped' as const },
        { id: 'LOAD-03', level: 'should' as const, status: 'warn' as const },
        { id: 'NEW-01', level: 'must' as const, status: 'fail' as const },
      ],
    },
  };
  const d = diffCertificates(old, now);
  expect(d.regressed.map((c) => c.id)).toEqual(['LOAD-03']);
  expect(d.mustRegressions).toEqual([]);
  expect(d.added.map((c) => c.id)).toEqual(['NEW-01']);
  expect(d.removed.map((c) => c.id)).toEqual(['OLD-01']);
  expect(d.otherChanges.map((c) => `${c.id} ${c.before}→${c.now}`)).toEqual(['GEN-01 pass→skipped']);
  expect(d.digests.map((x) => x.name)).toEqual(['suite', 'ledger']);
  expect(d.profile).toEqual({ before: 'full', now: 'readonly' });
  const text = renderDiff(d);
  expect(text).toContain('target changed: https://a.example/v1 → https://b.example/v1');
  expect(text).toContain('profile changed: full → readonly');
  expect(text).toContain('diff: no must-level requirement regressed (exit 0)');
});

const BAD: [string, string[], RegExp][] = [
  ['one file', ['a.json'], /diff needs two certificate files/],
  ['a missing file', ['nope-1.json', 'nope-2.json'], /nope-1\.json: no such file/],
  ['an unknown flag', ['--nope', 'a', 'b'], /Unknown option '--nope'/],
  ['not a certificate', ['package.json', 'package.json'], /package\.json: not a certificate/],
];
for (const [name, args, message] of BAD) {
  test(`diff: ${name} is a usage error (exit 2), with a JSON document under --json`, async () => {
    const r = await cli(['diff', ...args]);
    expect(r.code).toBe(EXIT.usage);
    expect(r.stderr).toMatch(message);
    const j = await cli(['diff', ...args, '--json']);
    expect(JSON.parse(j.stdout)).toMatchObject({ result: 'usage', exitCode: 2 });
  });
}

test('no-regression-from: the certificate gated on a previous one states the comparison and gets a "compared with" section; verify accepts it', async ({
  scratch,
}) => {
  const before = certificateOf(scratch('old'), failingReport());
  const previous = previousRun(before.cert, 'old-certificate.json');
  const gated = failingReport({ previous });
  expect(gated.gate).toMatchObject({ result: 'pass', exitCode: 0, newFailures: [] });
  expect(gated.gate.knownFailures.map((k) => `${k.id} ${k.from}`)).toEqual(['AUTH-02 previous certificate', 'UPD-06 previous certificate']);
  const after = certificateOf(scratch('new'), gated, before.cert);
  expect(certificateProblems(after.cert)).toEqual([]);
  expect(after.cert.results.comparison).toMatchObject({ regressed: [], fixed: [], mustRegressions: [] });
  const html = fs.readFileSync(path.join(path.dirname(after.file), 'certificate.html'), 'utf8');
  expect(html).toContain('<section id="compared-with"><h2>Compared with <span class="muted">(old-certificate.json,');
  expect(html).toContain('No requirement changed status.');
  expect(verifyCertificate(after.file, { root: ROOT }).checks.filter((c) => !c.ok)).toEqual([]);

  // Compared with the conformant certificate, the same failures are regressions: the gate fails and the section lists them.
  const good = certificateOf(scratch('good'), conformantReport());
  const regressed = failingReport({ previous: previousRun(good.cert, 'good.json') });
  expect(regressed.gate).toMatchObject({ result: 'fail', exitCode: 1 });
  expect(regressed.gate.newFailures.map((f) => f.id)).toEqual(['AUTH-02', 'UPD-06']);
  const c = certificateOf(scratch('regressed'), regressed, good.cert);
  expect(fs.readFileSync(path.join(path.dirname(c.file), 'certificate.html'), 'utf8')).toContain(
    '<p><b>Must-level regressions: AUTH-02, UPD-06</b></p>',
  );
});
