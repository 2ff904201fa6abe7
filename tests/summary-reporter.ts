import type { FullResult, Reporter, TestCase, TestResult } from '@playwright/test/reporter';

/**
 * Ends the output of `npm test` with the line CI reads: `N passed, N failed` (and `, N skipped`).
 * A test counts once, by its final outcome; a test that needed a retry to pass counts as failed.
 */
export default class SummaryReporter implements Reporter {
  private readonly outcomes = new Map<string, ReturnType<TestCase['outcome']>>();

  onTestEnd(test: TestCase, _result: TestResult): void {
    this.outcomes.set(test.id, test.outcome());
  }

  async onEnd(_result: FullResult): Promise<void> {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const outcome of this.outcomes.values()) {
      if (outcome === 'expected') passed++;
      else if (outcome === 'skipped') skipped++;
      else failed++;
    }
    // Printed after every other reporter (Playwright awaits reporters in order).
    await new Promise((resolve) => setTimeout(resolve, 0));
    process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  }

  printsToStdio(): boolean {
    return true;
  }
}
