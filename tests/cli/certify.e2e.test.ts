import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, expect } from '../test.ts';
import { EXIT } from '../../core/exit-codes.ts';
import { SECRET_VARIABLES } from '../../core/secrets.ts';
import { SETTINGS } from '../../settings/index.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const BIN = path.join(ROOT, 'cli', 'bin.mjs');

function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // A clean environment, as on a fresh machine: none of the run's variables set, output to a pipe (as in CI).
  const base = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !SETTINGS.some((s) => s.name === k) && !(SECRET_VARIABLES as readonly string[]).includes(k),
    ),
  ) as Record<string, string>;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

// The full run of `certify` with no target (--json, --baseline, --write-baseline, verify of its
// certificate) is one test with the other end-to-end checks of that run: tests/certify/certify.test.ts.

test('cli: usage errors exit 2 before anything runs, and never echo a key', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-usage-'));
  const reports = path.join(dir, 'reports');
  const key = 'sk_live_0123456789abcdef';
  const r = await cli(['certify', '--api-key', key, '--profile', 'everything'], { REPORTS_DIR: reports });
  expect(r.code).toBe(EXIT.usage);
  expect(r.stderr).toContain('keys are read only from the environment (API_KEY)');
  expect(r.stderr + r.stdout).not.toContain(key);
  expect(fs.existsSync(reports)).toBe(false);
  const literal = path.join(dir, 'conformance.yaml');
  fs.writeFileSync(literal, `version: 1\ntargets:\n  s:\n    baseUrl: https://s.example.com/v1\n    apiKey: ${key}\n`);
  const c = await cli(['certify', '--config', literal], { REPORTS_DIR: reports });
  expect(c.code).toBe(EXIT.usage);
  expect(c.stderr).toContain('targets.s.apiKey holds a literal key');
  expect(c.stderr + c.stdout).not.toContain(key);
  const replay = await cli(['replay', 'not-a-token'], { REPORTS_DIR: reports });
  expect(replay.code).toBe(EXIT.usage);
  expect(replay.stderr).toContain('CONFORMANCE_REPLAY: not a replay token');
  fs.rmSync(dir, { recursive: true, force: true });
});

test('cli: --dry-run shows each setting and where it came from: flag > environment > config file > default', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-dry-'));
  const key = 'sk_live_0123456789abcdef';
  const config = path.join(dir, 'conformance.yaml');
  fs.writeFileSync(
    config,
    'version: 1\ntargets:\n  staging:\n    baseUrl: https://staging.example.com/v1\n    apiKey: ${STAGING_API_KEY}\n    apiPlan: business\nprofile: readonly\nbudgets: { workers: 1, maxRetryAfterS: 60 }\n',
  );
  const r = await cli(['certify', '--config', config, '--plan', 'pro', '--dry-run'], {
    STAGING_API_KEY: key,
    MAX_RETRY_AFTER_S: '30',
    WORKERS: '',
  });
  expect(r.code, r.stderr).toBe(EXIT.pass);
  const line = (name: string) =>
    r.stdout
      .split('\n')
      .find((l) => l.trim().startsWith(`${name} `))
      ?.trim()
      .replace(/\s+/g, ' ');
  expect(line('API_PLAN')).toBe('API_PLAN pro (flag)');
  expect(line('MAX_RETRY_AFTER_S')).toBe('MAX_RETRY_AFTER_S 30 (environment)');
  expect(line('WORKERS')).toBe('WORKERS 1 (config file)'); // an empty variable counts as unset
  expect(line('CONFORMANCE_PROFILE')).toBe('CONFORMANCE_PROFILE readonly (config file)');
  expect(line('API_KEY')).toBe('API_KEY given (config file)');
  expect(line('PHASE_TIMEOUT_S')).toBe('PHASE_TIMEOUT_S 900 (default)');
  expect(r.stdout + r.stderr).not.toContain(key);
  fs.rmSync(dir, { recursive: true, force: true });
});
