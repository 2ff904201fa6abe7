import type { FullResult, Reporter, TestError } from '@playwright/test/reporter';

/**
 * The console reporter of a certify phase when the console is not verbose (CONFORMANCE_VERBOSE
 * unset): it prints nothing per check and none of the checks' own output (the load checks'
 * progress), only an error of the phase itself (a test file that does not load, a global
 * timeout), one line each. certify prints one line as the phase starts and one as it ends, and
 * the failures in its summary. It claims the console, so Playwright adds no `line` or `dot`
 * reporter of its own. Runs after `redact-reporter.ts`, which has scrubbed every key from the errors.
 */
export default class PhaseConsoleReporter implements Reporter {
  onError(error: TestError): void {
    const first = (error.message ?? error.value ?? 'error').split('\n').find((l) => l.trim()) ?? 'error';
    process.stdout.write(`  ✗ ${first.trim()}${error.location ? ` (${error.location.file}:${error.location.line})` : ''}\n`);
  }

  onEnd(result: FullResult): void {
    if (result.status === 'timedout') process.stdout.write('  ✗ the phase reached its time limit (PHASE_TIMEOUT_S)\n');
  }

  printsToStdio(): boolean {
    return true;
  }
}
