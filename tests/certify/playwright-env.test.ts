import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, expect } from '../test.ts';
import { playwrightEnv } from '../../core/playwright-env.ts';
import { listSuites } from '../../core/ledger.ts';
import { runCertify } from '../../certify/run.ts';
import { inheritedEnv } from '../../faults/harness.ts';
import { testsOption } from '../../faults/matrix.ts';

/**
 * Variables a user's pipeline may set for its own Playwright projects, each pointing into the
 * user's folder. Playwright lets them win over a config's reporter options; the tool's runs must
 * write nothing there and keep every report where the run names it.
 */
function usersPlaywrightSettings(userDir: string): Record<string, string> {
  const reporter = path.join(userDir, 'users-reporter.cjs');
  fs.writeFileSync(
    reporter,
    `module.exports = class { onBegin() { require('node:fs').writeFileSync(${JSON.stringify(path.join(userDir, 'reporter-ran'))}, 'x'); } };\n`,
  );
  return {
    PLAYWRIGHT_HTML_OUTPUT_DIR: path.join(userDir, 'html'),
    PLAYWRIGHT_HTML_REPORT: path.join(userDir, 'html-legacy'),
    PLAYWRIGHT_JUNIT_OUTPUT_FILE: path.join(userDir, 'junit.xml'),
    PLAYWRIGHT_JSON_OUTPUT_FILE: path.join(userDir, 'results.json'),
    PLAYWRIGHT_JSON_OUTPUT_DIR: userDir,
    PLAYWRIGHT_JSON_OUTPUT_NAME: 'named.json',
    PLAYWRIGHT_BLOB_OUTPUT_DIR: path.join(userDir, 'blob'),
    PW_TEST_REPORTER: reporter,
    PLAYWRIGHT_FORCE_TTY: '1',
  };
}

test('a Playwright run of the tool takes no setting from Playwright variables of the caller; the rest of the environment and its own win', () => {
  const env = playwrightEnv(
    {
      PATH: '/usr/bin',
      BASE_URL: 'https://staging.example.com/v1',
      PLAYWRIGHT_HTML_OUTPUT_DIR: '/home/user/html',
      PW_TEST_REPORTER: 'json',
      PWTEST_DEBUG: '1',
      TEST_WORKER_INDEX: '3',
      TEST_PARALLEL_INDEX: '1',
      PLAYWRIGHT_JSON_OUTPUT_FILE: '/home/user/results.json',
      CERTIFY_REPORTS_DIR: '/tmp/r',
    },
    { PLAYWRIGHT_JSON_OUTPUT_FILE: '/tmp/r/list.json', FORCE_COLOR: '0' },
    '.ts',
    false,
  );
  expect(env).toEqual({
    PATH: '/usr/bin',
    BASE_URL: 'https://staging.example.com/v1',
    CERTIFY_REPORTS_DIR: '/tmp/r',
    PLAYWRIGHT_JSON_OUTPUT_FILE: '/tmp/r/list.json',
    FORCE_COLOR: '0',
  });
});

test('the compiled tree (the installed package), and the sources on a Node that strips types, run their Playwright processes without the TypeScript loader of Playwright; the sources on Node 20 keep it, whatever the caller set', () => {
  const caller = { PATH: '/usr/bin', PW_DISABLE_TS_ESM: '1' };
  expect(playwrightEnv(caller, {}, '.js', false)).toEqual({ PATH: '/usr/bin', PW_DISABLE_TS_ESM: '1' });
  expect(playwrightEnv(caller, {}, '.ts', false)).toEqual({ PATH: '/usr/bin' });
  // A Node that strips types loads the sources itself, as it loads the compiled tree.
  expect(playwrightEnv(caller, {}, '.ts', true)).toEqual({ PATH: '/usr/bin', PW_DISABLE_TS_ESM: '1' });
});

test('a certify run with Playwright variables of its caller writes nothing where they point; its reports, listing and verdict are where the run names them', async () => {
  test.setTimeout(120_000);
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'users-project-'));
  const reportsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'certify-pw-env-'));
  try {
    const users = usersPlaywrightSettings(userDir);
    const listing = listSuites('playwright.config.ts', { ...inheritedEnv(), ...users });
    expect(listing.errors, 'the listing of the suites loads').toEqual([]);
    expect(listing.tests.length, 'the listing names the suites').toBeGreaterThan(10);

    const only = testsOption(['AUTH-01'], ['functional']);
    expect(only.tests?.length, 'AUTH-01 has tests of its own').toBeGreaterThan(0);
    let out = '';
    const outcome = await runCertify({
      env: { ...inheritedEnv(), ...users, REPORTS_DIR: reportsDir },
      write: (t) => (out += t),
      onlyPhases: ['functional'],
      onlyTests: only.tests!,
      ...(only.titles ? { onlyTitles: only.titles } : {}),
    });
    const report = JSON.parse(fs.readFileSync(path.join(reportsDir, 'conformance.json'), 'utf8')) as {
      requirements: { id: string; status: string }[];
    };
    expect(report.requirements.find((r) => r.id === 'AUTH-01')?.status, `AUTH-01 was judged on its tests\n${out.slice(-1500)}`).toBe(
      'pass',
    );
    for (const entry of ['results.json', 'junit.xml', path.join('html', 'index.html')])
      expect(fs.existsSync(path.join(reportsDir, entry)), `the run wrote ${entry} into its reports folder`).toBe(true);
    expect(outcome.exitCode, 'the run reached a verdict (the phases left out fail without a test result)').toBe(1);
    expect(fs.readdirSync(userDir), "the user's folder holds only what the user put there").toEqual(['users-reporter.cjs']);
  } finally {
    fs.rmSync(userDir, { recursive: true, force: true });
    fs.rmSync(reportsDir, { recursive: true, force: true });
  }
});
