/**
 * The `test` and `expect` of the project's own tests. They drive no browser through fixtures (the
 * certificate's browser tests launch Chromium themselves), so `test` starts from Playwright's base
 * test type, without the browser fixtures of `@playwright/test`'s `test`: about thirty context
 * options and trace recording, each set up and torn down around every test with a stack trace taken.
 */
export { _baseTest as test, expect } from '@playwright/test';
