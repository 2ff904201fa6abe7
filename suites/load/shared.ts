/**
 * What the load specs share: their settings (from `settings/`), one run per check for the whole
 * run (the `oncePerRun` fixture: the first test to ask runs it, every other test and a restarted
 * worker read its record back), the record in `${REPORTS_DIR}/load/<check>.json` (docs/architecture.md:
 * certify merges these into `load.json`), a lock so that two load checks never run at the same
 * time (a capacity run measured during a burst measures the burst), and how a test turns the
 * record's findings into its verdict.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { TestInfo } from '@playwright/test';
import { readSettings, problemsOf, type SettingValues } from '../../settings/index.ts';
import { LOAD_SETTINGS } from '../../settings/load.ts';
import { failed, findingsOf, formatFinding, mapFindingText, type Finding } from '../lib/finding.ts';
import { secretsOf } from '../../certify/secrets.ts';
import { redact } from '../lib/redact.ts';
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

/** A value computed once for the whole run (the `oncePerRun` fixture). */
export type Once = <T>(name: string, compute: () => Promise<T>) => Promise<T>;

export interface RunOnceOptions<F> {
  settings: LoadSettings;
  baseUrl: string;
  check: string;
  /** Longest wait for the lock (another load check running). */
  lockWaitS: number;
  once: Once;
  run: () => Promise<CheckOutcome<F>>;
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
    return withLoadLock(v.REPORTS_DIR, options.check, options.lockWaitS, async () => {
      const startedAt = new Date().toISOString();
      const outcome = await options.run();
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
    });
  });
  return { record, ranHere };
}

/** What a test needs to turn findings into its verdict (the verdict fixtures). */
export interface Verdict {
  warn: (message: string) => void;
  notCertified: (reason: string) => never;
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
  if (failing.length) throw new Error(failing.map(formatFinding).join('\n'));
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
