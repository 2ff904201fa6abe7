/** `--help` of each command: usage, examples, flags, the settings it reads and its exit codes. */
import { renderHelp, GROUPS } from '../settings/index.ts';
import { ALIASES, OWN_FLAGS, type Command } from './args.ts';
import { EXIT, EXIT_DESCRIPTIONS } from '../core/exit-codes.ts';
import { VERIFY_NOTES } from './verify.ts';

export const BIN = 'inventory-conformance';

const EXAMPLES: Record<Command, string[]> = {
  certify: [
    `npx ${BIN} certify                                   # the bundled reference server`,
    `API_KEY=… npx ${BIN} certify --base-url https://staging.example.com/v1 --api-url https://staging.example.com/quickstart --plan pro`,
    `npx ${BIN} certify --config conformance.yaml --target staging --strict`,
    `npx ${BIN} certify --baseline conformance-baseline.yaml  # only new failures fail`,
    `npx ${BIN} certify --write-baseline conformance-baseline.yaml`,
    `npx ${BIN} certify --json > verdict.json`,
  ],
  serve: [`npx ${BIN} serve`, `npx ${BIN} serve --port 9000`, `npx ${BIN} serve --help`],
  replay: [`npx ${BIN} replay <token>                           # the token printed by a failing generated check`],
  verify: [
    `npx ${BIN} verify reports/certificate.json`,
    `npx ${BIN} verify reports/certificate.json --public-key signer.pub.pem`,
    `npx ${BIN} verify submission/acme-acme-inventory-2.4.1 --public-key acme.pub.pem --json   # a submission folder (submit --help)`,
  ],
  restore: [
    `API_KEY=… npx ${BIN} restore --base-url https://staging.example.com/v1   # what a run that died left changed, from reports/journal/`,
    `API_KEY=… npx ${BIN} restore --base-url https://staging.example.com/v1 --dry-run   # what would be put back and why; no change sent`,
    `npx ${BIN} restore --base-url https://staging.example.com/v1 --forget 7,9   # pets dealt with by hand: their entries closed`,
  ],
  help: [],
};

const SUMMARY: Record<Exclude<Command, 'help'>, string> = {
  certify: 'certify a deployment (no --base-url: the bundled reference server); writes reports/ and the certificate',
  serve: 'run the reference server (flags: serve --help)',
  replay: 'run the generated phase on one case only (CONFORMANCE_REPLAY=<token>)',
  verify:
    "recompute a certificate's digests against this installed harness, check its signature and that it has not expired; or check a submission folder whole",
  restore: 'put back what a run that died left changed on the target (the journal in the reports folder); exit 1 naming what could not be',
};

/** What `restore --help` adds: the settings it reads and its own exit codes. */
const RESTORE_HELP = [
  'Settings (flag, variable or config file, as for certify): --base-url (BASE_URL, required), --api-url (API_URL),',
  '--reports-dir (REPORTS_DIR: the folder whose journal/ is read), --request-timeout-ms, --max-retry-after-s, --insecure-tls.',
  'The key is read only from the environment (API_KEY). Entries of another target are left alone and named.',
  'Each pet is decided by the count the list shows: its original closes the entry; a count the run wrote is put',
  'back to the original and verified; any other count (somebody else wrote since) is left alone and named with',
  'its original, the counts the run wrote and the count found. An entry journaled by an older version (no counts',
  'written recorded) is left alone unless at its original. A 429 an earlier run journaled is waited out before',
  'anything is sent on its key (beyond MAX_RETRY_AFTER_S: nothing is sent on it, and restore says until when).',
  '',
  'Exit codes:',
  `  ${String(EXIT.pass).padEnd(3)}nothing is left changed (every open entry of this target was put back and verified, or there was none); --dry-run and --forget: done`,
  `  ${String(EXIT.fail).padEnd(3)}something was not put back: a count that could not be written back, or one somebody else wrote since (left alone); each is named, with what to do by hand`,
  `  ${String(EXIT.usage).padEnd(3)}usage error (no BASE_URL, no API_KEY, a malformed value, --forget of a pet with no open entry); nothing was sent`,
  `  ${String(EXIT.unreachable).padEnd(3)}the preflight stopped it (unreachable, TLS not verified); no key was sent`,
];

function exitCodeLines(): string[] {
  return EXIT_DESCRIPTIONS.map((e) => `  ${String(e.code).padEnd(3)}${e.meaning}`);
}

export function help(command?: Command): string {
  const lines: string[] = [];
  // `help <anything else>` (not a command): the general help, never a crash.
  if (!command || command === 'help' || !(command in SUMMARY)) {
    lines.push(`Usage: ${BIN} <command> [flags]`, '', 'Commands:');
    for (const [c, s] of Object.entries(SUMMARY)) lines.push(`  ${c.padEnd(9)}${s}`);
    lines.push(`  ${'diff'.padEnd(9)}the requirement-level difference between two certificates (diff --help)`);
    lines.push(`  ${'submit'.padEnd(9)}write a submission folder anyone can check from a strict, signed run (submit --help)`);
    lines.push(
      '',
      'Examples:',
      ...Object.values(EXAMPLES)
        .flat()
        .map((e) => `  ${e}`),
    );
    lines.push('', `Run \`${BIN} <command> --help\` for its flags.`, '', 'Exit codes:', ...exitCodeLines(), '');
    return lines.join('\n');
  }
  const positional = command === 'replay' ? ' <token>' : command === 'verify' ? ' <certificate.json | submission folder>' : '';
  lines.push(
    `Usage: ${BIN} ${command}${positional} [flags]`,
    '',
    SUMMARY[command as Exclude<Command, 'help'>],
    '',
    'Examples:',
    ...EXAMPLES[command].map((e) => `  ${e}`),
    '',
  );
  if (command === 'verify') lines.push(...VERIFY_NOTES);
  const own = Object.entries(OWN_FLAGS).filter(([, f]) => f.commands.includes(command));
  const helpOf = (f: (typeof OWN_FLAGS)[string]) => (typeof f.help === 'string' ? f.help : (f.help[command] ?? ''));
  lines.push('Flags:', ...own.map(([flag, f]) => `  ${`${flag}${f.value ? ' <value>' : ''}`.padEnd(26)}${helpOf(f)}`), '');
  if (command === 'certify' || command === 'replay') {
    lines.push(
      'Settings: each is an environment variable and a flag (shown last); the flag wins, then the',
      'variable, then the config file (conformance.yaml, see conformance.example.yaml), then the default.',
      `Keys (API_KEY, RATE_LIMIT_KEY, LOAD_KEY) are read only from the environment. Aliases: ${Object.entries(ALIASES)
        .map(([a, n]) => `${a} = ${n}`)
        .join(', ')}.`,
      '',
      renderHelp(GROUPS, { flags: true }),
    );
  }
  if (command === 'restore') {
    lines.push(...RESTORE_HELP, '');
    return lines.join('\n');
  }
  if (command !== 'serve') lines.push('Exit codes:', ...exitCodeLines(), '');
  return lines.join('\n');
}
