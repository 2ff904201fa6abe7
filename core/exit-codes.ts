/**
 * The exit codes of `inventory-conformance`, one home for the CLI, its help and the vendor guide.
 * Distinct so that a CI step can tell "the target does not conform" from "we could not judge it".
 */

export const EXIT = {
  /** The gate passed: every must-level requirement the run certifies passed (known failures of a baseline aside). */
  pass: 0,
  /** The target does not conform: a requirement failed (or a new failure beyond the baseline). */
  fail: 1,
  /** Usage error: an unknown flag, a malformed variable, a bad config file. Nothing was run. */
  usage: 2,
  /** The preflight stopped the run (unreachable, TLS, a redirect, no 401 without a key). No key was sent. */
  unreachable: 3,
  /** Strict mode: the run passed, but something was not certified (a missing key, the profile). */
  notCertified: 4,
  /** Harness trouble: a phase timed out or crashed, an internal error, a key found in a report file, another run of the target held it past OTHER_RUN_WAIT_S. */
  harness: 5,
} as const;

export type ExitName = keyof typeof EXIT;

/** A run stopped by a signal before anything was judged exits above this: 128 + the signal's number, as POSIX shells report it. */
export const SIGNAL_EXIT_BASE = 128;

const SIGNAL_NUMBER = { SIGINT: 2, SIGTERM: 15 } as const;

/** The exit status of a run stopped by `signal`: 130 for SIGINT, 143 for SIGTERM. */
export function signalExit(signal: keyof typeof SIGNAL_NUMBER): number {
  return SIGNAL_EXIT_BASE + SIGNAL_NUMBER[signal];
}
export type ExitCode = (typeof EXIT)[ExitName];

/** One line per code, for `--help` and the vendor guide. */
export const EXIT_DESCRIPTIONS: readonly { code: ExitCode; name: ExitName; meaning: string }[] = [
  { code: EXIT.pass, name: 'pass', meaning: 'every must-level requirement the run certifies passed (known failures of --baseline aside)' },
  {
    code: EXIT.fail,
    name: 'fail',
    meaning: 'the target does not conform: a requirement failed (with --baseline: a failure not in the baseline)',
  },
  {
    code: EXIT.usage,
    name: 'usage',
    meaning: 'usage error: unknown flag, malformed value, bad config file, literal key in the config; nothing ran',
  },
  {
    code: EXIT.unreachable,
    name: 'unreachable',
    meaning:
      'the preflight stopped the run: the target did not answer (connection refused, DNS, TLS), redirected, or answered a request without a key other than 401 with an Error body; no key was sent',
  },
  {
    code: EXIT.notCertified,
    name: 'notCertified',
    meaning: '--strict: the checks that ran passed, but something was not certified (missing key, profile)',
  },
  {
    code: EXIT.harness,
    name: 'harness',
    meaning:
      'harness trouble: a phase timed out or ended without a report, an internal error, a key found in a report file, another run of the target on this machine still held it after OTHER_RUN_WAIT_S',
  },
];
