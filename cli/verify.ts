/**
 * `inventory-conformance verify <certificate.json | submission folder>`: recomputes a certificate's
 * digests against this installed harness, checks its signature (`--public-key` pins the signer)
 * and its validity period (`--accept-expired` accepts a certificate past its `validUntil`).
 * Exit 0 when every check holds, 1 otherwise, 2 on a usage error. `--json` prints the checks and
 * the typed problems on stdout.
 */
import fs from 'node:fs';
import path from 'node:path';
import { verifyCertificate } from '../certify/certificate/index.ts';
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
  if (!fs.existsSync(path.resolve(io.cwd, file))) return usage([`verify: no such file: ${file}`]);
  const acceptExpired = args.own['--accept-expired'] === 'true';
  const result = verifyCertificate(path.resolve(io.cwd, file), { root: REPO_ROOT, now, acceptExpired, ...(publicKeyPem ? { publicKeyPem } : {}) });
  const unsigned = result.checks.some((c) => c.name === 'signature' && c.ok && c.detail.startsWith('the certificate is not signed'));
  if (args.own['--json'] === 'true') io.stdout(`${JSON.stringify(result, null, 2)}\n`);
  else {
    for (const c of result.checks) io.stdout(`${c.ok ? '✓' : '✗'} ${c.name}: ${c.detail}\n`);
    io.stdout(result.ok ? `verify: ${file} is intact${unsigned ? ' (unsigned: self-consistent, its origin is not proven)' : ''}\n` : `verify: ${file} FAILED: ${result.checks.filter((c) => !c.ok).map((c) => c.name).join(', ')}\n`);
  }
  return result.ok ? EXIT.pass : EXIT.fail;
}
