/**
 * `inventory-conformance verify <certificate.json | submission folder>`: recomputes a certificate's
 * digests against this installed harness, checks its signature (`--public-key` pins the signer)
 * and its validity period (`--accept-expired` accepts a certificate past its `validUntil`). A
 * submission folder (written by `submit`) is checked whole (certify/submission/verify.ts).
 * Exit 0 when every check holds, 1 otherwise, 2 on a usage error. `--json` prints the typed
 * problems (and the certificate's checks) on stdout: what a registry's bot posts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { verifyCertificate } from '../certify/certificate/index.ts';
import { problemOfCheck } from '../certify/submission/integrity.ts';
import { problemLine } from '../certify/submission/problems.ts';
import { verifySubmission } from '../certify/submission/verify.ts';
import { EXIT } from '../core/exit-codes.ts';
import { REPO_ROOT } from '../core/paths.ts';

/** What `verify` needs of the command line (parsed by cli/args.ts). */
export interface VerifyArgs {
  positionals: string[];
  own: Record<string, string>;
}

interface VerifyIo {
  stdout: (text: string) => void;
  cwd: string;
}

/** What `verify --help` says beside its flags. */
export const VERIFY_NOTES = [
  'A certificate: its digests (results, the whole certificate, the report files beside it, its HTML page),',
  'the ledger, interface and suite source against this installed harness, the signature, and its',
  'validity period (refused after validUntil unless --accept-expired).',
  'A submission folder (written by `submit`): all of that, plus product.yaml against its schema and',
  "the deployment the certificate certifies, the README and every file's digest, the signer against",
  '--public-key (required), a strict full-profile run with every must-level requirement certified and',
  'passed, no known failures, and a released suite: the version installed here, unmodified.',
  '--json prints {format, subject, ok, exitCode, problems, checks}; each problem is',
  '{kind, id, level, expected, observed, reason}.',
  '',
];

/** The `--json` document's format. */
export const VERIFY_FORMAT = 'inventory-conformance-verify/1';

function verifyFolder(
  io: VerifyIo,
  dir: string,
  shown: string,
  o: { publicKeyPem?: string; now: Date; acceptExpired: boolean; json: boolean },
): number {
  const result = verifySubmission(dir, {
    root: REPO_ROOT,
    now: o.now,
    acceptExpired: o.acceptExpired,
    ...(o.publicKeyPem ? { publicKeyPem: o.publicKeyPem } : {}),
  });
  const code = result.ok ? EXIT.pass : EXIT.fail;
  if (o.json) {
    io.stdout(
      `${JSON.stringify({ format: VERIFY_FORMAT, subject: 'submission', path: shown, ok: result.ok, exitCode: code, problems: result.problems, checks: result.checks }, null, 2)}\n`,
    );
    return code;
  }
  for (const c of result.checks) io.stdout(`${c.ok ? '✓' : '✗'} ${c.name}: ${c.detail}\n`);
  for (const p of result.problems) io.stdout(`problem: ${problemLine(p)}\n`);
  io.stdout(
    result.ok
      ? `verify: submission ${shown} is intact and eligible\n`
      : `verify: submission ${shown} FAILED: ${result.problems.length} problem(s)\n`,
  );
  return code;
}

/** The verify command; `usage` reports a usage error (exit 2) the way the other commands do. */
export function verifyCommand(io: VerifyIo, args: VerifyArgs, usage: (errors: string[]) => number, now: Date = new Date()): number {
  const [file, ...more] = args.positionals;
  if (!file || more.length) return usage(['verify needs exactly one certificate file or submission folder']);
  let publicKeyPem: string | undefined;
  if (args.own['--public-key']) {
    try {
      publicKeyPem = fs.readFileSync(path.resolve(io.cwd, args.own['--public-key']), 'utf8');
    } catch {
      return usage([`--public-key: cannot read ${args.own['--public-key']}`]);
    }
  }
  const target = path.resolve(io.cwd, file);
  if (!fs.existsSync(target)) return usage([`verify: no such file or folder: ${file}`]);
  const acceptExpired = args.own['--accept-expired'] === 'true';
  const json = args.own['--json'] === 'true';
  if (fs.statSync(target).isDirectory())
    return verifyFolder(io, target, file, { now, acceptExpired, json, ...(publicKeyPem ? { publicKeyPem } : {}) });
  const result = verifyCertificate(target, { root: REPO_ROOT, now, acceptExpired, ...(publicKeyPem ? { publicKeyPem } : {}) });
  const unsigned = result.checks.some((c) => c.name === 'signature' && c.ok && c.detail.startsWith('the certificate is not signed'));
  if (json) {
    const problems = result.checks.filter((c) => !c.ok).map(problemOfCheck);
    io.stdout(
      `${JSON.stringify({ format: VERIFY_FORMAT, subject: 'certificate', path: file, ok: result.ok, exitCode: result.ok ? EXIT.pass : EXIT.fail, problems, checks: result.checks }, null, 2)}\n`,
    );
  } else {
    // An unsigned certificate passes the signature check without proving anything: no ✓ for it.
    const mark = (c: (typeof result.checks)[number]) => (!c.ok ? '✗' : unsigned && c.name === 'signature' ? '○' : '✓');
    for (const c of result.checks) io.stdout(`${mark(c)} ${c.name}: ${c.detail}\n`);
    io.stdout(
      result.ok
        ? `verify: ${file} is intact${unsigned ? ' (unsigned: self-consistent, its origin is not proven)' : ''}\n`
        : `verify: ${file} FAILED: ${result.checks
            .filter((c) => !c.ok)
            .map((c) => c.name)
            .join(', ')}\n`,
    );
  }
  return result.ok ? EXIT.pass : EXIT.fail;
}
