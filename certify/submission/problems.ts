/**
 * What stands between a run and a submission anyone can check: one typed problem each, the same
 * for `submit` (which refuses) and `verify <folder>` (which a registry's bot runs and posts).
 */
import { EXIT } from '../../core/exit-codes.ts';
import type { Level } from '../../core/ledger.ts';

/** What kind of problem it is; a registry's bot can act on each. */
export type SubmissionProblemKind =
  /** product.yaml is missing, not YAML, breaks schemas/product.schema.json, or names another deployment than the certificate. */
  | 'product'
  /** A file the submission must hold is missing (or the reports folder lacks one). */
  | 'missing-file'
  /** A file the submission must not hold (anything but its six files and submit's marker). */
  | 'unexpected-file'
  /** A recorded digest does not match (results, certificate, artifacts, the HTML page, the README). */
  | 'digest'
  /** The spec, ledger or interface digest is not the installed harness's. */
  | 'spec'
  /** The suite is not a released version, or not the one installed. */
  | 'suite-version'
  /** Not signed, signed by another key than the one given, or the signature does not match. */
  | 'signature'
  /** Past its validUntil (or recording none). */
  | 'expired'
  /** The run was not --strict. */
  | 'not-strict'
  /** The run's profile was not `full`. */
  | 'profile'
  /** The gate did not pass, or a requirement failed. */
  | 'verdict'
  /** A requirement the full profile requires was not certified. */
  | 'not-certified'
  /** The gate was given known failures (a baseline, or a previous certificate's failures). */
  | 'known-failures'
  /** The target is not a deployment whose TLS was verified (the bundled reference server, INSECURE_TLS). */
  | 'target'
  /** The output folder is not submit's own. */
  | 'output-folder'
  /** A key, or a private key, was found in a file of the submission. */
  | 'secret';

/** One problem, typed: never a string re-parsed later. `reason` is one line in plain words, never a key. */
export interface SubmissionProblem {
  kind: SubmissionProblemKind;
  /** The requirement or the file it concerns, when there is one. */
  id?: string;
  level?: Level;
  expected: string;
  observed: string;
  reason: string;
}

/**
 * `submit`'s exit code for its refusals (core/exit-codes.ts): 1 when the run does not conform, 4
 * when something the full profile requires was not certified, 5 when a key reached a file, 2 for
 * every other refusal (the input cannot be submitted as it is; nothing was written).
 */
export function refusalExitCode(problems: readonly SubmissionProblem[]): number {
  if (problems.some((p) => p.kind === 'secret')) return EXIT.harness;
  if (problems.some((p) => p.kind === 'verdict')) return EXIT.fail;
  if (problems.some((p) => p.kind === 'not-certified')) return EXIT.notCertified;
  return EXIT.usage;
}

/** One line per problem, e.g. `not-certified RL-05 (must): not certified: RATE_LIMIT_KEY is not set`. */
export function problemLine(p: SubmissionProblem): string {
  return `${p.kind}${p.id ? ` ${p.id}` : ''}${p.level ? ` (${p.level})` : ''}: ${p.reason}`;
}
