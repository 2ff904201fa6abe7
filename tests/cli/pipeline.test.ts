/**
 * Pipeline conventions: the action writes the verdict, the failed requirements and the
 * not-certified list to GitHub's job summary (its "job summary" step, run here as the runner runs
 * it, with a fake GITHUB_STEP_SUMMARY file), and the matrix example certifies several targets in
 * parallel with a gate job that needs them all (its gate step run on a passing and a failing
 * matrix).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { test, expect } from '../certificate/scratch.ts';
import { passingRecords, writeRun, type RunOptions } from '../certificate/submission-fixture.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

interface Step {
  id?: string;
  name?: string;
  if?: string;
  run?: string;
  uses?: string;
  env?: Record<string, string>;
  with?: Record<string, unknown>;
}
const read = <T>(file: string): T => YAML.parse(fs.readFileSync(path.join(ROOT, file), 'utf8')) as T;
const actionSteps = () => read<{ runs: { steps: Step[] } }>('action.yml').runs.steps;

/** Runs one `run:` step in bash as the runner would, in `cwd`; returns its exit code, log and the summary file. */
function runStep(step: Step, cwd: string, env: Record<string, string>, summaryBefore = ''): { code: number; log: string; summary: string } {
  const summary = path.join(cwd, '..', 'step-summary.md');
  fs.writeFileSync(summary, summaryBefore);
  const r = spawnSync('bash', ['--noprofile', '--norc', '-e', '-o', 'pipefail', '-c', step.run!], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, GITHUB_STEP_SUMMARY: summary, GITHUB_ACTION_PATH: ROOT, ...env },
    timeout: 30_000,
  });
  return { code: r.status ?? -1, log: `${r.stdout}${r.stderr}`, summary: fs.readFileSync(summary, 'utf8') };
}

function summaryOf(scratch: (name: string) => string, run: RunOptions | undefined, certifyExit: string, before = '') {
  const cwd = scratch('work');
  fs.mkdirSync(cwd, { recursive: true });
  if (run) writeRun(path.join(cwd, 'reports'), run);
  const step = actionSteps().find((s) => s.name === 'job summary')!;
  return runStep(step, cwd, { CERTIFY_EXIT: certifyExit }, before);
}

test('action: the job summary step runs always, after verify and before the upload and the gate', () => {
  const names = actionSteps().map((s) => s.name ?? s.uses);
  const step = actionSteps().find((s) => s.name === 'job summary')!;
  expect(step.if).toBe('${{ always() }}');
  expect(step.env!.CERTIFY_EXIT).toBe('${{ steps.certify.outputs.exit-code }}');
  expect(names.indexOf('job summary')).toBeGreaterThan(names.indexOf('verify the certificate'));
  expect(names.indexOf('job summary')).toBeLessThan(names.indexOf('gate'));
});

test("action: a passing run's summary says PASS with no failed and nothing not certified", async ({ scratch }) => {
  const r = summaryOf(scratch, {}, '0', '# earlier step\n');
  expect(r.code, r.log).toBe(0);
  expect(r.summary.startsWith('# earlier step\n## Inventory Service conformance: PASS\n'), 'appended, never overwritten').toBe(true);
  expect(r.summary).toMatch(
    /^Target `https:\/\/inventory\.acme\.example\/v1`, profile full \(strict\), exit 0: \d+ passed, 0 warned, 0 failed, 0 not certified\. The certificate is valid until 2027-02-23T12:00:00\.000Z\.$/m,
  );
  // A pass lists no failure and nothing not certified; the ledger's exclusions are named out of scope.
  expect(r.summary).not.toContain('### Failed requirements');
  expect(r.summary).not.toContain('### Not certified');
  expect(r.summary).toMatch(/^Also: \d+ out of scope \(the ledger's exclusions/m);
});

test("action: a failing run's summary lists each failed requirement and each one not certified, with the reason", async ({ scratch }) => {
  const tests = passingRecords().map((t) =>
    t.title.startsWith('AUTH-02')
      ? { ...t, outcome: 'failed' as const, errors: ['AUTH-02: expected 401, observed 200'] }
      : t.title.startsWith('RL-05')
        ? { ...t, outcome: 'skipped' as const, annotations: [{ type: 'not-certified', description: 'RATE_LIMIT_KEY is not set | no key' }] }
        : t,
  );
  const r = summaryOf(scratch, { tests }, '1');
  expect(r.code, r.log).toBe(0);
  expect(r.summary).toContain('## Inventory Service conformance: FAIL\n');
  expect(r.summary).toMatch(/^- failed: AUTH-02$/m);
  expect(r.summary).toContain('### Failed requirements (1)\n\n- **AUTH-02** (must): AUTH-02: expected 401, observed 200\n');
  // A `|` in a reason is escaped, as in a table cell.
  expect(r.summary).toContain('### Not certified (1)\n\n- RL-05: RATE_LIMIT_KEY is not set \\| no key\n');
});

test("action: without a certificate the summary says so, with certify's exit code, and the step still passes", async ({ scratch }) => {
  const r = summaryOf(scratch, undefined, '5');
  expect(r.code, r.log).toBe(0);
  expect(r.summary).toBe(
    '## Inventory Service conformance: no certificate\n\ncertify exit 5: no certificate was written; the step log says why.\n',
  );
});

interface Job {
  if?: string;
  needs?: string | string[];
  strategy?: { 'fail-fast'?: boolean; matrix: { include: { target: string; prefix: string }[] } };
  steps: Step[];
}
const MATRIX = '.github/workflows/certify-matrix.example.yml';

test('matrix example: several targets certified in parallel, each with its own keys and artifact; the gate needs them all; the release needs the gate', () => {
  const wf = read<{ jobs: Record<string, Job> }>(MATRIX);
  const certify = wf.jobs.certify!;
  expect(certify.strategy!['fail-fast']).toBe(false);
  const targets = certify.strategy!.matrix.include;
  expect(targets.length).toBeGreaterThanOrEqual(2);
  expect(new Set(targets.map((t) => t.prefix)).size).toBe(targets.length);
  const action = certify.steps.find((s) => s.uses?.startsWith('OWNER/inventory-conformance@'))!;
  expect(action.with).toMatchObject({ strict: true, 'artifact-name': 'conformance-${{ matrix.target }}' });
  for (const key of ['API_KEY', 'RATE_LIMIT_KEY', 'LOAD_KEY'])
    expect(action.env![key]).toBe(`\${{ secrets[format('{0}_${key}', matrix.prefix)] }}`);
  for (const input of Object.values(action.with!)) expect(String(input)).not.toMatch(/secrets/);
  expect([wf.jobs.gate!.needs].flat()).toEqual(['certify']);
  expect(wf.jobs.gate!.if).toMatch(/always\(\)/);
  expect([wf.jobs.release!.needs].flat()).toEqual(['gate']);
});

test("matrix example: the gate step passes only when every target passed, and lists each target's gate", async ({ scratch }) => {
  const step = read<{ jobs: Record<string, Job> }>(MATRIX).jobs.gate!.steps.find((s) => s.name === 'every target passed')!;
  const cwd = scratch('work');
  for (const [target, run] of [
    ['eu', {}],
    ['us', { tests: passingRecords().filter((t) => !t.title.startsWith('AUTH-02')) }],
  ] as const) {
    const dir = path.join(cwd, 'conformance', `conformance-${target}`);
    writeRun(dir, run);
  }
  const failed = runStep(step, cwd, { CERTIFY_RESULT: 'failure' });
  expect(failed.code).toBe(1);
  expect(failed.log).toContain('not every target passed its certification (failure): nothing is released');
  expect(failed.summary).toContain(
    '## Certification of every target: failure\n- conformance-eu: pass (exit 0)\n- conformance-us: fail (exit 1)\n',
  );
  const passed = runStep(step, cwd, { CERTIFY_RESULT: 'success' });
  expect(passed.code, passed.log).toBe(0);
});
