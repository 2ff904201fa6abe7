/**
 * What the load specs share: one run per check, its record in `${REPORTS_DIR}/load/<check>.json`
 * (docs/architecture.md: certify merges these into `load.json`), and a lock so that two load
 * checks never run at the same time (a capacity run measured during a burst measures the burst).
 *
 * A check judged by several tests (the overload check: admission, refusals, another key, recovery)
 * runs once: the first test runs it and writes the record; the others read it back. The record
 * names the Playwright runner process (`process.ppid` of its workers), so a record of an earlier
 * run is never mistaken for this one, even when a failed test restarted the worker.
 */
import fs from 'node:fs';
import path from 'node:path';
import { redact, type Secret } from '../lib/redact.ts';
import type { TestInfo } from '@playwright/test';
import { loadSettings, type LoadSettings } from './settings.ts';
import { describeTarget } from './target.ts';

/** What a check core returns. */
export interface CheckOutcome<F> {
  failures: string[];
  warnings: string[];
  evidence: string[];
  figures: F;
}

/** `${REPORTS_DIR}/load/<check>.json`. Never holds a key. */
export interface CheckRecord<F> extends CheckOutcome<F> {
  check: string;
  status: 'pass' | 'fail';
  /** Origin and base path of the target; never a key. */
  target: string;
  profile: string;
  startedAt: string;
  finishedAt: string;
  /** HTTP requests this check sent. */
  requests: number;
  /** The Playwright runner process that produced it (guards against reusing an old record). */
  runner: number;
}

/** The keys of the run, with the placeholders that replace them in every text the checks write. */
export function secretsOf(settings: Pick<LoadSettings, 'apiKey' | 'rateLimitKey' | 'loadKey'>): Secret[] {
  const out: Secret[] = [];
  if (settings.apiKey) out.push({ value: settings.apiKey, placeholder: '<API_KEY>' });
  if (settings.rateLimitKey) out.push({ value: settings.rateLimitKey, placeholder: '<RATE_LIMIT_KEY>' });
  if (settings.loadKey) out.push({ value: settings.loadKey, placeholder: '<LOAD_KEY>' });
  return out;
}

export function recordPath(reportsDir: string, check: string): string {
  return path.join(reportsDir, 'load', `${check}.json`);
}

function readRecord<F>(file: string): CheckRecord<F> | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as CheckRecord<F>;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs `fn` while holding `${REPORTS_DIR}/load/.lock`, waiting (with progress) while another load
 * check holds it. A lock left by a process that is gone is taken over. Waits at most `maxWaitS`.
 */
export async function withLoadLock<T>(reportsDir: string, label: string, maxWaitS: number, fn: () => Promise<T>, progress = (l: string) => console.log(l)): Promise<T> {
  const dir = path.join(reportsDir, 'load');
  fs.mkdirSync(dir, { recursive: true });
  const lock = path.join(dir, '.lock');
  const started = Date.now();
  let lastLine = 0;
  for (;;) {
    try {
      fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(fs.readFileSync(lock, 'utf8').trim() || 'NaN');
      if (Number.isInteger(holder) && holder > 0 && !alive(holder)) {
        fs.rmSync(lock, { force: true });
        continue;
      }
      const waited = (Date.now() - started) / 1000;
      if (waited > maxWaitS) throw new Error(`${label}: another load check held ${lock} for more than ${maxWaitS} s`);
      if (Date.now() - lastLine > 5000) {
        progress(`[load] ${label}: waiting for another load check to finish (${waited.toFixed(0)} s)`);
        lastLine = Date.now();
      }
      await sleep(200);
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}

export interface RunOnceOptions<F> {
  /** The check's settings and base address (from `loadTarget`). */
  settings: LoadSettings;
  baseUrl: string;
  check: string;
  /** Longest wait for the lock (another load check running). */
  lockWaitS: number;
  run: () => Promise<CheckOutcome<F>>;
}

/**
 * The record of `check` for this run: read back when this runner already produced it, else run
 * (under the lock), redact, write and return it. `ranHere` says whether this call sent the requests.
 */
export async function runOnce<F extends { requests: { total: number } }>(
  options: RunOnceOptions<F>,
): Promise<{ record: CheckRecord<F>; ranHere: boolean }> {
  const o = {
    ...options,
    reportsDir: options.settings.reportsDir,
    target: describeTarget(options.baseUrl),
    profile: options.settings.profile,
    secrets: secretsOf(options.settings),
  };
  const file = recordPath(o.reportsDir, o.check);
  const previous = readRecord<F>(file);
  if (previous && previous.runner === process.ppid && previous.target === o.target) return { record: previous, ranHere: false };
  return withLoadLock(o.reportsDir, o.check, o.lockWaitS, async () => {
    const again = readRecord<F>(file);
    if (again && again.runner === process.ppid && again.target === o.target) return { record: again, ranHere: false };
    const startedAt = new Date().toISOString();
    const outcome = await o.run();
    const clean = (s: string) => redact(s, o.secrets);
    const record: CheckRecord<F> = {
      check: o.check,
      status: outcome.failures.length ? 'fail' : 'pass',
      target: o.target,
      profile: o.profile,
      startedAt,
      finishedAt: new Date().toISOString(),
      requests: outcome.figures.requests.total,
      runner: process.ppid,
      failures: outcome.failures.map(clean),
      warnings: outcome.warnings.map(clean),
      evidence: outcome.evidence.map(clean),
      figures: outcome.figures,
    };
    // The figures hold only numbers, status codes and header values the server sent; redact the whole text anyway.
    const text = clean(JSON.stringify(record, null, 2));
    fs.writeFileSync(file, `${text}\n`);
    return { record: JSON.parse(text) as CheckRecord<F>, ranHere: true };
  });
}

/** Lines of `lines` that belong to `prefix` (an id and part, e.g. `LOAD-02 (admission)`). */
export function linesOf(lines: readonly string[], prefix: string): string[] {
  return lines.filter((l) => l.startsWith(`${prefix} `));
}

/**
 * Leaves a load check out because the user gave no key for it (issue 5: against an external target
 * load runs only with the keys given for it). The test is skipped with a `not-certified`
 * annotation, so the verdict lists it plainly as not certified instead of passing it.
 */
export function notCertified(testInfo: TestInfo, why: string): never {
  const reason = `not certified: ${why}`;
  testInfo.annotations.push({ type: 'not-certified', description: reason });
  testInfo.skip(true, reason);
  throw new Error(reason); // testInfo.skip throws; this only tells the type checker.
}

/**
 * The settings, base address and key of one load check. Configuration problems and a missing
 * `BASE_URL` fail the check; a missing key leaves it not certified (see `notCertified`).
 */
export function loadTarget(
  testInfo: TestInfo,
  id: string,
  keyName: 'LOAD_KEY' | 'RATE_LIMIT_KEY',
  whyOnlyThisKey: string,
): { s: LoadSettings; baseUrl: string; key: string } {
  const s = loadSettings();
  if (s.problems.length) throw new Error(`${id}: configuration: ${s.problems.join('; ')}`);
  if (!s.baseUrl) throw new Error(`${id}: prerequisite missing: set BASE_URL (the inventory base address, ending in /v1); this check cannot run without it`);
  const key = keyName === 'LOAD_KEY' ? s.loadKey : s.rateLimitKey;
  if (!key) notCertified(testInfo, `${keyName} not given: ${whyOnlyThisKey}`);
  return { s, baseUrl: s.baseUrl, key };
}
