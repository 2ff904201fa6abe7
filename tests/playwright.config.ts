import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineConfig } from '@playwright/test';

// Checks that the project's tests run directly (not through certify, which names its own file)
// journal what they change. Those records go to a folder of this run's own, removed when the run
// ends, never to the repository's `reports/`, where the next `npm run certify` would find files it
// did not write. Workers inherit the runner's variable, so only the runner creates and removes it.
// The same folder holds the listing of the conformance suites (core/ledger.ts `listSuites`): the
// suites do not change during a test run, so the first process that lists them writes it and the
// others (the matrix, the catalogue and ledger tests, in the runner and in each worker) read it.
// It also holds the fault matrix's results, which a worker started after a failure reads too and
// the score test sums: a run of a subset of the matrix leaves nothing behind either.
if (!process.env.CERTIFY_JOURNAL_FILE) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inventory-conformance-tests-'));
  process.env.CERTIFY_JOURNAL_FILE = path.join(dir, 'journal.jsonl');
  process.env.SUITES_LISTING_CACHE = path.join(dir, 'suites-listing.json');
  process.env.TEST_MATRIX_RESULTS_DIR = path.join(dir, 'fault-matrix-results');
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
}

/**
 * The project's own tests (`npm test`): the reference server, the schemas, the suite's helpers,
 * the ledger, a full certify run and the fault/variant matrix. The conformance suites a user runs
 * against a deployment live in `suites/` and use the root `playwright.config.ts`.
 */
/** The tests that certify a whole server, longest first (measured inside `npm test` on 2 cores). */
export const LONG = [
  'certificate/gate.e2e.test.ts',
  'package/install.test.ts',
  'certify/certify.test.ts',
  'certify/overlap.test.ts',
  'staging/staging.test.ts',
  'faults/busy.test.ts',
  'certificate/replay.e2e.test.ts',
  'generated/replay.test.ts',
  'staging/token-bucket.test.ts',
  'frontdoor/nginx.test.ts',
  'frontdoor/haproxy.test.ts',
];

/**
 * Tests that mostly wait on the wall clock (a `Retry-After`, a slow link, a window, a killed run's
 * restart), at little CPU: measured inside `npm test`, each file runs 15 to 70 s at a small share of
 * one core. They run beside the tests that certify a whole server, not after them.
 */
const WAITING = [
  'hostile/pacing.test.ts',
  'suites/exhaust-live.test.ts',
  'journal/sigkill.test.ts',
  'load/overload.test.ts',
  'hostile/transport.test.ts',
  'load/capacity.test.ts',
  'load/pacing.test.ts',
  'cli/registry.test.ts',
  'reference-server/rate-limit.test.ts',
  'journal/restore.test.ts',
  'redis/deployment.test.ts',
];

export default defineConfig({
  testDir: '.',
  testMatch: '**/*.test.ts',
  timeout: 60_000,
  // Four workers on two cores: the fault matrix holds one for the whole run (its certify runs are
  // kept going ahead of the test that needs them), the tests that certify a whole server at most
  // two more, and the tests that mostly wait the rest. With three, the last minutes of the run were
  // tests that wait, on a third of the CPU (measured with a per-process CPU log). The matrix and the
  // `long` tests run at a lower priority (tests/background.ts): the tests that judge timing on short
  // windows beside them get a core as soon as they wake.
  workers: 4,
  fullyParallel: true,
  forbidOnly: !!process.env.CI,
  outputDir: '../test-results/self',
  reporter: [['list'], ['./summary-reporter.ts']],
  // The fault matrix is the longest chain of `npm test` (one worker, its certify runs kept going
  // ahead of the test that needs them): its project comes first, so it starts at once. The tests
  // that certify a whole server (a minute or more each on a busy runner, at most two at once) come
  // next, with the tests that mostly wait beside them, so that the last minutes are left to short
  // tests that share the workers evenly, not to one long run or to waits.
  projects: [
    { name: 'matrix', testMatch: 'faults/matrix.test.ts' },
    { name: 'long', testMatch: LONG, workers: 2 },
    { name: 'waiting', testMatch: WAITING },
    { name: 'self', testIgnore: ['faults/matrix.test.ts', ...LONG, ...WAITING] },
  ],
});
