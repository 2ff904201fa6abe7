/**
 * What the load steps (capacity, overload) share: their record for the run and the one judge of
 * their findings.
 * - One run per step for the whole run (the `oncePerRun` fixture, held by the run's coordinator):
 *   the first test to ask runs it, every other test and a restarted worker read its record back.
 *   The record goes to `${REPORTS_DIR}/load/<step>.json` (docs/architecture.md: certify merges
 *   these into `load.json`), redacted.
 * - The judge turns the record's typed findings (`core/finding.ts`) into a test's verdict
 *   through the suites' verdict fixtures (`warn`, `notCertified`).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { TestInfo } from '@playwright/test';
import { failed, attachFinding, findingsOf, formatFinding, mapFindingText, type Finding } from '../../core/finding.ts';
import { shellWord } from '../../core/exchange.ts';
import { redact, secretsOf } from '../../core/secrets.ts';
import type { OncePerRun } from '../fixtures/run.ts';
import { problemsOf, readSettings, type SettingValues } from '../../settings/index.ts';
import { LOAD_SETTINGS } from '../../settings/load.ts';
import { describeTarget, usesReferenceKeys } from './target.ts';
import type { PacingClient } from '../pacing/client.ts';
import { ANNOTATION } from '../../core/results.ts';

/** What a step's core returns. */
export interface CheckOutcome<F> {
  findings: Finding[];
  evidence: string[];
  figures: F;
}

/** What one step spent on one key. */
export interface Spend {
  /** The key's label, e.g. `<LOAD_KEY>`; never a key. */
  key: string;
  requests: number;
}

/** `${REPORTS_DIR}/load/<step>.json`. Never holds a key. */
export interface CheckRecord<F> extends CheckOutcome<F> {
  check: string;
  /** The certify phase (Playwright project) that ran it. */
  phase: string;
  /** `fail` when a must-level finding or a user threshold failed. */
  status: 'pass' | 'fail';
  /** Origin and base path of the target; never a key. */
  target: string;
  profile: string;
  startedAt: string;
  finishedAt: string;
  /** HTTP requests this step sent, on every key. */
  requests: number;
  /** Requests per key, the wall time of the step and the time it spent waiting for windows. */
  spent: { keys: Spend[]; durationS: number; waitedS: number };
  /** `verified`, `not verified` (INSECURE_TLS=1) or `none` (plain http). */
  tls: 'verified' | 'not verified' | 'none';
}

export function recordPath(reportsDir: string, check: string): string {
  return path.join(reportsDir, 'load', `${check}.json`);
}

/** The settings a record names: reports folder, profile, the TLS opt-out, and the keys it redacts. */
export interface RecordSettings {
  REPORTS_DIR: string;
  CONFORMANCE_PROFILE: string;
  INSECURE_TLS: boolean;
  API_KEY?: string;
  RATE_LIMIT_KEY?: string;
  LOAD_KEY?: string;
}

export interface RunOnceOptions<F> {
  baseUrl: string;
  check: string;
  /** The Playwright project running it (`testInfo.project.name`). */
  phase: string;
  values: RecordSettings;
  once: OncePerRun;
  run: () => Promise<CheckOutcome<F>>;
  /** Requests per key, wall time and window waits, from the figures. */
  spent: (figures: F) => CheckRecord<F>['spent'];
}

/**
 * The record of `check` for this run: run once, redacted, written to
 * `${REPORTS_DIR}/load/<check>.json` and handed to every test that asks. `ranHere`: this call sent
 * the requests (only that test reports them, so a run's request count counts them once).
 */
export async function runOnce<F>(options: RunOnceOptions<F>): Promise<{ record: CheckRecord<F>; ranHere: boolean }> {
  const v = options.values;
  const target = describeTarget(options.baseUrl);
  const secrets = secretsOf({ API_KEY: v.API_KEY, RATE_LIMIT_KEY: v.RATE_LIMIT_KEY, LOAD_KEY: v.LOAD_KEY });
  const clean = (s: string) => redact(s, secrets);
  let ranHere = false;
  const record = await options.once(`load:${options.check}:${target}`, async () => {
    ranHere = true;
    const startedAt = new Date().toISOString();
    const outcome = await options.run();
    const spent = options.spent(outcome.figures);
    const record: CheckRecord<F> = {
      check: options.check,
      phase: options.phase,
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
    const file = recordPath(v.REPORTS_DIR, options.check);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `${text}\n`);
    return JSON.parse(text) as CheckRecord<F>;
  });
  return { record, ranHere };
}

/** The suites' verdict fixtures a test hands the judge. */
export interface VerdictFixtures {
  warn: (message: string) => void;
  notCertified: (reason: string) => never;
}

/** Evidence and request count of a record, on the test that reports it. */
export function annotateRecord(record: CheckRecord<unknown>, ranHere: boolean, testInfo: TestInfo): void {
  for (const line of record.evidence) testInfo.annotations.push({ type: ANNOTATION.evidence, description: line });
  if (ranHere) testInfo.annotations.push({ type: ANNOTATION.requests, description: String(record.requests) });
}

/** One request of the step's load as curl, on its first key (written `$RATE_LIMIT_KEY`, never the key). */
export function loadCurl(record: Pick<CheckRecord<unknown>, 'target' | 'spent'>): string {
  const key = record.spent?.keys?.[0]?.key;
  const auth = key ? ` -H ${shellWord(`Authorization: Bearer ${key}`)}` : '';
  return `curl -sS -i${auth} ${shellWord(`${record.target.replace(/\/$/, '')}/inventory`)}`;
}

/**
 * The one judge of the load steps: the verdict of one test on the findings of `id` (and `part`).
 * A `fail` or `gate` fails it (each line names the requirement, expected and observed, with a
 * request to reproduce), a `not-certified` makes it not certified with the reason, a `warn` is a
 * warning, a `note` an evidence line. `judged`: whether the step reached this part; when it did
 * not and nothing explains why, the test fails with every finding.
 */
export function judgeFindings(
  record: Pick<CheckRecord<unknown>, 'findings' | 'target' | 'spent'>,
  testInfo: TestInfo,
  v: VerdictFixtures,
  id: string,
  part: string | undefined,
  judged: boolean,
): void {
  const findings = record.findings;
  // A finding without a part (e.g. unverified TLS) belongs to every part of its requirement.
  const mine =
    part === undefined ? findingsOf(findings, id) : findings.filter((f) => f.id === id && (f.part === part || f.part === undefined));
  for (const f of mine.filter((x) => x.level === 'note'))
    testInfo.annotations.push({ type: ANNOTATION.evidence, description: formatFinding(f) });
  for (const f of mine.filter((x) => x.level === 'warn')) v.warn(formatFinding(f));
  const failing = mine.filter((x) => x.level === 'fail' || x.level === 'gate');
  for (const f of [...mine.filter((x) => x.level === 'warn'), ...failing])
    attachFinding(testInfo, { ...f, curl: f.curl ?? loadCurl(record) });
  if (failing.length)
    throw new Error(failing.map((f) => `${formatFinding(f)}\n  reproduce one request: ${f.curl ?? loadCurl(record)}`).join('\n'));
  const notCertified = mine.filter((x) => x.level === 'not-certified');
  if (notCertified.length)
    v.notCertified(notCertified.map((f) => `${f.message} (expected ${f.expected}; observed ${f.observed})`).join('; '));
  if (judged) return;
  // The step stopped before this part: show why (a finding of another part), as not certified
  // when it was the harness's limit, else as a failure.
  const stops = findings.filter((x) => x.level === 'not-certified');
  if (stops.length) v.notCertified(`${part ?? id} was not judged: ${stops.map((f) => f.message).join('; ')}`);
  throw new Error(
    `${id}${part ? ` (${part})` : ''} was not judged: the check stopped before it.\n${findings.map(formatFinding).join('\n') || '(no finding recorded)'}`,
  );
}

/**
 * What every load step's core takes from the settings alike: deadlines, the transport's TLS rule,
 * loopback only against the bundled reference server (its demo keys), and the run-wide pacer.
 */
export function commonLoadConfig(
  x: SettingValues,
  pacer: PacingClient,
): { timeoutS: number; maxRetryAfterS: number; loopbackOnly: boolean; tls: { insecure: boolean }; pacer: PacingClient } {
  return {
    timeoutS: x.LOAD_TIMEOUT_S,
    maxRetryAfterS: x.MAX_RETRY_AFTER_S,
    loopbackOnly: usesReferenceKeys([x.LOAD_KEY, x.RATE_LIMIT_KEY, x.API_KEY]),
    tls: { insecure: x.INSECURE_TLS === true },
    pacer,
  };
}

/** The variables a load step reads (settings/). */
const READ = [
  ...LOAD_SETTINGS.settings.map((s) => s.name),
  'BASE_URL',
  'API_KEY',
  'RATE_LIMIT_KEY',
  'LOAD_KEY',
  'CONFORMANCE_PROFILE',
  'REPORTS_DIR',
  'MAX_RETRY_AFTER_S',
];

/**
 * The settings, base address and key of one load step. Configuration problems and a missing
 * `BASE_URL` fail the check; a missing key leaves it not certified.
 */
export function loadTarget(
  v: VerdictFixtures,
  id: string,
  keyName: 'LOAD_KEY' | 'RATE_LIMIT_KEY',
  whyOnlyThisKey: string,
): { values: SettingValues; baseUrl: string; key: string } {
  const { values, problems } = readSettings(process.env);
  const mine = problemsOf(problems, READ);
  if (mine.length) throw new Error(`${id}: configuration: ${mine.join('; ')}`);
  const baseUrl = values.BASE_URL;
  if (!baseUrl)
    throw new Error(
      `${id}: prerequisite missing: set BASE_URL (the inventory base address, ending in /v1); this check cannot run without it`,
    );
  const key = keyName === 'LOAD_KEY' ? values.LOAD_KEY : values.RATE_LIMIT_KEY;
  if (!key) v.notCertified(`${keyName} not given: ${whyOnlyThisKey}`);
  return { values, baseUrl, key };
}
