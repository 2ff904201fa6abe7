/**
 * The merge loaded ahead of time (`certify/merge-standby.ts`): told, it writes what
 * `playwright merge-reports` writes; not told, it ends with its input or when cancelled; stopped
 * by a signal before it merged, the merge runs anew.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test as scratchTest, expect } from '../certificate/scratch.ts';
import { standbyMerge } from '../../certify/merge-standby.ts';
import { PLAYWRIGHT_CLI, REPO_ROOT } from '../../certify/phases.ts';
import { playwrightEnv } from '../../core/playwright-env.ts';

const require = createRequire(import.meta.url);
const identity = (s: string) => s;
const REPORTS = ['junit.xml', 'results.json', path.join('html', 'index.html')];

/** A blob report of one passing test, written by a real Playwright run into `dir/blob`. */
function oneBlob(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const playwright = require.resolve('@playwright/test');
  fs.writeFileSync(path.join(dir, 'one.spec.cjs'), `const { test } = require(${JSON.stringify(playwright)});\ntest('one', () => {});\n`);
  const config = path.join(dir, 'pw.config.mjs');
  fs.writeFileSync(config, `export default { testDir: ${JSON.stringify(dir)}, testMatch: '*.spec.cjs', reporter: 'blob' };\n`);
  const blobDir = path.join(dir, 'blob');
  const ran = spawnSync(process.execPath, [PLAYWRIGHT_CLI, 'test', '--config', config], {
    cwd: dir,
    env: playwrightEnv(process.env, { PLAYWRIGHT_BLOB_OUTPUT_DIR: blobDir }),
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(ran.status, `${ran.stdout}${ran.stderr}`).toBe(0);
  return blobDir;
}

/** One blob for the file's tests, written once (its tests run in order, in one worker). */
const test = scratchTest.extend<object, { blobDir: string }>({
  blobDir: [
    async ({}, use) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'merge-standby-'));
      try {
        await use(oneBlob(dir));
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
    { scope: 'worker' },
  ],
});
test.describe.configure({ mode: 'default' });

const gone = async (pid: number | undefined, withinMs: number) => {
  const until = Date.now() + withinMs;
  while (Date.now() < until) {
    try {
      process.kill(pid!, 0);
    } catch {
      return true;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
};

test('told to merge, the standby writes the HTML report, junit.xml and results.json of the blobs, and ends', async ({
  scratch,
  blobDir,
}) => {
  const reports = scratch('reports');
  const standby = standbyMerge(blobDir, reports, { ...process.env }, identity);
  const merged = await standby.merge();
  expect(merged.ok, merged.output).toBe(true);
  for (const f of REPORTS) expect(fs.existsSync(path.join(reports, f)), `${f} is written`).toBe(true);
  expect(JSON.parse(fs.readFileSync(path.join(reports, 'results.json'), 'utf8')).stats.expected).toBe(1);
  expect(await gone(standby.pid, 5_000)).toBe(true);
});

test('a standby never told ends when its input closes (certify ended, however), or at once when cancelled; a cancelled merge still merges, anew', async ({
  scratch,
  blobDir,
}) => {
  // certify ends without a word to it: a process that starts a standby and exits.
  const script = scratch('parent.mts');
  fs.writeFileSync(
    script,
    `import { standbyMerge } from ${JSON.stringify(path.join(REPO_ROOT, 'certify', 'merge-standby.ts'))};\n` +
      `const s = standbyMerge('/nonexistent', '/nonexistent', {}, (x) => x);\nprocess.stdout.write(String(s.pid), () => process.exit(0));\n`,
  );
  const parent = spawnSync(process.execPath, ['--import', 'tsx', script], {
    cwd: REPO_ROOT,
    env: playwrightEnv(process.env),
    encoding: 'utf8',
    timeout: 30_000,
  });
  const orphan = Number(parent.stdout.trim());
  expect(orphan, parent.stderr).toBeGreaterThan(0);
  expect(await gone(orphan, 10_000), 'the standby ends once its parent is gone').toBe(true);

  const reports = scratch('reports');
  const standby = standbyMerge(blobDir, reports, { ...process.env }, identity);
  standby.cancel();
  expect(await gone(standby.pid, 5_000)).toBe(true);
  const merged = await standby.merge();
  expect(merged.ok, merged.output).toBe(true);
  for (const f of REPORTS) expect(fs.existsSync(path.join(reports, f)), `${f} is written`).toBe(true);
});

for (const moment of ['before the merge is asked for', 'as the merge is asked for'] as const) {
  test(`a Ctrl-C that reaches the standby ${moment}: the merge runs anew and writes the reports`, async ({ scratch, blobDir }) => {
    const reports = scratch('reports');
    const standby = standbyMerge(blobDir, reports, { ...process.env }, identity);
    // Loaded, waiting for its line.
    await new Promise((r) => setTimeout(r, 1500));
    let merging: ReturnType<typeof standby.merge> | undefined;
    if (moment === 'as the merge is asked for') merging = standby.merge();
    process.kill(standby.pid!, 'SIGINT');
    expect(await gone(standby.pid, 5_000)).toBe(true);
    const merged = await (merging ?? standby.merge());
    expect(merged.ok, merged.output).toBe(true);
    for (const f of REPORTS) expect(fs.existsSync(path.join(reports, f)), `${f} is written`).toBe(true);
  });
}
