/**
 * Orchestration of the conformance run: one `playwright test --project=<phase>` child process per
 * phase, in order, so that a failing phase never stops the next (project `dependencies` would skip
 * them). Each phase writes its own JSON report, which the verdict reads, and, in a run that builds
 * the HTML report, a blob report: `playwright merge-reports` then builds the HTML report,
 * `junit.xml` and `results.json` from all blobs in one pass.
 *
 * Every child writes through `redact-reporter.ts` first, and the parent filters the children's
 * console output, so no key reaches the console or a report.
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
export const MERGE_CONFIG = codeFile('certify/merge.config');

export interface PhaseOptions {
  phase: string;
  /** Playwright config (default: the root `playwright.config.ts`). */
  configFile: string;
  /** Complete environment of the child (keys included; never printed). */
  env: Record<string, string | undefined>;
  /**
   * The phase's blob report, for `playwright merge-reports`; none in a run that merges no reports
   * (writing one costs a short phase about 0.4 CPU-s, measured on the fault matrix's cases).
   */
  blobFile?: string;
  /** The phase's own JSON report (Playwright's `json` reporter): the verdict reads it, merged or not. */
  jsonFile?: string;
  outputDir: string;
  workers?: string;
  timeoutS: number;
  /** Already-redacting sink for console lines. */
  write: (text: string) => void;
  /**
   * Every check as it ends and the checks' own output (Playwright's `list` reporter), and a "still
   * running" line after `heartbeatS` of silence; otherwise only the phase's own errors (`console-reporter.ts`).
   */
  verbose?: boolean;
  /** Seconds of silence before a "still running" line of a verbose console (default 15). */
  heartbeatS?: number;
  cwd?: string;
  /** Aborting stops the phase. */
  signal?: AbortSignal;
  /** Further Playwright arguments (for tools, e.g. the orchestration benchmark's `--grep`). */
  extraArgs?: string[];
}

export interface PhaseResult {
  phase: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  durationMs: number;
  timedOut: boolean;
  /** The phase wrote its report: its blob when it was given one, else its JSON report. */
  reportWritten: boolean;
  /** Last lines of the phase's (redacted) console output, for a phase that ended without a report. */
  tail: string[];
  /** Seconds its checks spent waiting for rate-limit windows (Retry-After, Reset), from their records. */
  waitedS?: number;
  /** Its checks by outcome, from its JSON report (none when it wrote none). */
  counts?: PhaseCounts;
}

/** A phase's checks by outcome (Playwright's JSON report's `stats`). */
export interface PhaseCounts {
  passed: number;
  failed: number;
  flaky: number;
  skipped: number;
}

/** The counts of a phase's JSON report, or undefined when it has none that reads. */
export function phaseCountsOf(jsonFile: string | undefined): PhaseCounts | undefined {
  if (!jsonFile) return undefined;
  try {
    const stats = (JSON.parse(fs.readFileSync(jsonFile, 'utf8')) as { stats?: Record<string, unknown> }).stats;
    const n = (k: string) => (typeof stats?.[k] === 'number' ? (stats[k] as number) : 0);
    return stats ? { passed: n('expected'), failed: n('unexpected'), flaky: n('flaky'), skipped: n('skipped') } : undefined;
  } catch {
    return undefined;
  }
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

/** A phase's reporters: the redaction first, then the console (`list` when verbose, else ours), the blob and the JSON report. */
export function phaseReporters(o: Pick<PhaseOptions, 'verbose' | 'blobFile' | 'jsonFile'>): string[] {
  return [REDACT_REPORTER, o.verbose ? 'list' : CONSOLE_REPORTER, ...(o.blobFile ? ['blob'] : []), ...(o.jsonFile ? ['json'] : [])];
}

function playwrightArgs(o: PhaseOptions): string[] {
  const args = [
    PLAYWRIGHT_CLI,
    'test',
    '--config',
    o.configFile,
    `--project=${o.phase}`,
    `--reporter=${phaseReporters(o).join(',')}`,
    `--output=${o.outputDir}`,
    '--trace=off',
    '--pass-with-no-tests',
    `--global-timeout=${o.timeoutS * 1000}`,
  ];
  if (o.workers) args.push(`--workers=${o.workers}`);
  if (o.extraArgs) args.push(...o.extraArgs);
  return args;
}

/** Runs one phase as a child process; never throws for a failing or crashing phase. */
export function runPhase(o: PhaseOptions, redact: (s: string) => string): Promise<PhaseResult> {
  const started = Date.now();
  if (o.blobFile) fs.mkdirSync(path.dirname(o.blobFile), { recursive: true });
  return new Promise((resolve) => {
    const child = spawn(process.execPath, playwrightArgs(o), {
      cwd: o.cwd ?? REPO_ROOT,
      env: playwrightEnv(o.env, {
        ...(o.blobFile ? { PLAYWRIGHT_BLOB_OUTPUT_FILE: o.blobFile } : {}),
        ...(o.jsonFile ? { PLAYWRIGHT_JSON_OUTPUT_FILE: o.jsonFile } : {}),
        FORCE_COLOR: '0',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let lastOutput = Date.now();
    const tail: string[] = [];
    const sink = (s: string) => {
      lastOutput = Date.now();
      o.write(s);
      for (const line of s.split('\n')) if (line.trim()) tail.push(line.trim());
      if (tail.length > 8) tail.splice(0, tail.length - 8);
    };
    const out = lineFilter(redact, sink);
    const err = lineFilter(redact, sink);
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    const heartbeatMs = (o.heartbeatS ?? 15) * 1000;
    const heartbeat = setInterval(() => {
      if (o.verbose && Date.now() - lastOutput >= heartbeatMs) {
        const s = Math.round((Date.now() - started) / 1000);
        sink(`  … phase ${o.phase} still running (${s} s, ${Math.max(0, o.timeoutS - s)} s left of PHASE_TIMEOUT_S)\n`);
      }
    }, 1000);
    // The child stays in certify's process group, so whoever stops certify's group (Ctrl-C, a CI
    // timeout, a harness) stops the phase too. SIGINT lets Playwright stop its tests and still write
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
        sink(`  ✗ phase ${o.phase} exceeded PHASE_TIMEOUT_S=${o.timeoutS}; stopping it\n`);
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
      clearInterval(heartbeat);
      clearTimeout(killer);
      out.end();
      err.end();
      resolve({
        phase: o.phase,
        exitCode,
        signal,
        durationMs: Date.now() - started,
        timedOut,
        reportWritten: fs.existsSync(o.blobFile ?? o.jsonFile ?? ''),
        tail,
        ...(() => {
          const waitedS = windowWaitsOf(o.env.REPORTS_DIR, o.phase);
          return waitedS === undefined ? {} : { waitedS };
        })(),
        ...(() => {
          const counts = phaseCountsOf(o.jsonFile);
          return counts ? { counts } : {};
        })(),
      });
    });
  });
}

/**
 * Runs a Playwright CLI command to completion, capturing its output (for --list and merge-reports):
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

/** The arguments of `playwright merge-reports` for the blobs of `blobDir` (certify's merge config). */
export function mergeArgs(blobDir: string): string[] {
  return ['merge-reports', '--config', MERGE_CONFIG, blobDir];
}

/** The merge's environment: `env` and where the merge config writes (`reportsDir`) and finds the tests (`cwd`). */
export function mergeEnv(env: Record<string, string | undefined>, reportsDir: string, cwd: string): Record<string, string | undefined> {
  return { ...env, CERTIFY_REPORTS_DIR: path.resolve(reportsDir), CERTIFY_ROOT_DIR: cwd };
}

/** Merges every blob in `blobDir` into the HTML report, junit.xml and results.json under `reportsDir`. */
export async function mergeReports(
  blobDir: string,
  reportsDir: string,
  env: Record<string, string | undefined>,
  redact: (s: string) => string,
  cwd = REPO_ROOT,
): Promise<{ ok: boolean; output: string }> {
  const { exitCode, stdout, stderr } = await runPlaywright(mergeArgs(blobDir), mergeEnv(env, reportsDir, cwd), redact, { cwd });
  return { ok: exitCode === 0, output: `${stdout}${stderr}` };
}
