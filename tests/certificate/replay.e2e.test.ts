/**
 * `replay <token>` writes into its own folder (`<reports>/replay/`), judges only the case it
 * replayed and says "still fails" or "now passes" against the target the token came from; the
 * last run's reports, certificate included, stay byte-identical. It refuses another target unless
 * the user names one.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test, expect } from './scratch.ts';
import { decideReplayTarget, tokenOrigin } from '../../cli/replay-origin.ts';
import { EXIT } from '../../core/exit-codes.ts';
import { SECRET_VARIABLES } from '../../core/secrets.ts';
import { SETTINGS } from '../../settings/index.ts';
import { runInBackground } from '../background.ts';

// A certify run of a whole server: at a lower priority than the tests that judge timing (tests/background.ts).
test.beforeAll(runInBackground);

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const BIN = path.join(ROOT, 'cli', 'bin.mjs');
const TOKEN = `gen1.${Buffer.from(JSON.stringify({ check: 'concurrency', seed: 1 })).toString('base64url')}`;

function cli(args: string[], env: Record<string, string>, cwd = ROOT): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) =>
        !SETTINGS.some((s) => s.name === k) && !(SECRET_VARIABLES as readonly string[]).includes(k) && !/^(TEST_|PW_|PLAYWRIGHT_)/.test(k),
    ),
  ) as Record<string, string>;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The last run's reports: a certificate about to be handed over, and the report that printed the token. */
function lastRun(dir: string, target: object): Record<string, Buffer> {
  fs.mkdirSync(dir, { recursive: true });
  const files: Record<string, string> = {
    'certificate.json': `${JSON.stringify({ format: 'inventory-conformance-certificate/1', results: { verdict: 'fail' } }, null, 2)}\n`,
    'certificate.html': '<!doctype html><p>the certificate</p>\n',
    'conformance.json': `${JSON.stringify({ verdict: 'fail', target, requirements: [{ id: 'GEN-07', status: 'fail', evidence: [{ errors: [`replay: CONFORMANCE_REPLAY=${TOKEN} npm run certify`] }] }] }, null, 2)}\n`,
    'junit.xml': '<testsuites tests="1" failures="1"></testsuites>\n',
  };
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  return Object.fromEntries(Object.keys(files).map((n) => [n, fs.readFileSync(path.join(dir, n))]));
}

const DECISIONS: {
  name: string;
  origin?: { kind: 'reference' | 'external'; baseUrl?: string };
  resolved: { kind: 'reference' | 'external'; baseUrl?: string };
  named: boolean;
  ok: boolean;
}[] = [
  {
    name: 'same external target',
    origin: { kind: 'external', baseUrl: 'https://a.example/v1' },
    resolved: { kind: 'external', baseUrl: 'https://a.example/v1/' },
    named: false,
    ok: true,
  },
  {
    name: 'the config points elsewhere, not named',
    origin: { kind: 'external', baseUrl: 'https://a.example/v1' },
    resolved: { kind: 'external', baseUrl: 'https://b.example/v1' },
    named: false,
    ok: false,
  },
  {
    name: 'the token came from the reference server, the config points at a deployment',
    origin: { kind: 'reference' },
    resolved: { kind: 'external', baseUrl: 'https://b.example/v1' },
    named: false,
    ok: false,
  },
  {
    name: 'another target, named by the user',
    origin: { kind: 'external', baseUrl: 'https://a.example/v1' },
    resolved: { kind: 'external', baseUrl: 'https://b.example/v1' },
    named: true,
    ok: true,
  },
  { name: 'origin unknown', resolved: { kind: 'reference' }, named: false, ok: true },
];
for (const d of DECISIONS) {
  test(`replay target: ${d.name} → ${d.ok ? 'replays' : 'refused'}`, () => {
    const r = decideReplayTarget(d.origin, d.resolved, d.named);
    expect(r.ok).toBe(d.ok);
    if (!r.ok) expect(r.error).toMatch(/^the token came from .*, but the settings point at https:\/\/b\.example\/v1; name the target/);
  });
}

test('replay target: the origin is the target of the report that holds the token', ({ scratch }) => {
  const dir = scratch('reports');
  lastRun(dir, { kind: 'external', baseUrl: 'https://a.example/v1', apiUrl: null });
  expect(tokenOrigin(path.join(dir, 'conformance.json'), TOKEN)).toEqual({ kind: 'external', baseUrl: 'https://a.example/v1' });
  expect(tokenOrigin(path.join(dir, 'conformance.json'), 'gen1.other')).toBeUndefined();
  expect(tokenOrigin(path.join(dir, 'missing.json'), TOKEN)).toBeUndefined();
});

test("replay: leaves the last run's certificate and reports byte-identical, writes its own folder and says how the case went against the token's target", async ({
  scratch,
}) => {
  test.setTimeout(240_000);
  const reports = scratch('reports');
  const before = lastRun(reports, { kind: 'reference', baseUrl: 'http://127.0.0.1:1/v1' });
  const r = await cli(['replay', TOKEN], { REPORTS_DIR: reports });
  const out = r.stdout + r.stderr;
  expect([EXIT.pass, EXIT.fail], out.slice(-3000)).toContain(r.code);
  expect(out).toContain('replay: against the bundled reference server, the target the token came from');
  expect(out).toMatch(/replay: (now passes|still fails) against the bundled reference server \(exit [01]\)/);
  for (const [name, bytes] of Object.entries(before))
    expect(fs.readFileSync(path.join(reports, name)).equals(bytes), `${name} is byte-identical`).toBe(true);
  const replayDir = path.join(reports, 'replay');
  expect(fs.existsSync(path.join(replayDir, 'certificate.json'))).toBe(false);
  const report = JSON.parse(fs.readFileSync(path.join(replayDir, 'conformance.json'), 'utf8')) as {
    requirements: { id: string; status: string; reason?: string }[];
  };
  // Only what the one case evidences: no "no test result for must-level requirement …".
  expect(report.requirements.length).toBeGreaterThan(0);
  expect(report.requirements.length).toBeLessThan(5);
  for (const q of report.requirements) expect(q.reason ?? '').not.toMatch(/^no test result/);
});

test("replay: refuses the config file's target when the token came from another, with exit 2, before anything runs", async ({
  scratch,
}) => {
  const reports = scratch('reports');
  const before = lastRun(reports, { kind: 'reference', baseUrl: 'http://127.0.0.1:1/v1' });
  const config = scratch('conformance.yaml');
  fs.writeFileSync(config, 'version: 1\ntargets:\n  staging:\n    baseUrl: https://staging.example.com/v1\n    apiKey: ${STAGING_KEY}\n');
  const key = 'sk_live_0123456789abcdef';
  const r = await cli(['replay', TOKEN, '--config', config, '--json'], { REPORTS_DIR: reports, STAGING_KEY: key });
  expect(r.code).toBe(EXIT.usage);
  expect(r.stderr).toContain('the token came from the bundled reference server, but the settings point at https://staging.example.com/v1');
  expect(JSON.parse(r.stdout)).toMatchObject({ verdict: 'usage', gate: { result: 'usage', exitCode: 2 } });
  expect(r.stdout + r.stderr).not.toContain(key);
  expect(fs.existsSync(path.join(reports, 'replay'))).toBe(false);
  for (const [name, bytes] of Object.entries(before)) expect(fs.readFileSync(path.join(reports, name)).equals(bytes)).toBe(true);
});
