import { defineConfig } from '@playwright/test';

/**
 * The project's own tests (`npm test`): the reference server, the schemas, the suite's helpers,
 * the ledger, a full certify run and the fault/variant matrix. The conformance suites a user runs
 * against a deployment live in `suites/` and use the root `playwright.config.ts`.
 */
export default defineConfig({
  testDir: '.',
  testMatch: '**/*.test.ts',
  timeout: 60_000,
  // Three workers on two cores: the fault matrix holds one for the whole run (its certify runs are
  // child processes, kept going ahead of the test that needs them), and the other tests, most of
  // which wait on servers, windows and child processes, share the other two.
  workers: 3,
  fullyParallel: true,
  forbidOnly: !!process.env.CI,
  outputDir: '../test-results/self',
  reporter: [['list'], ['./summary-reporter.ts']],
  // The fault matrix is the longest chain of `npm test` (one worker, its certify runs kept going
  // ahead of the test that needs them): its project comes first, so it starts at once and the other
  // worker runs everything else beside it.
  projects: [
    { name: 'matrix', testMatch: 'faults/matrix.test.ts' },
    { name: 'self', testIgnore: 'faults/matrix.test.ts' },
  ],
});
