/**
 * Config of `playwright merge-reports` in certify: the phases' blobs become one HTML report,
 * `junit.xml` and `results.json` under `CERTIFY_REPORTS_DIR` (set by certify).
 */
import path from 'node:path';
import { defineConfig } from '@playwright/test';
const reportsDir = path.resolve(process.env.CERTIFY_REPORTS_DIR ?? 'reports');
const rootDir = path.resolve(process.env.CERTIFY_ROOT_DIR ?? process.cwd());

export default defineConfig({
  testDir: rootDir,
  reporter: [
    ['html', { outputFolder: path.join(reportsDir, 'html'), open: 'never' }],
    ['junit', { outputFile: path.join(reportsDir, 'junit.xml') }],
    ['json', { outputFile: path.join(reportsDir, 'results.json') }],
  ],
});
