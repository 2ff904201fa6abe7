/**
 * `inventory-conformance submit --product product.yaml [--reports DIR] [--out DIR] [--json]`:
 * writes `<out>/<vendor>-<product>-<version>/` from a strict, signed, fully certified run
 * (certify/submission/), or refuses, one line per reason. Exit codes: core/exit-codes.ts, as
 * `refusalExitCode` maps the refusals.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { problemLine, refusalExitCode } from '../certify/submission/problems.ts';
import { submit } from '../certify/submission/submit.ts';
import { EXIT } from '../core/exit-codes.ts';
import { redactorFor, secretsFromEnv } from '../core/secrets.ts';
import { readSettings } from '../settings/index.ts';

interface SubmitIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  cwd: string;
}

/** `submit --help`. */
export const SUBMIT_HELP = [
  'Usage: inventory-conformance submit --product product.yaml [--reports DIR] [--out DIR] [--json]',
  '',
  'Writes a submission folder anyone can check, <out>/<vendor>-<product>-<version>/: product.yaml,',
  'certificate.json and certificate.html, junit.xml, evidence.har and a README, from the reports of',
  'a certify run. The same run gives byte-identical files. It refuses, one line per reason, a run',
  'that was not --strict or not of the full profile, anything not certified, a failed requirement,',
  'known failures (--baseline, --no-regression-from), an unsigned certificate (--sign-key), an',
  'expired or changed one, a target that is not a deployment (with verified TLS) or not the url of',
  'product.yaml, and a suite that is not a released version: a MAJOR.MINOR.PATCH version, the one',
  'installed, whose suite source is the installed one, run from a checkout without changes to it.',
  '',
  'product.yaml (schemas/product.schema.json):',
  '  vendor: Acme',
  '  product: Acme Inventory',
  '  version: 2.4.1',
  '  contact: conformance@acme.example',
  '  url: https://inventory.acme.example/v1     # the BASE_URL the run certified',
  '',
  'Examples:',
  '  API_KEY=… RATE_LIMIT_KEY=… LOAD_KEY=… npx inventory-conformance certify --base-url https://inventory.acme.example/v1 --api-url https://inventory.acme.example/quickstart --strict --sign-key signer.pem',
  '  npx inventory-conformance submit --product product.yaml',
  '  npx inventory-conformance verify submission/acme-acme-inventory-2.4.1 --public-key signer.pub.pem',
  '',
  'Flags:',
  '  --product <file>   product.yaml (required)',
  "  --reports <dir>    the run's reports folder (default: REPORTS_DIR, else reports)",
  '  --out <dir>        where the submission folder is written (default: submission); a folder of',
  '                     that name that submit did not write is refused, and nothing else is touched',
  '  --json             print the result, with the typed problems, as JSON on stdout',
  '  --help             this help',
  '',
  'Exit codes:',
  '  0  the submission was written',
  '  1  the run does not conform (the gate or a must-level requirement failed)',
  '  2  refused: usage, product.yaml, the certificate, the suite, the output folder (each reason named)',
  '  4  something the full profile requires was not certified',
  '  5  a key was found in a file of the submission (it was removed)',
  '',
].join('\n');

/** The submit command; returns its exit code. */
export function submitCommand(argv: readonly string[], io: SubmitIo): number {
  const json = argv.includes('--json');
  const redact = redactorFor(secretsFromEnv(io.env));
  const usage = (errors: string[]) => {
    io.stderr(
      redact(
        `inventory-conformance: usage error:\n${errors.map((e) => `  - ${e}\n`).join('')}Run \`inventory-conformance submit --help\` for the flags.\n`,
      ),
    );
    if (json)
      io.stdout(
        `${JSON.stringify({ format: 'inventory-conformance-submit/1', result: 'usage', exitCode: EXIT.usage, problems: [], errors }, null, 2)}\n`,
      );
    return EXIT.usage;
  };
  let values: { product?: string; reports?: string; out?: string; json?: boolean; help?: boolean };
  try {
    const options = {
      product: { type: 'string' },
      reports: { type: 'string' },
      out: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    } as const;
    const parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
    if (parsed.positionals.length) return usage([`unexpected argument(s): ${parsed.positionals.join(' ')}`]);
    values = parsed.values;
  } catch (error) {
    return usage([(error as Error).message.split('\n')[0]!]);
  }
  if (values.help) {
    io.stdout(SUBMIT_HELP);
    return EXIT.pass;
  }
  if (!values.product) return usage(['submit needs --product <product.yaml>']);
  const reportsDir = path.resolve(io.cwd, values.reports ?? readSettings(io.env).values.REPORTS_DIR);
  const outDir = path.resolve(io.cwd, values.out ?? 'submission');
  const result = submit({ productFile: path.resolve(io.cwd, values.product), reportsDir, outDir, secrets: secretsFromEnv(io.env) });
  const code = result.ok ? EXIT.pass : refusalExitCode(result.problems);
  if (json) {
    const doc = result.ok
      ? { format: 'inventory-conformance-submit/1', result: 'written', exitCode: code, dir: result.dir, files: result.files, problems: [] }
      : { format: 'inventory-conformance-submit/1', result: 'refused', exitCode: code, problems: result.problems };
    io.stdout(redact(`${JSON.stringify(doc, null, 2)}\n`));
    return code;
  }
  if (result.ok) io.stdout(`submit: wrote ${path.relative(io.cwd, result.dir) || result.dir}/ (${result.files.join(', ')})\n`);
  else
    io.stderr(
      redact(
        `${result.problems.map((p) => `submit: refused: ${problemLine(p)}\n`).join('')}submit: nothing was submitted (exit ${code})\n`,
      ),
    );
  return code;
}
