/**
 * `inventory-conformance diff <old certificate.json> <new certificate.json> [--json]`: the
 * requirement-level difference between two runs or releases (certify/certificate/diff.ts).
 * Exit 1 when a must-level requirement regressed, 0 otherwise, 2 on a usage error (an unreadable
 * file, not a certificate). With `--json`, stdout is the difference as data, on every exit code.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { diffCertificates, renderDiff } from '../certify/certificate/diff.ts';
import { parsePreviousCertificate } from '../certify/steps/judge.ts';
import type { Certificate } from '../certify/certificate/types.ts';
import { EXIT } from '../core/exit-codes.ts';

interface DiffIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
}

export const DIFF_HELP = [
  'Usage: inventory-conformance diff <old certificate.json> <new certificate.json> [--json]',
  '',
  'The requirement-level difference between two certificates: requirements that regressed (pass to',
  'fail or warn), were fixed, are new or were removed; and what changed in the suite, spec and ledger',
  'digests, the target and the profile.',
  '',
  'Flags:',
  '  --json    print the difference as JSON on stdout',
  '  --help    this help',
  '',
  'Exit codes:',
  '  0  no must-level requirement regressed',
  '  1  a must-level requirement regressed',
  '  2  usage error: a file is missing, unreadable or not a certificate',
  '',
].join('\n');

function readCertificate(file: string, cwd: string): Certificate | string {
  let text: string;
  try {
    text = fs.readFileSync(path.resolve(cwd, file), 'utf8');
  } catch (error) {
    return `${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : 'cannot be read'}`;
  }
  const parsed = parsePreviousCertificate(text);
  return typeof parsed === 'string' ? `${file}: ${parsed}` : parsed;
}

export function diffCommand(argv: readonly string[], io: DiffIo): number {
  let values: { json?: boolean; help?: boolean };
  let positionals: string[];
  const json = argv.includes('--json');
  const usage = (errors: string[]) => {
    io.stderr(
      `inventory-conformance: usage error:\n${errors.map((e) => `  - ${e}\n`).join('')}Run \`inventory-conformance diff --help\` for the flags.\n`,
    );
    if (json) io.stdout(`${JSON.stringify({ result: 'usage', exitCode: EXIT.usage, errors }, null, 2)}\n`);
    return EXIT.usage;
  };
  try {
    ({ values, positionals } = parseArgs({
      args: [...argv],
      options: { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    }));
  } catch (error) {
    return usage([(error as Error).message.split('\n')[0]!]);
  }
  if (values.help) {
    io.stdout(DIFF_HELP);
    return EXIT.pass;
  }
  if (positionals.length !== 2) return usage([`diff needs two certificate files (old, new), got ${positionals.length}`]);
  const [before, now] = positionals.map((f) => readCertificate(f, io.cwd));
  const errors = [before, now].filter((c): c is string => typeof c === 'string');
  if (errors.length) return usage(errors);
  const d = diffCertificates(before as Certificate, now as Certificate);
  const code = d.mustRegressions.length ? EXIT.fail : EXIT.pass;
  if (json) io.stdout(`${JSON.stringify({ result: code === EXIT.pass ? 'no-regression' : 'regressed', exitCode: code, ...d }, null, 2)}\n`);
  else io.stdout(renderDiff(d));
  return code;
}
