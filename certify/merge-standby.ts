/**
 * `playwright merge-reports`, loaded ahead of time: loading Playwright's command line takes about a
 * second of the one core a run has left at its end, and merging the blobs takes less than half of
 * that. A standby process loads it while the last phase still runs, then waits for one line on its
 * standard input before it merges. Told nothing, it merges nothing: it ends when its input closes
 * (certify ended, however it ended) or when it is stopped.
 *
 * The merge is the same command with the same arguments and environment as `mergeReports`, which
 * is what runs when the standby cannot (it is gone, or was never started).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { playwrightEnv } from '../core/playwright-env.ts';
import { mergeArgs, mergeEnv, mergeReports, PLAYWRIGHT_CLI, REPO_ROOT } from './phases.ts';

const require = createRequire(PLAYWRIGHT_CLI);
/** The module `@playwright/test`'s command line runs (`playwright/lib/program`, an entry point its package exports). */
const PROGRAM = require.resolve('playwright/lib/program');

/**
 * The standby's code (`node -e`): loads the program now; on the first line of its input, parses the
 * command line it was given, as `@playwright/test/cli.js` would. Its input is all that keeps it
 * alive until then: when the input ends first, so does the standby.
 */
const STANDBY_SOURCE = `
const [program, ...args] = process.argv.slice(1);
const { program: cli } = require(program);
let told = false;
process.stdin.on('data', (chunk) => {
  if (told || !String(chunk).includes('\\n')) return;
  told = true;
  process.stdin.destroy();
  cli.parse([process.argv[0], 'playwright', ...args]);
});
`;

/** A merge whose process is already loaded; `merge()` runs it once, `cancel()` ends it unused. */
export interface MergeStandby {
  /** The standby's process (undefined if it could not be started). */
  readonly pid: number | undefined;
  merge(): Promise<{ ok: boolean; output: string }>;
  cancel(): void;
}

/**
 * Starts a standby for merging `blobDir` into `reportsDir` (see `mergeReports`): same command,
 * same environment, same deadline. `merge()` falls back to `mergeReports` when the standby has
 * already ended (a signal reached it, it failed to load).
 */
export function standbyMerge(
  blobDir: string,
  reportsDir: string,
  env: Record<string, string | undefined>,
  redact: (s: string) => string,
  { cwd = REPO_ROOT, timeoutMs = 120_000 }: { cwd?: string; timeoutMs?: number } = {},
): MergeStandby {
  const child: ChildProcess = spawn(process.execPath, ['-e', STANDBY_SOURCE, PROGRAM, ...mergeArgs(blobDir)], {
    cwd,
    env: playwrightEnv(mergeEnv(env, reportsDir, cwd), { FORCE_COLOR: '0' }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  // A write to a standby that has ended is not an error of the run: the merge falls back.
  child.stdin?.on('error', () => undefined);
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  let used = false;
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    pid: child.pid,
    async merge() {
      if (used || !alive()) return mergeReports(blobDir, reportsDir, env, redact, cwd);
      used = true;
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, timeoutMs);
      child.stdin?.end('merge\n');
      const { code, signal } = await closed;
      clearTimeout(timer);
      // Stopped by a signal that was not the deadline's (a Ctrl-C reaches the whole group): merge anew.
      if (signal && !timedOut) return mergeReports(blobDir, reportsDir, env, redact, cwd);
      return { ok: code === 0, output: `${redact(stdout)}${redact(stderr)}` };
    },
    cancel() {
      used = true;
      if (alive()) child.kill('SIGKILL');
    },
  };
}
