import { defineConfig } from '@playwright/test';

/**
 * The conformance run (docs/architecture.md, "The conformance run"): suites in `suites/`,
 * projects `functional`, `rate-limit` (drives a key to 429) and `load`. Certify runs the phases
 * one after another (no project `dependencies`: a failing phase must not skip the next one) and
 * adds its reporters. Traces, screenshots and videos stay off: a trace copies request headers,
 * the key among them, verbatim. No `extraHTTPHeaders`: the suites' `api` fixture sets
 * Authorization per request and redacts it from everything it records.
 */
const reportsDir = process.env.REPORTS_DIR || 'reports';
const workers = Number(process.env.WORKERS) > 0 ? Math.floor(Number(process.env.WORKERS)) : 2;
const maxRetryAfterS = Number(process.env.MAX_RETRY_AFTER_S) > 0 ? Number(process.env.MAX_RETRY_AFTER_S) : 120;

export default defineConfig({
  testDir: 'suites',
  testMatch: '**/*.spec.ts',
  outputDir: `${reportsDir}/test-results`,
  // A pacing wait or a Retry-After wait may take up to MAX_RETRY_AFTER_S; the 429 check sets its own.
  timeout: (maxRetryAfterS + 60) * 1000,
  workers,
  fullyParallel: true,
  retries: 0,
  forbidOnly: !!process.env.CI,
  reporter: [['list']],
  use: {
    trace: 'off',
    screenshot: 'off',
    video: 'off',
  },
  projects: [
    {
      name: 'functional',
      testIgnore: ['rate-limit/retry-after.spec.ts', 'load/**'],
    },
    {
      name: 'rate-limit',
      testMatch: 'rate-limit/retry-after.spec.ts',
      fullyParallel: false,
    },
    {
      name: 'load',
      testMatch: 'load/**/*.spec.ts',
      fullyParallel: false,
    },
  ],
});
