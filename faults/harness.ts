import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Phase } from '../certify/env.ts';
import type { ReferenceTarget } from '../certify/reference-target.ts';
import { startCaseReference } from './reference.ts';
import { startFaultProxy, throughProxy, type FaultHooks, type RunningFaultProxy } from './proxy.ts';
import type { RetryStats } from './retry-watch.ts';
import type { RateLimitStore } from '../reference-server/rate-limit/store.ts';
import { REPO_ROOT } from '../core/paths.ts';
import type { RunProblem } from '../core/results.ts';
import { SOURCE_TREE, type HarnessTree } from './tree.ts';

/**
 * Runs one case of the fault matrix: the bundled reference server (optionally with a limiter
 * store), the fault proxy in front of it (optionally with hooks), and a `certify` run pointed at
 * the proxy: every phase through the CLI's `certify` as a child process, exactly as a user runs
 * it, or some phases through certify's own `runCertify` in this process (`phases`), both from the
 * sources of this clone or from a tree compiled from them (`RunCaseOptions.tree`). Returns
 * certify's verdict and the failing requirement ids from `conformance.json`.
 */

export { REPO_ROOT };
/** `inventory-conformance certify`, exactly as a user runs it from a clone (`npm run certify`). */
export const CERTIFY_CLI: readonly string[] = SOURCE_TREE.certifyCli;

/**
 * The bundled reference server's "per minute" window for a second run of a case whose first run
 * left requirements not certified (the fault matrix's `inconclusiveIds`, the staging runs): four
 * times a case's 5 s (`CASE_WINDOW_MS`). The first run could not keep a short window's timing (counting a key to its
 * limit took longer than the window, measured on a busy CI machine); the second gives the same
 * server more time, and what it finds holds whatever the window's length.
 */
export const SECOND_RUN_WINDOW_MS = 20_000;

export interface MatrixCase {
  /** `fault:<name>`, `variant:<name>` or `baseline`. */
  id: string;
  proxy?: () => FaultHooks;
  store?: () => RateLimitStore;
  /** Starts the deployment under test in place of the bundled reference server (the proxy goes in front of it). */
  upstream?: () => Promise<ReferenceTarget>;
  /** `readonly` runs only the functional phase (no @mutates, @exhausts, @load checks). */
  profile?: 'full' | 'readonly';
  /**
   * Run only these certify phases (certify's `runCertify` in this process, with `onlyPhases`);
   * default: all of them, through `cli/bin.mjs certify` exactly as a user runs it.
   */
  phases?: string[];
  /**
   * Run only these tests of its phases (`file:line` of `suites/`, through certify's `onlyTests`);
   * only with `phases`. Default: every test of the phases.
   */
  tests?: string[];
  /** Of the tests at `tests`, only those with these exact titles (certify's `onlyTitles`); only with `tests`. */
  titles?: string[];
  /**
   * Each phase stops after this many failed tests (certify's `maxFailures`); only with `tests`.
   * Default: every test runs.
   */
  maxFailures?: number;
  /** Extra environment for this case's certify run (wins over `RunCaseOptions.env`). */
  env?: Record<string, string>;
  /** Where the faulty deployment serves the inventory instead of `/v1`; `BASE_URL` is the proxy plus this path. */
  basePath?: string;
  /** The proxy sends `Connection: close` on every response and closes the connection after it. */
  connectionClose?: boolean;
}

export interface CaseOutcome {
  id: string;
  verdict: 'pass' | 'fail' | 'missing';
  failing: string[];
  /** Failing requirements with a test that ran and failed (a fault's catch; not one only a stop left without a result). */
  caught: string[];
  /** Requirements with status `fail`, with their first reason (for failure messages; no keys). */
  reasons: Record<string, string>;
  /** Failing requirements that no test evidenced (their phase was not run): never a catch. */
  unevidenced: string[];
  exitCode: number | null;
  durationMs: number;
  /** Where certify wrote its reports (removed by `cleanup`). */
  reportsDir: string;
  /** Last lines of certify's output (already redacted by certify). */
  tail: string;
  problems: string[];
  /** What the proxy counted: requests sent on a key while its 429's Retry-After was pending, bans, 429s (per key label). */
  retry: RetryStats;
  /** Requirements left not certified, with their reason (no keys). */
  notCertified: Record<string, string>;
  /** What the run-wide pacer saw of another consumer of a key's limit (conformance.json `pacing[].anotherClient`). */
  otherClients: string[];
  /** Other certifications of the target on this machine it waited for, or that waited for it (conformance.json `otherRuns`), by pid. */
  otherRuns: { waitedFor: number[]; waitedForThis: number[] };
}

export interface RunCaseOptions {
  /** Extra environment for certify (e.g. `WORKERS`, `LOAD_DURATION_S`). */
  env?: Record<string, string>;
  /** Hard limit on the certify run (default 240 s); past it a child is killed, an in-process run stopped as by Ctrl-C. */
  timeoutMs?: number;
  /** Parent directory of the case's REPORTS_DIR (default: the OS temp dir). */
  workDir?: string;
  /** The harness that certifies (default: the sources of this clone, `SOURCE_TREE`). */
  tree?: HarnessTree;
  /**
   * Length of the bundled reference server's "per minute" window (default: `CASE_WINDOW_MS`, 5 s); a case
   * with its own `upstream` keeps that deployment's. Longer windows give a busy runner more time
   * to count a key to its limit inside one window.
   */
  minuteWindowMs?: number;
  /**
   * Stops the certify run as Ctrl-C would (its phases get SIGINT, a child certify SIGINT, then
   * SIGKILL 30 s later); the outcome is then whatever the run wrote, usually `missing`.
   */
  signal?: AbortSignal;
}

interface ConformanceJson {
  verdict?: string;
  problems?: RunProblem[];
  requirements?: Array<{ id: string; status: string; reason?: string; evidence?: Array<{ outcome?: string; errors?: string[] }> }>;
  pacing?: Array<{ key: string; anotherClient?: string }>;
  otherRuns?: { waitedFor?: Array<{ pid: number }>; waitedForThis?: Array<{ pid: number }> };
}

/** A case's target with the fault proxy in front of it (`close` stops both). */
export interface CaseTarget {
  target: ReferenceTarget;
  proxy: RunningFaultProxy;
  close(): Promise<void>;
}

/**
 * Starts a case's target (the bundled reference server, with its store and `minuteWindowMs`, or
 * its own upstream) and the proxy in front of it.
 */
export async function startCaseTarget(c: MatrixCase, options: Pick<RunCaseOptions, 'minuteWindowMs'> = {}): Promise<CaseTarget> {
  const target = c.upstream
    ? await c.upstream()
    : await startCaseReference({
        ...(c.store ? { server: { store: c.store() } } : {}),
        ...(options.minuteWindowMs ? { minuteWindowMs: options.minuteWindowMs } : {}),
      });
  const proxy = await startFaultProxy({
    upstream: target.server.baseUrl.replace(/\/v1\/?$/, ''),
    fault: c.proxy?.(),
    env: target.env,
    ...(c.connectionClose ? { connectionClose: true } : {}),
  });
  return {
    target,
    proxy,
    async close() {
      await proxy.close();
      await target.close();
    },
  };
}

/** Runs one case to the end and cleans up the servers (not the reports directory). */
export async function runCase(c: MatrixCase, options: RunCaseOptions = {}): Promise<CaseOutcome> {
  const started = Date.now();
  const t = await startCaseTarget(c, options);
  try {
    const outcome = await certifyCase(c, t, options);
    outcome.durationMs = Date.now() - started;
    return outcome;
  } finally {
    await t.close();
  }
}

/** One `certify` run of case `c` against a running target (several may run at once against one target). */
export async function certifyCase(c: MatrixCase, t: CaseTarget, options: RunCaseOptions = {}): Promise<CaseOutcome> {
  const started = Date.now();
  const reportsDir = fs.mkdtempSync(path.join(options.workDir ?? os.tmpdir(), `matrix-${c.id.replace(/[^\w-]+/g, '_')}-`));
  const env: Record<string, string | undefined> = {
    ...inheritedEnv(),
    ...throughProxy(t.target.env, t.proxy.url),
    ...(c.basePath ? { BASE_URL: t.proxy.url.replace(/\/$/, '') + c.basePath } : {}),
    CONFORMANCE_PROFILE: c.profile ?? 'full',
    REPORTS_DIR: reportsDir,
    ...options.env,
    ...c.env,
  };
  // The case's own folder of turns: a fault may leave a 429 pending for long after the run (a
  // Retry-After in milliseconds reads as half an hour), and a later server on the same free port
  // is another target. It goes with the case.
  const lockDir = c.phases ? fs.mkdtempSync(path.join(options.workDir ?? os.tmpdir(), 'matrix-turns-')) : undefined;
  const timeoutMs = options.timeoutMs ?? 240_000;
  const tree = options.tree ?? SOURCE_TREE;
  const { code, output } = await (lockDir
    ? certifyPhases(c, env, lockDir, timeoutMs, tree, options.signal)
    : spawnCertify(tree.certifyCli, env, timeoutMs, options.signal)
  ).finally(() => {
    if (lockDir) fs.rmSync(lockDir, { recursive: true, force: true });
  });
  const outcome: CaseOutcome = {
    id: c.id,
    verdict: 'missing',
    failing: [],
    caught: [],
    reasons: {},
    unevidenced: [],
    exitCode: code,
    durationMs: 0,
    reportsDir,
    tail: output.split('\n').slice(-40).join('\n'),
    problems: [],
    retry: t.proxy.stats(),
    notCertified: {},
    otherClients: [],
    otherRuns: { waitedFor: [], waitedForThis: [] },
  };
  const file = path.join(reportsDir, 'conformance.json');
  if (fs.existsSync(file)) readReport(JSON.parse(fs.readFileSync(file, 'utf8')) as ConformanceJson, outcome);
  outcome.durationMs = Date.now() - started;
  return outcome;
}

/**
 * A certify run of some phases of `c` (`phases`, and its `tests`, `titles` and `maxFailures`)
 * through certify's own `runCertify`, in this process: the matrix reads the verdict only
 * (`verdictOnly`). Past `timeoutMs`, or once `signal` aborts, the run is stopped as by Ctrl-C (its
 * phases get SIGINT, then SIGTERM and SIGKILL), and 30 s later it is given up on.
 */
async function certifyPhases(
  c: MatrixCase,
  env: Record<string, string | undefined>,
  lockDir: string,
  timeoutMs: number,
  tree: HarnessTree,
  signal?: AbortSignal,
): Promise<{ code: number | null; output: string }> {
  let output = '';
  const keep = (text: string) => {
    output += text;
    if (output.length > 200_000) output = output.slice(-100_000);
  };
  const stop = new AbortController();
  let giveUp: NodeJS.Timeout | undefined;
  let abandon: () => void = () => {};
  const abandoned = new Promise<{ code: null; output: string }>((resolve) => {
    abandon = () => {
      keep(`\n[matrix] certify did not end within 30 s of being stopped: given up\n`);
      resolve({ code: null, output });
    };
  });
  const stopNow = (why: string) => {
    if (stop.signal.aborted) return;
    keep(`\n[matrix] certify ${why}: stopped\n`);
    stop.abort('SIGINT');
    giveUp = setTimeout(abandon, 30_000);
  };
  const timer = setTimeout(() => stopNow(`exceeded ${timeoutMs} ms`), timeoutMs);
  const onAbort = () => stopNow('was called off');
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  const run = tree
    .runCertify({
      env,
      write: keep,
      signal: stop.signal,
      onlyPhases: c.phases as Phase[],
      ...(c.tests?.length ? { onlyTests: tree.onlyTests(c.tests) } : {}),
      ...(c.tests?.length && c.titles?.length ? { onlyTitles: c.titles } : {}),
      ...(c.tests?.length && c.maxFailures ? { maxFailures: c.maxFailures } : {}),
      lockDir,
      verdictOnly: true,
    })
    .then(
      (outcome) => ({ code: outcome.exitCode as number | null, output }),
      (error: unknown) => {
        keep(`\n[matrix] certify: internal error: ${(error as Error)?.message ?? String(error)}\n`);
        return { code: 1, output };
      },
    );
  try {
    return await Promise.race([run, abandoned]);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    clearTimeout(timer);
    clearTimeout(giveUp);
  }
}

/** Fills `outcome` from certify's `conformance.json`. */
function readReport(report: ConformanceJson, outcome: CaseOutcome): void {
  outcome.verdict = report.verdict === 'pass' ? 'pass' : 'fail';
  outcome.problems = (report.problems ?? []).map((p) => `${p.kind}: ${p.reason}`);
  outcome.otherClients = (report.pacing ?? []).flatMap((k) => (k.anotherClient ? [k.anotherClient] : []));
  outcome.otherRuns = {
    waitedFor: (report.otherRuns?.waitedFor ?? []).map((r) => r.pid),
    waitedForThis: (report.otherRuns?.waitedForThis ?? []).map((r) => r.pid),
  };
  for (const r of report.requirements ?? []) {
    if (r.status !== 'fail') {
      if (r.status === 'not-certified' || /not certified/i.test(r.reason ?? ''))
        outcome.notCertified[r.id] = (r.reason ?? '').slice(0, 600);
      continue;
    }
    // The verdict's reason names the failing test; its first error says what was observed.
    const error = r.evidence
      ?.find((e) => e.errors?.length)
      ?.errors?.[0]?.split('\n')
      .find((l) => l.trim());
    const reason = [(r.reason ?? '').split('\n')[0], error?.trim().slice(0, 400)].filter(Boolean).join(' — ').slice(0, 600);
    if (/^no test result\b/.test(r.reason ?? '')) {
      outcome.unevidenced.push(r.id);
      continue;
    }
    outcome.failing.push(r.id);
    if (r.evidence?.some((e) => e.outcome === 'failed' || e.outcome === 'flaky')) outcome.caught.push(r.id);
    outcome.reasons[r.id] = reason;
  }
}

/** Variables of the conformance run or of an enclosing Playwright run are never inherited (`inheritedEnv`). */
const NOT_INHERITED =
  /^(BASE_URL|API_URL|API_KEY|API_PLAN|RATE_LIMIT_KEY|RATE_LIMIT_PLAN|LOAD_KEY|MISSING_PET_ID|CONFORMANCE_PROFILE|REPORTS_DIR|WORKERS|CERTIFY_.*|TEST_.*|PW_.*|PLAYWRIGHT_.*)$/;

export function inheritedEnv(): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !NOT_INHERITED.test(k)));
}

/** Removes a case's reports directory. */
export function cleanup(outcome: CaseOutcome): void {
  fs.rmSync(outcome.reportsDir, { recursive: true, force: true });
}

/** Process groups of running certify children: killed if this process exits first. */
const children = new Set<number>();
process.on('exit', () => {
  for (const pid of children) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
});

/**
 * `node <argv>` in its own process group, its output kept (the last 100 KB or more). Past
 * `timeoutMs` the group is killed; once `signal` aborts it gets SIGINT, as from Ctrl-C (certify
 * stops its phases, restores what it changed and gives its turn back), and SIGKILL 30 s later.
 */
export function spawnCertify(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...argv], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    if (child.pid) children.add(child.pid);
    let output = '';
    const keep = (chunk: Buffer | string) => {
      output += chunk.toString();
      if (output.length > 200_000) output = output.slice(-100_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const signalGroup = (name: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, name);
      } catch {
        child.kill(name);
      }
    };
    let killLater: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      keep(`\n[matrix] certify exceeded ${timeoutMs} ms: stopped\n`);
      signalGroup('SIGKILL');
    }, timeoutMs);
    const onAbort = () => {
      keep('\n[matrix] certify was called off: stopped\n');
      signalGroup('SIGINT');
      killLater = setTimeout(() => signalGroup('SIGKILL'), 30_000);
    };
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    child.on('close', (code) => {
      clearTimeout(timer);
      clearTimeout(killLater);
      signal?.removeEventListener('abort', onAbort);
      if (child.pid) children.delete(child.pid);
      resolve({ code, output });
    });
  });
}
