/**
 * The conformance run as one `playwright test` process, every phase a project opened in turn by certify's reporter,
 * every reporter after `redact-reporter.ts` (docs/architecture.md, "Phases: one Playwright run").
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { codeFile, REPO_ROOT } from '../core/paths.ts';
import { playwrightEnv } from '../core/playwright-env.ts';

const require = createRequire(import.meta.url);
export const PLAYWRIGHT_CLI = require.resolve('@playwright/test/cli');
export { REPO_ROOT };
export const REDACT_REPORTER = codeFile('certify/redact-reporter');
export const CONSOLE_REPORTER = codeFile('certify/console-reporter');
export const PHASE_REPORTER = codeFile('certify/phase-reporter');

export interface PhaseResult {
  phase: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  durationMs: number;
  timedOut: boolean;
  /** The run's reporter wrote the phase's records (it ended, or the run ended with it). */
  reportWritten: boolean;
  /** Last lines of the phase's (redacted) console output, for a phase that ended without a report. */
  tail: string[];
  /** Seconds its checks spent waiting for rate-limit windows (Retry-After, Reset), from their records. */
  waitedS?: number;
  /** Its checks by outcome (none when it has no report). */
  counts?: PhaseCounts;
}

/** A phase's checks by Playwright's outcome (expected, unexpected, flaky, skipped). */
export interface PhaseCounts {
  passed: number;
  failed: number;
  flaky: number;
  skipped: number;
}

/**
 * Seconds the checks of `phase` spent waiting for rate-limit windows, from the records they wrote
 * under `${reportsDir}/load/` (each names its phase and its waits).
 */
export function windowWaitsOf(reportsDir: string | undefined, phase: string): number | undefined {
  if (!reportsDir) return undefined;
  const dir = path.join(reportsDir, 'load');
  let total: number | undefined;
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir).filter((n) => n.endsWith('.json'));
  } catch {
    return undefined;
  }
  for (const name of names) {
    try {
      const record = JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as { phase?: unknown; spent?: { waitedS?: unknown } };
      if (record.phase === phase && typeof record.spent?.waitedS === 'number') total = (total ?? 0) + record.spent.waitedS;
    } catch {
      // A record being written or unreadable: its waits are not counted.
    }
  }
  return total === undefined ? undefined : Math.round(total * 10) / 10;
}

/**
 * Line-buffered filter for a child's output: every complete line goes through `redact`; a partial
 * line is held back (at most `holdMs`, then written except for its last `keep` characters, which
 * could be the start of a key).
 */
export function lineFilter(redact: (s: string) => string, write: (s: string) => void, keep = 512, holdMs = 1000) {
  let buffer = '';
  let timer: NodeJS.Timeout | undefined;
  // Chunks may end inside a multi-byte character (the list reporter prints ✓ and ✘).
  const decoder = new StringDecoder('utf8');
  const flushPartial = () => {
    timer = undefined;
    if (buffer.length > keep) {
      const redacted = redact(buffer);
      // Only release what cannot be the beginning of a secret split across chunks.
      if (redacted === buffer) {
        write(buffer.slice(0, buffer.length - keep));
        buffer = buffer.slice(buffer.length - keep);
      }
    }
  };
  return {
    push(chunk: Buffer | string) {
      buffer += typeof chunk === 'string' ? chunk : decoder.write(chunk);
      const nl = buffer.lastIndexOf('\n');
      if (nl >= 0) {
        write(redact(buffer.slice(0, nl + 1)));
        buffer = buffer.slice(nl + 1);
      }
      if (timer) clearTimeout(timer);
      if (buffer) timer = setTimeout(flushPartial, holdMs);
    },
    end() {
      if (timer) clearTimeout(timer);
      buffer += decoder.end();
      if (buffer) write(redact(buffer) + (buffer.endsWith('\n') ? '' : '\n'));
      buffer = '';
    },
  };
}

/** What the one run of the phases is given. */
export interface RunOptions {
  /** The phases (projects) to run, in order. */
  phases: readonly string[];
  configFile: string;
  /** Complete environment of the run (keys included; never printed). */
  env: Record<string, string | undefined>;
  /** certify's own settings for the run (the phase files, the report files), over `env`. */
  own: Record<string, string>;
  /** The run's reporters after the redaction and the console (the phases' reporter; html, junit, json when asked). */
  reporters: string[];
  /** Playwright's --global-timeout; the process is stopped 30 s after it. */
  timeoutS: number;
  /** Already-redacting sink for console lines. */
  write: (text: string) => void;
  /** Every check as it ends (`list`); otherwise only the run's own errors (`console-reporter.ts`). */
  verbose?: boolean;
  cwd?: string;
  /** Aborting stops the run. */
  signal?: AbortSignal;
  /** Further Playwright arguments (location filters, `--grep`, `--max-failures`). */
  extraArgs?: string[];
}

/** How the run's process ended, and its last lines of (redacted) output. */
export interface RunEnd {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** The process was stopped 30 s past its global timeout. */
  timedOut: boolean;
  tail: string[];
}

/** The run's reporters: the redaction first, then the console (`list` when verbose, else ours), then `others`. */
export function runReporters(verbose: boolean | undefined, others: readonly string[]): string[] {
  return [REDACT_REPORTER, verbose ? 'list' : CONSOLE_REPORTER, ...others];
}

function playwrightArgs(o: RunOptions): string[] {
  const reporters = runReporters(o.verbose, o.reporters);
  return [
    PLAYWRIGHT_CLI,
    'test',
    '--config',
    o.configFile,
    ...o.phases.map((p) => `--project=${p}`),
    `--reporter=${reporters.join(',')}`,
    '--trace=off',
    '--pass-with-no-tests',
    `--global-timeout=${o.timeoutS * 1000}`,
    ...(o.extraArgs ?? []),
  ];
}

/** Runs the phases as one Playwright process; never throws for a failing or crashing run. */
export function runOnce(o: RunOptions, redact: (s: string) => string): Promise<RunEnd> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, playwrightArgs(o), {
      cwd: o.cwd ?? REPO_ROOT,
      env: playwrightEnv(o.env, { ...o.own, FORCE_COLOR: '0' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const tail: string[] = [];
    const sink = (s: string) => {
      o.write(s);
      for (const line of s.split('\n')) if (line.trim()) tail.push(line.trim());
      if (tail.length > 8) tail.splice(0, tail.length - 8);
    };
    const out = lineFilter(redact, sink);
    const err = lineFilter(redact, sink);
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    // The child stays in certify's process group, so whoever stops certify's group (Ctrl-C, a CI
    // timeout, a harness) stops the run too. SIGINT lets Playwright stop its tests and still write
    // its reports; SIGTERM and SIGKILL follow if it does not end.
    // A Ctrl-C in a terminal reaches the child directly, and a second SIGINT makes Playwright quit
    // without its reports: so the child gets its own SIGINT only if it is still running 2 s later.
    let exited = false;
    const stop = (graceMs = 2000) => {
      const send = (signal: NodeJS.Signals) => {
        if (!exited) child.kill(signal);
      };
      setTimeout(() => send('SIGINT'), graceMs).unref();
      setTimeout(() => send('SIGTERM'), graceMs + 10_000).unref();
      setTimeout(() => send('SIGKILL'), graceMs + 15_000).unref();
    };
    const onAbort = () => stop();
    o.signal?.addEventListener('abort', onAbort, { once: true });
    let timedOut = false;
    // Backstop beyond Playwright's own --global-timeout.
    const killer = setTimeout(
      () => {
        timedOut = true;
        sink(`  ✗ the run exceeded its time limit (${o.timeoutS} s, from PHASE_TIMEOUT_S); stopping it\n`);
        stop(0);
      },
      o.timeoutS * 1000 + 30_000,
    );
    child.on('exit', () => {
      exited = true;
    });
    child.on('close', (exitCode, signal) => {
      exited = true;
      o.signal?.removeEventListener('abort', onAbort);
      clearTimeout(killer);
      out.end();
      err.end();
      resolve({ exitCode, signal, timedOut, tail });
    });
  });
}

/**
 * Runs a Playwright CLI command to completion, capturing its output (for --list):
 * in `env` without Playwright's own settings, plus `own` (`playwrightEnv`), killed past `timeoutMs`.
 */
export function runPlaywright(
  args: string[],
  env: Record<string, string | undefined>,
  redact: (s: string) => string,
  { cwd = REPO_ROOT, timeoutMs = 120_000, own = {} }: { cwd?: string; timeoutMs?: number; own?: Record<string, string> } = {},
): Promise<{ exitCode: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [PLAYWRIGHT_CLI, ...args], {
      cwd,
      env: playwrightEnv(env, { ...own, FORCE_COLOR: '0' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      resolve({ exitCode, stdout: redact(stdout), stderr: redact(stderr) });
    });
  });
}

/** Lists the tests of some phases without running them (one `playwright test --list`), as a JSON report. */
export async function listPhases(
  phases: string[],
  configFile: string,
  env: Record<string, string | undefined>,
  redact: (s: string) => string,
  outFile: string,
  cwd = REPO_ROOT,
): Promise<unknown | undefined> {
  fs.mkdirSync(path.dirname(outFile), { recursive: true });
  const { exitCode } = await runPlaywright(
    ['test', '--config', configFile, ...phases.map((p) => `--project=${p}`), '--list', '--reporter=json', '--pass-with-no-tests'],
    env,
    redact,
    { cwd, own: { PLAYWRIGHT_JSON_OUTPUT_FILE: outFile } },
  );
  if (exitCode !== 0 || !fs.existsSync(outFile)) return undefined;
  try {
    return JSON.parse(fs.readFileSync(outFile, 'utf8'));
  } catch {
    return undefined;
  }
}
