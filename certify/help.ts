/**
 * certify's `--help` text: the variables are rendered from `settings/` (the one home of each).
 */
import { renderHelp } from '../settings/index.ts';

/** certify's `--help`: the variables come from `settings/` (the one home of each). */
export function help(): string {
  return [
    'Usage: npm run certify',
    '',
    'Certifies a deployment of the Inventory Service against its spec and writes the reports',
    '(REPORTS_DIR, default reports/: conformance.json, conformance.md, html/, junit.xml, results.json, load.json).',
    'With no BASE_URL it starts the bundled reference server and certifies it.',
    '',
    renderHelp(),
    EXIT_STATUS_HELP,
    '',
  ].join('\n');
}

/** The exit statuses, as `--help` states them. */
export const EXIT_STATUS_HELP = [
  'Exit status: 0 if every must-level requirement the run certifies passed, 1 otherwise, 2 on a usage error,',
  '3 when the preflight finds the target unreachable, its TLS certificate unverified, a redirect, or no answer',
  'like this API (a request without a key must get 401 with an Error body); the preflight sends no key.',
  'A requirement the harness could not judge (a prerequisite missing, a cap reached, a Retry-After beyond',
  'MAX_RETRY_AFTER_S, a shared key) is listed as not certified with the reason, never as passed or failed.',
].join('\n');
