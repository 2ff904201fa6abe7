import fs from 'node:fs';
import path from 'node:path';
import type { FullResult, Reporter, TestCase, TestResult } from '@playwright/test/reporter';

/** The repository's reports folder: `npm run certify` writes there, and refuses it once it holds files a run did not write. */
const REPORTS = path.resolve(import.meta.dirname, '..', 'reports');

/** The files and folders under the reports folder, as relative paths (none when it is absent). */
function entriesOf(dir: string): Set<string> {
  try {
    return new Set(fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }));
  } catch {
    return new Set();
  }
}

/**
 * Ends the output of `npm test` with the line CI reads: `N passed, N failed` (and `, N skipped`).
 * A test counts once, by its final outcome; a test that needed a retry to pass counts as failed.
 * The project's tests never write into the repository's `reports/` (each run has folders of its
 * own): an entry that appeared there during the run is one more failure, named, and fails the run.
 */
export default class SummaryReporter implements Reporter {
  private readonly outcomes = new Map<string, ReturnType<TestCase['outcome']>>();
  private reportsBefore = new Set<string>();

  onBegin(): void {
    this.reportsBefore = entriesOf(REPORTS);
  }

  onTestEnd(test: TestCase, _result: TestResult): void {
    this.outcomes.set(test.id, test.outcome());
  }

  async onEnd(result: FullResult): Promise<{ status: FullResult['status'] } | undefined> {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const outcome of this.outcomes.values()) {
      if (outcome === 'expected') passed++;
      else if (outcome === 'skipped') skipped++;
      else failed++;
    }
    const written = [...entriesOf(REPORTS)]
      .filter((e) => !this.reportsBefore.has(e))
      .sort()
      .slice(0, 10);
    // Printed after every other reporter (Playwright awaits reporters in order).
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (written.length) {
      failed++;
      process.stdout.write(
        `\nthe tests wrote into the repository's reports/ (${written.join(', ')}): npm run certify would refuse that folder; a test must write into a folder of its own\n`,
      );
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
    return written.length ? { status: 'failed' } : { status: result.status };
  }

  printsToStdio(): boolean {
    return true;
  }
}
