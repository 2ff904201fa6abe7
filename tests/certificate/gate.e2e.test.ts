/**
 * End to end, as a release manager runs it: `inventory-conformance certify` of one server twice,
 * first as it is, then with two deviations added (by the fault proxy) and a baseline listing them.
 * The second run's gate is the same in all six places: conformance.json, conformance.md,
 * junit.xml, certificate.json, `--json` stdout and the exit code; every file validates against its
 * schema; `diff` of the two certificates exits 1 naming the requirements that regressed.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test, expect } from './scratch.ts';
import { startReferenceTarget } from '../../certify/reference-target.ts';
import { faultByName } from '../../faults/catalogue/index.ts';
import { startFaultProxy, throughProxy, type FaultHooks } from '../../faults/proxy.ts';
import { EXIT } from '../../core/exit-codes.ts';
import { SECRET_VARIABLES } from '../../core/secrets.ts';
import { SETTINGS } from '../../settings/index.ts';
import { certificateProblems, conformanceProblems } from './report-schemas.ts';
import { runInBackground } from '../background.ts';

// A certify run of a whole server: at a lower priority than the tests that judge timing (tests/background.ts).
test.beforeAll(runInBackground);

test.describe.configure({ mode: 'default' });

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const BIN = path.join(ROOT, 'cli', 'bin.mjs');
/** Two deviations of the Versioning section, each caught by its own requirement. */
const DEVIATIONS = ['deprecation-malformed', 'deprecation-sunset-iso-date'];

function cli(args: string[], env: Record<string, string | undefined>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) =>
        !SETTINGS.some((s) => s.name === k) && !(SECRET_VARIABLES as readonly string[]).includes(k) && !/^(TEST_|PW_|PLAYWRIGHT_)/.test(k),
    ),
  );
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: { ...base, ...env } as Record<string, string>,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The deviations' hooks, applied only while `state.on`. */
function switchable(state: { on: boolean }): FaultHooks {
  const hooks = DEVIATIONS.map((n) => faultByName(n).proxy!() as FaultHooks);
  return {
    async response(res, req, ctx) {
      let out = res;
      if (state.on) for (const h of hooks) if (h.response) out = await h.response(out, req, ctx);
      return out;
    },
  };
}

const read = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'));

test('gate e2e: known deviations accepted by a baseline give the same gate in all six places; diff names the regressions', async ({
  scratch,
}) => {
  test.setTimeout(600_000);
  const state = { on: false };
  const target = await startReferenceTarget();
  const proxy = await startFaultProxy({
    upstream: target.server.baseUrl.replace(/\/v1\/?$/, ''),
    fault: switchable(state),
    env: target.env,
  });
  try {
    const env = { ...throughProxy(target.env, proxy.url), CONFORMANCE_PROFILE: 'readonly' };
    const before = scratch('before');
    const first = await cli(['certify', '--json'], { ...env, REPORTS_DIR: before });
    expect(first.code, first.stderr.slice(-3000)).toBe(EXIT.pass);

    state.on = true;
    const after = scratch('after');
    const baseline = scratch('baseline.yaml');
    fs.writeFileSync(baseline, 'knownFailures:\n  - { id: VER-04, reason: fixed in 2.5 }\n  - { id: VER-05, reason: fixed in 2.5 }\n');
    const run = await cli(['certify', '--json', '--baseline', baseline, '--no-regression-from', path.join(before, 'certificate.json')], {
      ...env,
      REPORTS_DIR: after,
    });
    const out = run.stderr;

    // 1. the exit code; 2. --json stdout
    expect(run.code, out.slice(-3000)).toBe(EXIT.pass);
    const doc = JSON.parse(run.stdout);
    expect(doc.gate).toMatchObject({ result: 'pass', exitCode: 0, newFailures: [] });
    expect(doc.gate.knownFailures.map((k: { id: string }) => k.id).sort()).toEqual(['VER-04', 'VER-05']);
    // 3. conformance.json
    const json = read(path.join(after, 'conformance.json'));
    expect(conformanceProblems(json)).toEqual([]);
    expect(json.verdict).toBe('pass');
    expect(json.gate).toEqual(doc.gate);
    expect(
      json.requirements
        .filter((r: { status: string }) => r.status === 'fail')
        .map((r: { id: string }) => r.id)
        .sort(),
    ).toEqual(['VER-04', 'VER-05']);
    // 4. certificate.json
    const cert = read(path.join(after, 'certificate.json'));
    expect(certificateProblems(cert)).toEqual([]);
    expect(cert.results.gate).toEqual(doc.gate);
    expect(cert.results.verdict).toBe('pass');
    expect(cert.results.comparison.regressed.map((c: { id: string }) => c.id).sort()).toEqual(['VER-04', 'VER-05']);
    expect(fs.readFileSync(path.join(after, 'certificate.html'), 'utf8')).toContain('<section id="compared-with">');
    // 5. conformance.md
    const md = fs.readFileSync(path.join(after, 'conformance.md'), 'utf8');
    expect(md).toContain('**Gate: ✅ PASS (with known failures)** — exit code 0');
    expect(md).toMatch(
      /Known failures \(they do not fail the gate\): \*\*VER-0[45]\*\* \(fixed in 2\.5\), \*\*VER-0[45]\*\* \(fixed in 2\.5\)/,
    );
    // 6. junit.xml: the known failures are skipped with their reason; the gate's case passes.
    const junit = fs.readFileSync(path.join(after, 'junit.xml'), 'utf8');
    expect(junit).not.toMatch(/<failure\b/);
    expect(junit).toMatch(/<skipped message="VER-04: known failure \(baseline\): fixed in 2\.5"\/>/);
    expect(junit).toMatch(/<skipped message="VER-05: known failure \(baseline\): fixed in 2\.5"\/>/);
    expect(junit).toContain('<testcase name="gate: PASS (with 2 known failure(s): ');
    expect(out).toMatch(/gate: PASS — known failures accepted by the baseline: VER-0[45], VER-0[45]/);

    // The first run's files validate too.
    expect(conformanceProblems(read(path.join(before, 'conformance.json')))).toEqual([]);
    expect(certificateProblems(read(path.join(before, 'certificate.json')))).toEqual([]);

    // diff of the two certificates: exit 1 naming the requirements that regressed.
    const diff = await cli(['diff', path.join(before, 'certificate.json'), path.join(after, 'certificate.json')], {});
    expect(diff.code, diff.stdout + diff.stderr).toBe(EXIT.fail);
    expect(diff.stdout).toMatch(/Regressed \(2\):\n {2}VER-04 \(must\) pass → fail/);
    expect(diff.stdout).toContain('diff: REGRESSED — must-level: VER-04, VER-05 (exit 1)');
  } finally {
    await proxy.close();
    await target.close();
  }
});

test('gate e2e: --json prints an error document on exit 2 and exit 3, never nothing', async ({ scratch }) => {
  const key = 'sk_live_0123456789abcdef';
  const down = await cli(['certify', '--json', '--base-url', 'http://127.0.0.1:1/v1'], { API_KEY: key, REPORTS_DIR: scratch('reports') });
  expect(down.code, down.stderr).toBe(EXIT.unreachable);
  const doc = JSON.parse(down.stdout);
  expect(doc).toMatchObject({
    format: 'inventory-conformance-error/1',
    verdict: 'unreachable',
    gate: { result: 'unreachable', exitCode: 3 },
  });
  expect(doc.gate.reasons.join(' ')).toMatch(/preflight failed/);
  const usage = await cli(['certify', '--json', '--no-regression-from', scratch('missing.json')], { REPORTS_DIR: scratch('reports2') });
  expect(usage.code, usage.stderr).toBe(EXIT.usage);
  expect(JSON.parse(usage.stdout)).toMatchObject({
    verdict: 'usage',
    gate: {
      result: 'usage',
      exitCode: 2,
      reasons: [expect.stringMatching(/^CONFORMANCE_NO_REGRESSION_FROM \(.*missing\.json\): no such file$/)],
    },
  });
  expect(down.stdout + down.stderr + usage.stdout + usage.stderr).not.toContain(key);
});
