/**
 * Playwright global setup of the conformance run (`playwright.config.ts`): starts the run-wide
 * pacer coordinator when `CONFORMANCE_PACER_URL` is unset (certify starts its own, one for all
 * phases) and stops it at the end, writing what it paced to `${REPORTS_DIR}/pacing.json`
 * (key labels and counts only).
 */
import fs from 'node:fs';
import path from 'node:path';
import { startPacerCoordinator } from './coordinator.ts';
import { readSettings } from '../../settings/index.ts';

export default async function globalSetup(): Promise<(() => Promise<void>) | undefined> {
  if (process.env.CONFORMANCE_PACER_URL) return undefined;
  const coordinator = await startPacerCoordinator();
  // Workers inherit the runner's environment.
  process.env.CONFORMANCE_PACER_URL = coordinator.url;
  return async () => {
    const reportsDir = readSettings(process.env).values.REPORTS_DIR;
    try {
      fs.mkdirSync(reportsDir, { recursive: true });
      fs.writeFileSync(path.join(reportsDir, 'pacing.json'), `${JSON.stringify(coordinator.report(), null, 2)}\n`);
    } finally {
      delete process.env.CONFORMANCE_PACER_URL;
      await coordinator.close();
    }
  };
}
