/**
 * The load project (`suites/load/*.spec.ts`, root `playwright.config.ts`, project `load`) as a
 * user runs it: passes the reference server and writes `${REPORTS_DIR}/load/<check>.json` (what
 * each check spent, no key); fails naming the missing key against an external target; in `readonly` runs nothing and
 * says it is not certified.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { test, expect } from '../test.ts';
import { startReferenceTarget } from '../../certify/reference-target.ts';
import { fakeApi, inventoryHandler } from './helpers.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = createRequire(import.meta.url).resolve('@playwright/test/cli');

interface Result {
  title: string;
  status: string;
  errors: string[];
  annotations: Array<{ type: string; description?: string }>;
}

/** Runs the load steps (capacity in the `load` and `generated` projects, overload in `rate-limit`) with `env` (added to a clean copy of ours) and returns its tests. */
async function runLoadProject(env: Record<string, string>, dir: string): Promise<{ code: number; tests: Result[]; output: string }> {
  const jsonFile = path.join(dir, 'results.json');
  const base = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) =>
        !/^(BASE_URL|API_URL|API_KEY|API_PLAN|RATE_LIMIT_KEY|RATE_LIMIT_PLAN|LOAD_KEY|CONFORMANCE_PROFILE|CONFORMANCE_PACER_URL|INSECURE_TLS|REPORTS_DIR|LOAD_.*|MAX_RETRY_AFTER_S|TEST_.*|PW_.*|PLAYWRIGHT_.*)$/.test(
          k,
        ),
    ),
  );
  const child = spawn(
    process.execPath,
    [
      CLI,
      'test',
      '--config',
      path.join(ROOT, 'playwright.config.ts'),
      '--project=load',
      '--project=rate-limit',
      '--project=generated',
      'suites/load/',
      '--reporter=json',
      `--output=${path.join(dir, 'out')}`,
    ],
    {
      cwd: ROOT,
      env: { ...base, REPORTS_DIR: dir, PLAYWRIGHT_JSON_OUTPUT_NAME: jsonFile, FORCE_COLOR: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (c) => (output += c));
  child.stderr.on('data', (c) => (output += c));
  const code = await new Promise<number>((resolve) => child.on('exit', (c) => resolve(c ?? 1)));
  const report = JSON.parse(fs.readFileSync(jsonFile, 'utf8'));
  const tests: Result[] = [];
  const walk = (suite: any) => {
    for (const s of suite.suites ?? []) walk(s);
    for (const spec of suite.specs ?? []) {
      for (const t of spec.tests ?? []) {
        const last = t.results.at(-1) ?? {};
        tests.push({
          title: spec.title,
          status: t.status === 'skipped' ? 'skipped' : (last.status ?? 'unknown'),
          errors: (last.errors ?? []).map((e: any) => String(e.message ?? '')),
          annotations: [...(t.annotations ?? []), ...(last.annotations ?? [])],
        });
      }
    }
  };
  for (const s of report.suites ?? []) walk(s);
  return { code, tests, output };
}

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'load-specs-'));
}

test.describe.configure({ timeout: 180_000 });

test('the load project passes the reference server and records each check, what it spent, and no key', async () => {
  const target = await startReferenceTarget({ minuteWindowMs: 3000, banMs: 3000 });
  const dir = tempDir();
  try {
    const { code, tests, output } = await runLoadProject({ ...target.env, LOAD_DURATION_S: '1', LOAD_BURST_WINDOWS: '2' }, dir);
    expect(code, output).toBe(0);
    expect(tests.map((t) => t.title.slice(0, 7)).sort()).toEqual([
      'LOAD-01',
      'LOAD-01',
      'LOAD-02',
      'LOAD-02',
      'LOAD-02',
      'LOAD-03',
      'LOAD-04',
      'LOAD-04',
    ]);
    expect(
      tests.every((t) => t.status === 'passed'),
      JSON.stringify(tests.map((t) => [t.title, t.status, t.errors])),
    ).toBe(true);
    const files = fs
      .readdirSync(path.join(dir, 'load'))
      .filter((f) => f.endsWith('.json'))
      .sort();
    expect(files).toEqual(['capacity-mix.json', 'capacity.json', 'overload.json']);
    const overload = JSON.parse(fs.readFileSync(path.join(dir, 'load', 'overload.json'), 'utf8'));
    expect(overload.status).toBe('pass');
    expect(overload.figures.bursts).toHaveLength(2);
    expect(overload.figures.windows.every((w: { successes: number }) => w.successes <= 60)).toBe(true);
    expect(overload.spent.keys[0]).toEqual({
      key: '<RATE_LIMIT_KEY>',
      requests: overload.figures.requests.probes + overload.figures.requests.burst,
    });
    const capacity = JSON.parse(fs.readFileSync(path.join(dir, 'load', 'capacity.json'), 'utf8'));
    expect(capacity.spent.keys).toEqual([{ key: '<LOAD_KEY>', requests: capacity.requests }]);
    expect(capacity.figures.load.model).toBe('open');
    // Each check runs once for the tests that share it (the oncePerRun fixture).
    const evidence = tests.flatMap((t) => t.annotations.filter((a) => a.type === 'evidence').map((a) => a.description ?? ''));
    const overloadTests = tests.filter((t) => /^LOAD-0[23]/.test(t.title));
    // Every test that shares the check shows the same first burst (one run), of at most Limit
    // (60) requests: Remaining + 1 from the probe's answer, whatever requests a busy runner's
    // slower probes left counted in that window.
    const bursts = overloadTests.map((t) =>
      t.annotations
        .map((a) => /^window 1: burst of Remaining \+ 1 = (\d+) × GET \/v1\/inventory/.exec(a.description ?? '')?.[1])
        .find(Boolean),
    );
    expect(new Set(bursts).size, JSON.stringify(bursts)).toBe(1);
    expect(Number(bursts[0]), JSON.stringify(bursts)).toBeGreaterThan(1);
    expect(Number(bursts[0]), JSON.stringify(bursts)).toBeLessThanOrEqual(60);
    // Only the test that ran a check reports its requests (certify sums them): one per check.
    expect(tests.filter((t) => t.annotations.some((a) => a.type === 'requests')).length).toBe(3);
    // One run: every test shows the same probe (its Date and Reset headers included).
    expect(new Set(evidence.filter((e) => e.startsWith('window 1, probe:'))).size).toBe(1);
    expect(evidence.some((e) => /req\/s; p50 .* p99 /.test(e))).toBe(true);
    const written = [
      ...files.map((f) => fs.readFileSync(path.join(dir, 'load', f), 'utf8')),
      fs.readFileSync(path.join(dir, 'results.json'), 'utf8'),
      output,
    ].join('\n');
    for (const key of Object.values(target.server.keys)) expect(written).not.toContain(key);
  } finally {
    await target.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('against an external target without LOAD_KEY and RATE_LIMIT_KEY every load check is skipped as not certified, naming the missing key, and nothing is sent', async () => {
  const api = await fakeApi(inventoryHandler());
  const dir = tempDir();
  try {
    const { code, tests } = await runLoadProject({ BASE_URL: api.baseUrl, API_KEY: 'external-key-123456' }, dir);
    expect(code).toBe(0);
    expect(tests).toHaveLength(8);
    for (const t of tests) {
      expect(t.status, t.title).toBe('skipped');
      const variable = /^LOAD-0[14]/.test(t.title) ? 'LOAD_KEY' : 'RATE_LIMIT_KEY';
      expect(t.annotations.find((a) => a.type === 'not-certified')?.description).toContain(`${variable} not given`);
    }
    expect(api.counts).toEqual({});
  } finally {
    await api.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('in the readonly profile no load runs and each check says it is not certified', async () => {
  const api = await fakeApi(inventoryHandler());
  const dir = tempDir();
  try {
    const { code, tests } = await runLoadProject(
      {
        BASE_URL: api.baseUrl,
        API_KEY: 'external-key-123456',
        LOAD_KEY: 'load-key-123456',
        RATE_LIMIT_KEY: 'rl-key-123456',
        CONFORMANCE_PROFILE: 'readonly',
      },
      dir,
    );
    expect(code).toBe(0);
    expect(tests).toHaveLength(8);
    for (const t of tests) {
      expect(t.status, t.title).toBe('skipped');
      expect(t.annotations.find((a) => a.type === 'not-certified')?.description).toMatch(/CONFORMANCE_PROFILE=readonly leaves out .*@load/);
    }
    expect(api.counts).toEqual({});
    expect(fs.existsSync(path.join(dir, 'load'))).toBe(false);
  } finally {
    await api.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
