/**
 * The matrix's launcher for a certify run limited to some phases: `MATRIX_PHASES=functional`
 * (comma-separated) calls certify's own `runCertify` with its `onlyPhases` option ("for tools and
 * tests"), `MATRIX_TESTS` (comma-separated `file:line` of `suites/`, optional) with its
 * `onlyTests` option, `MATRIX_TITLES` (optional, a JSON array of test titles) with its `onlyTitles`
 * option, `MATRIX_MAX_FAILURES` (optional, a positive integer) with its `maxFailures`
 * option, and `MATRIX_TURNS_DIR` (optional) with its `turnsDir` option. The matrix
 * reads the verdict only, so the run is `verdictOnly`: no HTML report, junit.xml or results.json,
 * and the phases' blobs are not merged. Everything else (environment, reports, verdict, secret
 * scan) is certify's. Phases left out are neither run nor listed, so their requirements fail with
 * "no test result": the matrix never counts such a failure as a catch (see `faults/harness.ts`).
 */
import { PHASES, type Phase } from '../certify/env.ts';
import { runCertify } from '../certify/run.ts';

const only = (process.env.MATRIX_PHASES ?? '')
  .split(',')
  .map((p) => p.trim())
  .filter(Boolean);
const unknown = only.filter((p) => !(PHASES as readonly string[]).includes(p));
if (!only.length || unknown.length) {
  process.stdout.write(`certify-phases: MATRIX_PHASES must list some of ${PHASES.join(', ')}; got "${process.env.MATRIX_PHASES ?? ''}"\n`);
  process.exit(2);
}
const tests = (process.env.MATRIX_TESTS ?? '')
  .split(',')
  .map((t) => t.trim())
  .filter(Boolean);
const badTest = tests.find((t) => !/^[\w./-]+\.spec\.[jt]s:\d+$/.test(t));
if (badTest) {
  process.stdout.write(`certify-phases: MATRIX_TESTS must list file:line locations of suites/; got "${badTest}"\n`);
  process.exit(2);
}
let titles: string[] = [];
try {
  const parsed: unknown = JSON.parse(process.env.MATRIX_TITLES?.trim() || '[]');
  if (!Array.isArray(parsed) || !parsed.every((t) => typeof t === 'string' && t.length > 0)) throw new Error('not a list of titles');
  titles = parsed;
} catch {
  process.stdout.write('certify-phases: MATRIX_TITLES must be a JSON array of test titles\n');
  process.exit(2);
}
const maxFailuresText = process.env.MATRIX_MAX_FAILURES?.trim();
const maxFailures = maxFailuresText ? Number(maxFailuresText) : undefined;
if (maxFailures !== undefined && !(Number.isInteger(maxFailures) && maxFailures > 0)) {
  process.stdout.write(`certify-phases: MATRIX_MAX_FAILURES must be a positive integer; got "${maxFailuresText}"\n`);
  process.exit(2);
}
const turnsDir = process.env.MATRIX_TURNS_DIR?.trim();
runCertify({
  env: process.env,
  write: (t) => process.stdout.write(t),
  onlyPhases: only as Phase[],
  ...(tests.length ? { onlyTests: tests } : {}),
  ...(titles.length ? { onlyTitles: titles } : {}),
  ...(maxFailures ? { maxFailures } : {}),
  ...(turnsDir ? { turnsDir } : {}),
  verdictOnly: true,
}).then(
  (outcome) => {
    process.exitCode = outcome.exitCode;
  },
  (error: unknown) => {
    process.stdout.write(`certify-phases: internal error: ${(error as Error)?.message ?? String(error)}\n`);
    process.exitCode = 1;
  },
);
