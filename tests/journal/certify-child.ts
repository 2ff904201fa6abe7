/**
 * A certify run in a process of its own, so that a test can kill it (SIGKILL: no handler runs)
 * at a chosen moment. argv: <playwright config, or `-` for the repository's> [phases, comma
 * separated; default `functional`] [requirements ledger]; the run's variables come from the environment.
 * Exits with certify's exit code.
 */
import { runCertify } from '../../certify/run.ts';

const [configFile, phases, ledgerFile] = process.argv.slice(2);
const { exitCode: code } = await runCertify({
  env: process.env,
  write: (t) => process.stdout.write(t),
  ...(configFile && configFile !== '-' ? { configFile } : {}),
  onlyPhases: (phases ?? 'functional').split(','),
  ...(ledgerFile ? { ledgerFile } : {}),
});
process.exit(code);
