/**
 * `test` with a `scratch(name)` fixture: a path in a folder of the test's own under the system's
 * temporary folder, removed afterwards. Not `testInfo.outputPath`: test-results/ is emptied by any
 * other `playwright test` run started meanwhile on the same tree.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test as base } from '../test.ts';

export const test = base.extend<{ scratch: (name: string) => string }>({
  // eslint-disable-next-line no-empty-pattern
  scratch: async ({}, use) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'conformance-test-'));
    await use((name) => path.join(dir, name));
    fs.rmSync(dir, { recursive: true, force: true });
  },
});
export { expect } from '../test.ts';
