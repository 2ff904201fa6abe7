/**
 * A generated failure is reported shrunk with a replay token; `CONFORMANCE_REPLAY=<token>` runs
 * just that case: against the faulty server it fails again with the same request, against the
 * fixed server it passes. The generated phase runs as certify runs it (root Playwright config,
 * project `generated`), in front of the reference server with a fault of the catalogue.
 */
import { test, expect } from '../test.ts';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { startReferenceTarget } from '../../certify/reference-target.ts';
import { phaseOutputDir } from '../../core/paths.ts';
import { startFaultProxy, throughProxy } from '../../faults/proxy.ts';
import { faultByName } from '../../faults/catalogue/index.ts';
import type { OperationRun } from '../../suites/generated/run-cases.ts';
import { runInBackground } from '../background.ts';

// A certify run of a whole server: at a lower priority than the tests that judge timing (tests/background.ts).
test.beforeAll(runInBackground);

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const CLI = createRequire(import.meta.url).resolve('@playwright/test/cli');

function phase(env: Record<string, string | undefined>, reportsDir: string): Promise<{ code: number | null; output: string }> {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(TEST_|PW_|PLAYWRIGHT_|CONFORMANCE_|GENERATED_)/.test(k)),
  );
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        CLI,
        'test',
        '--config',
        path.join(ROOT, 'playwright.config.ts'),
        '--project=generated',
        '--workers=1',
        '--reporter=line',
        '-g',
        'updateInventory',
      ],
      {
        cwd: ROOT,
        env: { ...clean, ...env, REPORTS_DIR: reportsDir, FORCE_COLOR: '0' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.on('close', (code) => resolve({ code, output }));
  });
}

const runOf = (dir: string) =>
  JSON.parse(fs.readFileSync(path.join(phaseOutputDir(dir, 'generated'), '.generated', 'updateInventory-1.json'), 'utf8')) as OperationRun;

test('a saved failure replays against the faulty server and passes against the fixed one', async () => {
  test.setTimeout(240_000);
  const target = await startReferenceTarget();
  const proxy = await startFaultProxy({
    upstream: target.server.baseUrl.replace(/\/v1$/, ''),
    fault: faultByName('gen-500-number-representation').proxy!(),
    env: target.env,
  });
  const dirs = [1, 2, 3].map(() => fs.mkdtempSync(path.join(os.tmpdir(), 'gen-replay-')));
  try {
    const faulty = throughProxy(target.env, proxy.url);
    const first = await phase(faulty, dirs[0]!);
    expect(first.code, first.output.slice(-2000)).not.toBe(0);
    const failure = runOf(dirs[0]!).classes.find((c) => c.failure?.findings.some((f) => f.id === 'GEN-01'))?.failure;
    expect(failure, 'a GEN-01 failure with a replay token').toBeDefined();
    expect(first.output).toContain(`CONFORMANCE_REPLAY=${failure!.token}`);
    expect(failure!.curl).toContain('$API_KEY');
    for (const key of Object.values(target.server.keys)) expect(first.output).not.toContain(key);

    const again = await phase({ ...faulty, CONFORMANCE_REPLAY: failure!.token }, dirs[1]!);
    expect(again.code, again.output.slice(-2000)).not.toBe(0);
    const replayed = runOf(dirs[1]!);
    expect(replayed.classes).toHaveLength(1);
    expect(replayed.classes[0]!.failure?.request).toBe(failure!.request);

    const fixed = await phase({ ...target.env, CONFORMANCE_REPLAY: failure!.token }, dirs[2]!);
    expect(fixed.code, fixed.output.slice(-2000)).toBe(0);
    expect(runOf(dirs[2]!).classes.map((c) => [c.name, c.sent, !!c.failure])).toEqual([[replayed.classes[0]!.name, 1, false]]);
  } finally {
    await proxy.close();
    await target.close();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  }
});
