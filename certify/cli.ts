/**
 * `npm run certify` (`tsx certify/cli.ts`). See certify/README.md for the variables and
 * reports/README.md for what the run writes. Exit status: 0 verdict pass, 1 verdict fail,
 * 2 usage error, 3 target unreachable (preflight), 130/143 stopped by SIGINT/SIGTERM in the preflight.
 */
import { help } from './help.ts';
import { inputRedactor } from './env.ts';
import { runCertify } from './run.ts';
import { redactorFor, secretsFromEnv } from '../core/secrets.ts';

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(help());
    return 0;
  }
  if (args.length) {
    // The arguments are quoted: any key among them (a key pasted in the wrong place) is redacted.
    const redact = inputRedactor(process.env);
    process.stdout.write(redact(`certify: usage error:\n  - unknown argument(s): ${args.join(' ')} (configuration is by environment variables)\nRun \`npm run certify -- --help\` for the variables.\n`));
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
    controller.abort(signal);
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
