/**
 * What a user does with the package, outside this repository: pack the tarball, install it into an
 * empty project without development dependencies, start `npx inventory-conformance serve`, certify
 * it from that project with the keys it printed, and verify the certificate. No TypeScript
 * toolchain is installed there: the package runs what was compiled at pack time.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, expect } from '../test.ts';
import { EXIT } from '../../core/exit-codes.ts';
import { SECRET_VARIABLES } from '../../core/secrets.ts';
import { SETTINGS } from '../../settings/index.ts';
import { runInBackground } from '../background.ts';

// A certify run of a whole server: at a lower priority than the tests that judge timing (tests/background.ts).
test.beforeAll(runInBackground);

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const NPX = process.platform === 'win32' ? 'npx.cmd' : 'npx';

/** The environment of a fresh shell: none of the run's variables, no key, output to a pipe. */
function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const names = new Set<string>([...SETTINGS.map((s) => s.name), ...SECRET_VARIABLES]);
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([k, v]) => v !== undefined && !names.has(k) && !k.startsWith('npm_')),
  ) as Record<string, string>;
  return { ...base, FORCE_COLOR: '0', ...extra };
}

interface Ran {
  code: number | null;
  stdout: string;
  /** stdout and stderr as they came. */
  output: string;
}

/** Runs a command to its end (or its deadline: then it is killed and the test fails naming it). */
function run(command: string, args: string[], cwd: string, env: Record<string, string>, timeoutMs: number): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      output += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const timer = setTimeout(() => {
      process.kill(-child.pid!, 'SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} did not end within ${timeoutMs / 1000} s:\n${output.slice(-3000)}`));
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`${command} could not be started (${error.message}): it is needed to install the package`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, output });
    });
  });
}

interface Served {
  baseUrl: string;
  apiUrl: string;
  keys: Record<string, string>;
  stop: () => void;
}

/** `npx inventory-conformance serve` in its own process group; resolves once it printed its addresses and keys. */
function serve(cwd: string, env: Record<string, string>, timeoutMs = 30_000): Promise<Served> {
  const child = spawn(
    NPX,
    ['--no', 'inventory-conformance', 'serve', '--port', '0', '--rate-window-minute-ms', '5000', '--ban-ms', '2000'],
    { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  const stop = () => {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      // already gone
    }
  };
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`npx inventory-conformance serve printed no address and keys within ${timeoutMs / 1000} s:\n${output}`));
    }, timeoutMs);
    const onData = (c: Buffer) => {
      output += c.toString();
      const baseUrl = /^inventory: (\S+)$/m.exec(output)?.[1];
      const apiUrl = /^messages: (\S+)$/m.exec(output)?.[1];
      const keys = Object.fromEntries([...output.matchAll(/^key (\w+): (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
      if (baseUrl && apiUrl && keys.load) {
        clearTimeout(timer);
        resolve({ baseUrl, apiUrl, keys, stop });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('close', (code) => {
      clearTimeout(timer);
      reject(new Error(`npx inventory-conformance serve ended (exit ${code}) before it served:\n${output}`));
    });
  });
}

test('package: the packed tarball installed into an empty project with --omit=dev serves, certifies with exit 0 into that project and verifies its certificate', async ({}, testInfo) => {
  test.setTimeout(15 * 60_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'package-install-'));
  const project = path.join(dir, 'project');
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(project, 'package.json'), '{ "name": "a-service", "private": true }\n');
  const env = cleanEnv();
  let served: Served | undefined;
  try {
    // npm pack compiles the harness (prepack) and lists what the tarball holds.
    const packed = await run(NPM, ['pack', '--pack-destination', dir, '--json'], ROOT, env, 5 * 60_000);
    expect(packed.code, packed.output.slice(-3000)).toBe(0);
    const listing = JSON.parse(packed.stdout.slice(packed.stdout.lastIndexOf('\n[\n') + 1)) as {
      filename: string;
      files: { path: string }[];
    }[];
    const files = listing[0]!.files.map((f) => f.path);
    for (const needed of [
      'cli/bin.mjs',
      'dist/cli/main.js',
      'dist/playwright.config.js',
      'dist/suites/requirements.yaml',
      'dist/schemas/openapi.yaml',
      'dist/spec/inventory-service.md',
      'dist/reference-server/main.js',
      'dist/package.json',
    ]) {
      expect(files, `the tarball holds ${needed}`).toContain(needed);
    }
    expect(
      files.filter((f) => /^(dist\/)?(tests|faults|bench)\//.test(f) || f.endsWith('.ts')),
      'the tarball holds no test, fault matrix or TypeScript source',
    ).toEqual([]);

    const tarball = path.join(dir, listing[0]!.filename);
    const installed = await run(
      NPM,
      ['install', tarball, '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund'],
      project,
      env,
      5 * 60_000,
    );
    expect(installed.code, installed.output.slice(-3000)).toBe(0);
    expect(installed.output).not.toContain('EBADENGINE');
    for (const devOnly of ['typescript', 'tsx'])
      expect(fs.existsSync(path.join(project, 'node_modules', devOnly)), `${devOnly} is not installed with the package`).toBe(false);

    served = await serve(project, env);
    const certifyEnv = cleanEnv({
      BASE_URL: served.baseUrl,
      API_URL: served.apiUrl,
      API_KEY: served.keys.business!,
      API_PLAN: 'business',
      RATE_LIMIT_KEY: served.keys.free!,
      RATE_LIMIT_PLAN: 'free',
      LOAD_KEY: served.keys.load!,
      // Inside `npm test` the run shares 2 cores with others: a saturated machine's p99 says nothing about the package.
      LOAD_DURATION_S: '2',
      LOAD_P99_MS: '5000',
      // The package's own server: every generated message case is sent, so nothing is left not certified.
      MAX_MESSAGES: '1000',
    });
    const certified = await run(NPX, ['--no', 'inventory-conformance', 'certify'], project, certifyEnv, 10 * 60_000);
    await testInfo.attach('certify output', { body: certified.output, contentType: 'text/plain' });
    expect(certified.code, certified.output.slice(-3000)).toBe(EXIT.pass);
    expect(certified.output).toContain('gate: PASS (exit 0)');
    for (const key of Object.values(served.keys)) expect(certified.output.includes(key), 'no key in the output').toBe(false);

    const certificate = path.join(project, 'reports', 'certificate.json');
    expect(fs.existsSync(certificate), 'reports/certificate.json in the project where certify ran').toBe(true);
    const harness = path.join(project, 'node_modules', 'inventory-conformance');
    expect(
      fs.existsSync(path.join(harness, 'reports')) || fs.existsSync(path.join(harness, 'dist', 'reports')),
      'no report inside node_modules',
    ).toBe(false);

    const verified = await run(NPX, ['--no', 'inventory-conformance', 'verify', 'reports/certificate.json'], project, env, 60_000);
    expect(verified.code, verified.output).toBe(EXIT.pass);
    expect(verified.output).toContain('verify: reports/certificate.json is intact');

    // The package names the suite by the sources it was compiled from: a clone of the same sources verifies its certificate.
    const byClone = await run(process.execPath, [path.join(ROOT, 'cli', 'bin.mjs'), 'verify', certificate], ROOT, env, 60_000);
    expect(byClone.code, byClone.output).toBe(EXIT.pass);
    expect(byClone.output).toMatch(/✓ suite: /);

    // replay loads its machinery from the compiled tree too, and refuses a token that is none.
    const replayed = await run(NPX, ['--no', 'inventory-conformance', 'replay', 'not-a-token'], project, env, 60_000);
    expect(replayed.code, replayed.output).toBe(EXIT.usage);
    expect(replayed.output).toContain('usage error');
  } finally {
    served?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
