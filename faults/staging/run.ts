/**
 * One certify run under staging conditions: starts the simulator, records the upstream's
 * inventory, runs `cli/bin.mjs certify` against it (as a user does, every phase), and returns the
 * verdict, what the simulator counted and whether the store is as it was.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CERTIFY_CLI, inheritedEnv, spawnCertify } from '../harness.ts';
import type { RetryStats } from '../retry-watch.ts';
import { startStagingTarget, type StagingConditions, type StagingTarget } from './simulator.ts';
import type { ReferenceTargetOptions } from '../../certify/reference-target.ts';

export interface StagingOutcome {
  verdict: 'pass' | 'fail' | 'missing';
  exitCode: number | null;
  /** Requirements that did not pass (`fail`), with their first reason (no keys). */
  failing: Record<string, string>;
  /** Requirements listed as not certified, with the reason. */
  notCertified: Record<string, string>;
  /** Requirements that passed with warnings, with their warnings. */
  warned: Record<string, string[]>;
  retry: RetryStats;
  /** The upstream inventory after the run equals the one before. */
  restored: boolean;
  before: string;
  after: string;
  durationMs: number;
  /** Last lines of certify's output (redacted by certify). */
  tail: string;
}

export interface StagingRunOptions {
  /** Extra certify settings (short load runs, …). */
  env?: Record<string, string>;
  timeoutMs?: number;
  /** Windows of the reference target (default: a case's 5 s, faults/reference.ts). */
  reference?: ReferenceTargetOptions;
  /** With `tls`: leave the private CA out of NODE_EXTRA_CA_CERTS, so the simulator's certificate is untrusted. */
  untrusted?: boolean;
}

interface ConformanceJson {
  verdict?: string;
  notCertified?: Array<{ id: string; reason: string }>;
  requirements?: Array<{ id: string; status: string; reason?: string; evidence?: Array<{ errors?: string[]; warnings?: string[] }> }>;
}

/** Runs certify under `conditions` and reports. */
export async function runStaging(conditions: StagingConditions, options: StagingRunOptions = {}): Promise<StagingOutcome> {
  const target = await startStagingTarget(conditions, options.reference);
  try {
    return await certifyStaging(target, options);
  } finally {
    await target.close();
  }
}

/** Runs certify against a started `target` (which the caller closes) and reports. */
export async function certifyStaging(target: StagingTarget, options: StagingRunOptions = {}): Promise<StagingOutcome> {
  const started = Date.now();
  const reportsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'staging-reports-'));
  try {
    const before = await target.inventory();
    const env: Record<string, string | undefined> = {
      ...inheritedEnv(),
      ...target.env,
      CONFORMANCE_PROFILE: 'full',
      REPORTS_DIR: reportsDir,
      ...options.env,
    };
    if (options.untrusted) delete env.NODE_EXTRA_CA_CERTS;
    const { code, output } = await spawnCertify(CERTIFY_CLI, env, options.timeoutMs ?? 240_000);
    const after = await target.inventory();
    const outcome: StagingOutcome = {
      verdict: 'missing',
      exitCode: code,
      failing: {},
      notCertified: {},
      warned: {},
      retry: target.stats(),
      restored: before === after,
      before,
      after,
      durationMs: Date.now() - started,
      tail: output.split('\n').slice(-40).join('\n'),
    };
    const file = path.join(reportsDir, 'conformance.json');
    if (fs.existsSync(file)) {
      const report = JSON.parse(fs.readFileSync(file, 'utf8')) as ConformanceJson;
      outcome.verdict = report.verdict === 'pass' ? 'pass' : 'fail';
      for (const r of report.requirements ?? []) {
        if (r.status === 'warn') outcome.warned[r.id] = (r.evidence ?? []).flatMap((e) => e.warnings ?? []);
        if (r.status !== 'fail') continue;
        const error = r.evidence?.find((e) => e.errors?.length)?.errors?.[0];
        outcome.failing[r.id] = [r.reason, error].filter(Boolean).join(' — ').replace(/\s+/g, ' ').slice(0, 600);
      }
      for (const n of report.notCertified ?? []) outcome.notCertified[n.id] = n.reason;
    }
    return outcome;
  } finally {
    fs.rmSync(reportsDir, { recursive: true, force: true });
  }
}
