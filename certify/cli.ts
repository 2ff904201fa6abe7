/**
 * `npm run certify` (`tsx certify/cli.ts`). See certify/README.md for the variables and
 * reports/README.md for what the run writes. Exit status: 0 verdict pass, 1 verdict fail,
 * 2 usage error.
 */
import { LOAD_DEFAULTS } from '../suites/load/settings.ts';
import { VARIABLES } from './env.ts';
import { runCertify } from './run.ts';
import { redactorFor, secretsFromEnv } from './secrets.ts';

const SUITE_VARIABLES: readonly { name: string; description: string }[] = [
  { name: 'MAX_EXHAUST_REQUESTS', description: 'most requests the 429 checks send to drive a key to its limit (default 2000)' },
  { name: 'REQUEST_TIMEOUT_MS', description: 'per-request timeout of the suites (default 15000)' },
];

const LOAD_DESCRIPTIONS: Record<string, string> = {
  LOAD_DURATION_S: 'seconds of sustained load per capacity run',
  LOAD_CONNECTIONS: 'connections of a capacity run',
  LOAD_P99_MS: 'threshold: p99 latency (ms) of a capacity run, and of the other key during the burst',
  LOAD_MAX_ERROR_RATE: 'threshold: share of failed requests of a capacity run',
  LOAD_MAX_REQUESTS: 'hard cap on the requests of one capacity run',
  LOAD_TIMEOUT_S: 'seconds before a load request counts as a timeout',
  LOAD_BURST_MAX: 'hard cap on the overload burst (max(3 × limit, 500), capped here)',
  LOAD_BURST_CONNECTIONS: 'connections of the overload burst',
};

function help(): string {
  const rows = [...VARIABLES, ...SUITE_VARIABLES];
  const loadRows = Object.entries(LOAD_DEFAULTS)
    .filter(([name]) => name !== 'MAX_RETRY_AFTER_S')
    .map(([name, value]) => ({ name, description: `${LOAD_DESCRIPTIONS[name] ?? 'see suites/load/settings.ts'} (default ${value})` }));
  const width = Math.max(...[...rows, ...loadRows].map((r) => r.name.length)) + 2;
  const fmt = (r: { name: string; description: string }) => `  ${r.name.padEnd(width)}${r.description}`;
  return [
    'Usage: npm run certify',
    '',
    'Certifies a deployment of the Inventory Service against its spec and writes the reports',
    '(REPORTS_DIR, default reports/: conformance.json, conformance.md, html/, junit.xml, results.json, load.json).',
    'With no BASE_URL it starts the bundled reference server and certifies it.',
    '',
    'Environment:',
    ...rows.map(fmt),
    '',
    'Load phase:',
    ...loadRows.map(fmt),
    '',
    'Exit status: 0 if every must-level requirement passed, 1 otherwise, 2 on a usage error.',
    '',
  ].join('\n');
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(help());
    return 0;
  }
  if (args.length) {
    process.stdout.write(`certify: usage error:\n  - unknown argument(s): ${args.join(' ')} (configuration is by environment variables)\nRun \`npm run certify -- --help\` for the variables.\n`);
    return 2;
  }
  const controller = new AbortController();
  let firstSignalAt = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    // tsx relays the terminal's signal, so one Ctrl-C can arrive twice: only a later one forces the exit.
    if (controller.signal.aborted) {
      if (Date.now() - firstSignalAt > 2000) process.exit(130);
      return;
    }
    firstSignalAt = Date.now();
    process.stdout.write(`\ncertify: ${signal}: stopping the running phase, then writing the reports of what ran …\n`);
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return runCertify({ env: process.env, write: (t) => process.stdout.write(t), signal: controller.signal });
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const redact = redactorFor(secretsFromEnv(process.env));
    process.stdout.write(redact(`certify: internal error: ${(error as Error)?.stack ?? String(error)}\n`));
    process.exitCode = 1;
  },
);
