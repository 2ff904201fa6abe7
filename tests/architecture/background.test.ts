/**
 * The tests that run at a lower priority (`tests/background.ts`) are exactly the fault matrix and
 * the `long` project: each of those files lowers its worker, and no other file does, since a worker
 * of the other projects also runs tests that judge timing on short windows.
 */
import fs from 'node:fs';
import path from 'node:path';
import { test, expect } from '../test.ts';
import { LONG } from '../playwright.config.ts';

const TESTS = path.resolve(import.meta.dirname, '..');
/** The call at the top level of a file (a line of its own). */
const CALL = /^test\.beforeAll\(runInBackground\);$/m;

function testFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : testFiles(full);
    return e.name.endsWith('.test.ts') ? [path.relative(TESTS, full)] : [];
  });
}

test('the files that lower their worker are the fault matrix and the long project, no more and no fewer', () => {
  const lowering = testFiles(TESTS)
    .filter((f) => CALL.test(fs.readFileSync(path.join(TESTS, f), 'utf8')))
    .sort();
  expect(lowering).toEqual(['faults/matrix.test.ts', ...LONG].sort());
});
