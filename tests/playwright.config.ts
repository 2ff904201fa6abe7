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
  workers: 2,
  fullyParallel: true,
  forbidOnly: !!process.env.CI,
  outputDir: '../test-results/self',
  reporter: [['list'], ['./summary-reporter.ts']],
});
