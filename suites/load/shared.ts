/**
 * What the load specs share: their settings (from `settings/`), one run per check for the whole
 * run (the `oncePerRun` fixture: the first test to ask runs it, every other test and a restarted
 * worker read its record back), the record in `${REPORTS_DIR}/load/<check>.json` (docs/architecture.md:
 * certify merges these into `load.json`), a lock so that two load checks never send at the same
 * time (a capacity run measured during a burst measures the burst; a check sets the lock aside
 * only while it waits without sending), and how a test turns the record's findings into its verdict.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { TestInfo } from '@playwright/test';
import { readSettings, problemsOf, type SettingValues } from '../../settings/index.ts';
import { LOAD_SETTINGS } from '../../settings/load.ts';
import { failed, findingAnnotation, findingsOf, formatFinding, mapFindingText, type Finding } from '../lib/finding.ts';
import { shellWord } from '../lib/exchange.ts';
import { redact, secretsOf } from '../../core/secrets.ts';
import type { TlsOptions } from '../lib/load.ts';
import { describeTarget } from './target.ts';

/** What a check core returns. */
export interface CheckOutcome<F> {
  findings: Finding[];
  evidence: string[];
  figures: F;
}

/** What one check spent on one key. */
export interface Spend {
  /** The key's label, e.g. `<LOAD_KEY>`; never a key. */
  key: string;
  requests: number;
}

/** `${REPORTS_DIR}/load/<check>.json`. Never holds a key. */
export interface CheckRecord<F> extends CheckOutcome<F> {
  check: string;
  /** `fail` when a must-level finding or a user threshold failed. */
  status: 'pass' | 'fail';
  /** Origin and base path of the target; never a key. */
  target: string;
  profile: string;
  startedAt: string;
  finishedAt: string;
  /** HTTP requests this check sent, on every key. */
  requests: number;
  /** Requests per key, and the wall time of the check. */
  spent: { keys: Spend[]; durationS: number };
  /** `verified`, `not verified` (INSECURE_TLS=1) or `none` (plain http). */
  tls: 'verified' | 'not verified' | 'none';
}

/** The settings a load check reads (one rule per variable: `settings/`). */
export interface LoadSettings {
  values: SettingValues;
  /** Problems of the variables the load checks read. */
  problems: string[];
}

const READ = [...LOAD_SETTINGS.settings.map((s) => s.name), 'BASE_URL', 'API_KEY', 'RATE_LIMIT_KEY', 'LOAD_KEY', 'CONFORMANCE_PROFILE', 'REPORTS_DIR', 'MAX_RETRY_AFTER_S'];

/** Reads the settings of the load checks from `env`. Never throws. */
export function loadSettings(env: NodeJS.ProcessEnv = process.env): LoadSettings {
  const { values, problems } = readSettings(env);
  return { values, problems: problemsOf(problems, READ) };
}

/** TLS of the load requests: verified unless the user opted out (`INSECURE_TLS`). */
export function tlsOf(values: SettingValues): TlsOptions {
  return { insecure: values.INSECURE_TLS === true };
}

export function recordPath(reportsDir: string, check: string): string {
  return path.join(reportsDir, 'load', `${check}.json`);
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
 * The load lock as the check holding it sees it. `setAsideWhile(wait)` releases the lock for a
 * wait that sends nothing (a Retry-After, a window's Reset), so that another load check may run
 * in that time, and takes it back before the check sends again.
 */
export interface LoadLock {
  setAsideWhile<T>(wait: () => Promise<T>): Promise<T>;
}

function liveHolder(file: string): string | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
  const pid = Number(text.split(':')[0] || 'NaN');
  if (Number.isInteger(pid) && pid > 0 && !alive(pid)) {
    fs.rmSync(file, { force: true });
    return undefined;
  }
  return text;
}

/**
 * Takes `${dir}/.lock`, waiting (with progress) while another live process holds it. A `first`
 * taker (a check that holds the lock only to send short bursts) says so in `.lock.next` while it
 * waits, and other takers let it go first.
 */
async function takeLock(lock: string, label: string, maxWaitS: number, progress: (l: string) => void, first: boolean): Promise<void> {
  const next = `${lock}.next`;
  const me = `${process.pid}:${Math.random().toString(36).slice(2)}`;
  const started = Date.now();
  let lastLine = 0;
  try {
    for (;;) {
      if (first) fs.writeFileSync(next, me);
      const ahead = first ? undefined : liveHolder(next);
      if (ahead === undefined) {
        try {
          fs.writeFileSync(lock, me, { flag: 'wx' });
          return;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
          if (liveHolder(lock) === undefined) continue;
        }
      }
      const waited = (Date.now() - started) / 1000;
      if (waited > maxWaitS) throw new Error(`${label}: another load check held ${lock} for more than ${maxWaitS} s`);
      if (Date.now() - lastLine > 5000) {
        progress(`[load] ${label}: waiting for another load check to finish (${waited.toFixed(0)} s)`);
        lastLine = Date.now();
      }
      await sleep(first ? 50 : 200);
    }
  } finally {
    if (first && liveHolder(next) === me) fs.rmSync(next, { force: true });
  }
}

/**
 * Runs `fn` while holding `${REPORTS_DIR}/load/.lock`, waiting (with progress) while another load
 * check holds it. A lock left by a process that is gone is taken over. Waits at most `maxWaitS`
 * for each taking of the lock (the first, and each after `LoadLock.setAsideWhile`). `first`: this
 * check goes before the others waiting (the overload check: its bursts keep to their windows, and
 * a capacity run fills the waits between them).
 */
export async function withLoadLock<T>(
  reportsDir: string,
  label: string,
  maxWaitS: number,
  fn: (lock: LoadLock) => Promise<T>,
  progress = (l: string) => console.log(l),
  options: { first?: boolean } = {},
): Promise<T> {
  const dir = path.join(reportsDir, 'load');
  fs.mkdirSync(dir, { recursive: true });
  const lock = path.join(dir, '.lock');
  const first = options.first === true;
  await takeLock(lock, label, maxWaitS, progress, first);
  let held = true;
  const handle: LoadLock = {
    async setAsideWhile(wait) {
      if (!held) return wait();
      fs.rmSync(lock, { force: true });
      held = false;
      try {
        return await wait();
      } finally {
        await takeLock(lock, label, maxWaitS, progress, first);
        held = true;
      }
    },
  };
  try {
    return await fn(handle);
  } finally {
    if (held) fs.rmSync(lock, { force: true });
  }
}

/** A value computed once for the whole run (the `oncePerRun` fixture). */
export type Once = <T>(name: string, compute: () => Promise<T>) => Promise<T>;

export interface RunOnceOptions<F> {
  settings: LoadSettings;
  baseUrl: string;
  check: string;
  /** Longest wait for the lock (another load check running). */
  lockWaitS: number;
  once: Once;
  /** The check; `lock` lets it set the load lock aside while it waits without sending. */
  run: (lock: LoadLock) => Promise<CheckOutcome<F>>;
  /** Take the lock before the other load checks waiting for it (see `withLoadLock`). */
  first?: boolean;
  /** Requests per key and wall time, from the figures. */
  spent: (figures: F) => CheckRecord<F>['spent'];
}

/**
 * The record of `check` for this run: run once (under the lock), redacted, written to
 * `${REPORTS_DIR}/load/<check>.json` and handed to every test that asks. `ranHere`: this call sent
 * the requests (only that test reports them, so a run's request count counts them once).
 */
export async function runOnce<F>(options: RunOnceOptions<F>): Promise<{ record: CheckRecord<F>; ranHere: boolean }> {
  const v = options.settings.values;
  const target = describeTarget(options.baseUrl);
  const secrets = secretsOf({ API_KEY: v.API_KEY, RATE_LIMIT_KEY: v.RATE_LIMIT_KEY, LOAD_KEY: v.LOAD_KEY });
  const clean = (s: string) => redact(s, secrets);
  let ranHere = false;
  const record = await options.once(`load:${options.check}:${target}`, () => {
    ranHere = true;
    return withLoadLock(v.REPORTS_DIR, options.check, options.lockWaitS, async (lock) => {
      const startedAt = new Date().toISOString();
      const outcome = await options.run(lock);
      const spent = options.spent(outcome.figures);
      const record: CheckRecord<F> = {
        check: options.check,
        status: failed(outcome.findings) ? 'fail' : 'pass',
        target,
        profile: v.CONFORMANCE_PROFILE,
        startedAt,
        finishedAt: new Date().toISOString(),
        requests: spent.keys.reduce((a, k) => a + k.requests, 0),
        spent,
        tls: new URL(options.baseUrl).protocol !== 'https:' ? 'none' : v.INSECURE_TLS ? 'not verified' : 'verified',
        findings: outcome.findings.map((f) => mapFindingText(f, clean)),
        evidence: outcome.evidence.map(clean),
        figures: outcome.figures,
      };
      // The figures hold only numbers, status codes and header values the server sent; redact the whole text anyway.
      const text = clean(JSON.stringify(record, null, 2));
      fs.writeFileSync(recordPath(v.REPORTS_DIR, options.check), `${text}\n`);
      return JSON.parse(text) as CheckRecord<F>;
    }, undefined, { first: options.first });
  });
  return { record, ranHere };
}

/** What a test needs to turn findings into its verdict (the verdict fixtures). */
export interface Verdict {
  warn: (message: string) => void;
  notCertified: (reason: string) => never;
}

/** One request of the check's load as curl, on its first key (written `$RATE_LIMIT_KEY`, never the key). */
export function loadCurl(record: Pick<CheckRecord<unknown>, 'target' | 'spent'>): string {
  const key = record.spent?.keys?.[0]?.key;
  const auth = key ? ` -H ${shellWord(`Authorization: Bearer ${key}`)}` : '';
  return `curl -sS -i${auth} ${shellWord(`${record.target.replace(/\/$/, '')}/inventory`)}`;
}

/**
 * The verdict of one test on the findings of `id` (and `part`): a `fail` or `gate` fails it (each
 * line names the requirement, expected and observed), a `not-certified` skips it as not certified
 * with the reason, a `warn` is a warning, a `note` an evidence line. `judged`: whether the run
 * reached this part; when it did not and nothing explains why, the test fails with every finding.
 */
export function verdict(record: CheckRecord<unknown>, testInfo: TestInfo, v: Verdict, id: string, part: string | undefined, judged: boolean): void {
  // A finding without a part (e.g. unverified TLS) belongs to every part of its requirement.
  const mine = part === undefined ? findingsOf(record.findings, id) : record.findings.filter((f) => f.id === id && (f.part === part || f.part === undefined));
  for (const f of mine.filter((x) => x.level === 'note')) testInfo.annotations.push({ type: 'evidence', description: formatFinding(f) });
  for (const f of mine.filter((x) => x.level === 'warn')) v.warn(formatFinding(f));
  const failing = mine.filter((x) => x.level === 'fail' || x.level === 'gate');
  for (const f of [...mine.filter((x) => x.level === 'warn'), ...failing]) testInfo.annotations.push(findingAnnotation({ ...f, curl: f.curl ?? loadCurl(record) }));
  if (failing.length) throw new Error(failing.map((f) => `${formatFinding(f)}\n  reproduce one request: ${f.curl ?? loadCurl(record)}`).join('\n'));
  const notCertified = mine.filter((x) => x.level === 'not-certified');
  if (notCertified.length) v.notCertified(notCertified.map((f) => `${f.message} (expected ${f.expected}; observed ${f.observed})`).join('; '));
  if (!judged) {
    // The run stopped before this part: show why (a finding of another part), as not certified
    // when it was the harness's limit, else as a failure.
    const stops = record.findings.filter((x) => x.level === 'not-certified');
    if (stops.length) v.notCertified(`${part ?? id} was not judged: ${stops.map((f) => f.message).join('; ')}`);
    throw new Error(`${id}${part ? ` (${part})` : ''} was not judged: the check stopped before it.\n${record.findings.map(formatFinding).join('\n') || '(no finding recorded)'}`);
  }
}

/**
 * The settings, base address and key of one load check. Configuration problems and a missing
 * `BASE_URL` fail the check; a missing key leaves it not certified.
 */
export function loadTarget(
  v: Verdict,
  id: string,
  keyName: 'LOAD_KEY' | 'RATE_LIMIT_KEY',
  whyOnlyThisKey: string,
): { s: LoadSettings; baseUrl: string; key: string } {
  const s = loadSettings();
  if (s.problems.length) throw new Error(`${id}: configuration: ${s.problems.join('; ')}`);
  const baseUrl = s.values.BASE_URL;
  if (!baseUrl) throw new Error(`${id}: prerequisite missing: set BASE_URL (the inventory base address, ending in /v1); this check cannot run without it`);
  const key = keyName === 'LOAD_KEY' ? s.values.LOAD_KEY : s.values.RATE_LIMIT_KEY;
  if (!key) v.notCertified(`${keyName} not given: ${whyOnlyThisKey}`);
  return { s, baseUrl, key };
}
