/**
 * The `test` and `expect` of the project's own tests: Playwright's public ones (the certificate's
 * browser tests launch Chromium themselves; no test uses the browser fixtures).
 */
export { test, expect } from '@playwright/test';
