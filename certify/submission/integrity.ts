/**
 * A certificate's integrity as typed problems: `verifyCertificate`'s failing checks (digests,
 * spec, suite, signature, expiry), and the installed harness it is judged against.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadLedger } from '../../core/ledger.ts';
import { manifestDigest, suiteManifest } from '../certificate/digest.ts';
import { verifyCertificate, type VerifyCheck, type VerifyOptions } from '../certificate/verify.ts';
import type { SubmissionProblem, SubmissionProblemKind } from './problems.ts';
import type { InstalledHarness } from './rules.ts';

/** The harness at `root` (this installation by default): its version, suite digest and ledger. */
export function installedHarness(root: string): InstalledHarness {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version?: string };
  return {
    version: pkg.version ?? '0.0.0',
    suiteDigest: manifestDigest(suiteManifest(root)),
    requirements: loadLedger(path.join(root, 'suites', 'requirements.yaml')),
  };
}

function kindOf(check: VerifyCheck): SubmissionProblemKind {
  if (check.name === 'signature') return 'signature';
  if (check.name === 'expiry') return 'expired';
  if (check.name === 'suite') return 'suite-version';
  if (check.name === 'spec' || check.name === 'ledger' || check.name === 'interface') return 'spec';
  if (check.name === 'read' || check.name === 'format') return 'missing-file';
  return 'digest';
}

/** A failing check of `verifyCertificate` as a typed problem. */
export function problemOfCheck(check: VerifyCheck): SubmissionProblem {
  return {
    kind: kindOf(check),
    id: check.name,
    expected: check.name === 'expiry' ? 'within its validity period' : 'as recorded',
    observed: check.detail,
    reason: check.detail,
  };
}

/** Recomputes the certificate's digests, signature and expiry; returns the checks and their failures as problems. */
export function certificateIntegrity(file: string, options: VerifyOptions): { checks: VerifyCheck[]; problems: SubmissionProblem[] } {
  const { checks } = verifyCertificate(file, options);
  return { checks, problems: checks.filter((c) => !c.ok).map(problemOfCheck) };
}
