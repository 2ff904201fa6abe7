/** What the run prints: every line through `say`, which redacts the run's keys; `detail` only on a verbose console. */
import { redactorFor, secretsFromEnv } from '../../core/secrets.ts';

export interface RunConsole {
  secrets: ReturnType<typeof secretsFromEnv>;
  redact: (text: string) => string;
  say: (text: string) => void;
  verbose: boolean;
  /** Said only when verbose (CONFORMANCE_VERBOSE, `--verbose`): every check, progress, each key's pacing. */
  detail: (text: string) => void;
}

/** The console of a run on `targetEnv`: its keys, their redaction, `say` and `detail`. */
export function consoleFor(targetEnv: Record<string, string | undefined>, write: (text: string) => void, verbose = false): RunConsole {
  const secrets = secretsFromEnv(targetEnv);
  const redact = redactorFor(secrets);
  const say = (text: string) => write(redact(text));
  return { secrets, redact, say, verbose, detail: verbose ? say : () => undefined };
}
