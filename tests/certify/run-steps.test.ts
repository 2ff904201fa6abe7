import { test, expect } from '../test.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { outcomeOf, printRun } from '../../certify/run.ts';
import { consoleFor } from '../../certify/steps/console.ts';
import { judge, scanSecrets, type Evidence } from '../../certify/steps/judge-run.ts';
import { lockTheTarget, preflight, TargetSession, type OpenedTarget } from '../../certify/steps/open-target.ts';
import { prepareOrStop, prepareRun, type PreparedRun } from '../../certify/steps/prepare.ts';
import { describeTarget, type ResolvedTarget } from '../../certify/steps/resolve-target.ts';
import { listLeftOut, nameOpenAfterStop, repairFirst, settleJournal, startPacer, type ChecksRan } from '../../certify/steps/run-checks.ts';
import { isStop } from '../../certify/steps/run-options.ts';
import { writeArtifacts } from '../../certify/steps/write-artifacts.ts';
import type { MergedRun } from '../../certify/steps/merge.ts';
import { EXIT } from '../../core/exit-codes.ts';
import { appendRecord } from '../../core/journal.ts';
import { findNeedle, secretNeedles } from '../../core/secrets.ts';
import { emptyRepair } from '../../suites/journal/repair.ts';

/** certify's typed steps (certify/run.ts, certify/steps/open-target.ts, run-checks.ts, judge-run.ts, write-artifacts.ts). */

const KEY = 'ik_run_steps_5e6f7a8b9c0d1e2f';
const JOURNAL = 'journal-run-steps.jsonl';

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'certify-run-steps-'));
}

/** A run past "resolve the target": prepared in `dir`, a target that records its close, the run's console. */
function openedIn(
  dir: string,
  env: Record<string, string> = {},
  signal?: AbortSignal,
): { run: PreparedRun; opened: OpenedTarget; out: () => string; closed: string[]; signal?: AbortSignal } {
  let said = '';
  const closed: string[] = [];
  const options = {
    env: { REPORTS_DIR: path.join(dir, 'reports'), BASE_URL: 'http://127.0.0.1:1/v1', API_KEY: KEY, ...env },
    write: (t: string) => (said += t),
    onlyPhases: ['functional' as const],
    ...(signal ? { signal } : {}),
  };
  const prepared = prepareRun(options);
  if (!prepared.ok) throw new Error(prepared.errors.join('; '));
  const targetEnv = { ...options.env };
  const target: ResolvedTarget = {
    env: targetEnv,
    description: describeTarget('full', targetEnv),
    close: async () => void closed.push('target'),
  };
  return {
    run: prepared.run,
    opened: { session: new TargetSession(target), console: consoleFor(targetEnv, options.write) },
    out: () => said,
    closed,
    ...(signal ? { signal } : {}),
  };
}

const merged = (tests: MergedRun['tests'] = []): MergedRun => ({
  tests,
  runErrors: [],
  generatedAt: '2026-11-25T00:00:00.000Z',
  loadWritten: false,
  redactions: { leaks: [], inMemory: 0 },
});

const checks = (): ChecksRan => ({
  results: [],
  runErrors: [],
  notRun: [],
  journal: { file: JOURNAL, repair: emptyRepair(), end: emptyRepair(), requests: 0 },
});

/** The evidence of a run whose phases ran nothing. */
function evidenceOf(o: ReturnType<typeof openedIn>): Evidence {
  return { run: o.run, opened: o.opened, checks: checks(), closed: { pacing: [] }, merged: merged() };
}

test('the target session: closed once, the pacer first (its report kept), then the target, then the lock; the target is closed even when the pacer close throws', async () => {
  const dir = tempDir();
  try {
    const o = openedIn(dir);
    const order: string[] = [];
    o.opened.session.holdPacer({
      env: { CONFORMANCE_PACER_URL: 'http://127.0.0.1:1' },
      progress: () => ({ requests: 0, refused: 0, waits: 0 }),
      close: async () => (order.push('pacer'), []),
      pendingUntilMs: () => 1234,
    });
    const report = { waitedFor: [], waitedS: 0, waitedForThis: [] };
    o.opened.session.holdLock({ report, release: (until) => (order.push(`lock ${until}`), report) });
    const closed = await o.opened.session.close();
    await o.opened.session.close();
    expect([...order.slice(0, 1), ...o.closed, ...order.slice(1)]).toEqual(['pacer', 'target', 'lock 1234']);
    expect(closed).toEqual({ pacing: [], otherRuns: report });

    const failing = openedIn(dir);
    failing.opened.session.holdPacer({
      env: { CONFORMANCE_PACER_URL: 'http://127.0.0.1:1' },
      progress: () => ({ requests: 0, refused: 0, waits: 0 }),
      close: async () => {
        throw new Error('pacer gone');
      },
      pendingUntilMs: () => 0,
    });
    await expect(failing.opened.session.close()).rejects.toThrow('pacer gone');
    expect(failing.closed).toEqual(['target']);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('prepare: a usage error stops the run with exit 2 and the reasons, no key in them, nothing written', () => {
  const dir = tempDir();
  try {
    let out = '';
    const stopped = prepareOrStop({
      env: { BASE_URL: `https://user:${KEY}@example.test/v1`, REPORTS_DIR: path.join(dir, 'r') },
      write: (t) => (out += t),
    });
    if (!isStop(stopped)) throw new Error('expected a stop');
    expect(stopped.exitCode).toBe(EXIT.usage);
    expect(stopped.reasons.join('\n')).toMatch(/BASE_URL must not carry credentials/);
    expect(secretNeedles([{ name: 'API_KEY', value: KEY }]).flatMap((n) => findNeedle(out + stopped.reasons.join('\n'), n))).toEqual([]);
    expect(fs.readdirSync(dir)).toEqual([]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('preflight: an unreachable target stops the run with exit 3 and one reason; a signal stops it with 143 for SIGTERM', async () => {
  const dir = tempDir();
  try {
    const o = openedIn(dir);
    const pre = await preflight(o.run, o.opened);
    if (!isStop(pre)) throw new Error('expected a stop');
    expect(pre.exitCode).toBe(EXIT.unreachable);
    expect(pre.reasons).toEqual([expect.stringMatching(/^preflight failed: /)]);
    expect(o.out()).toContain('certify: preflight failed: ');

    const controller = new AbortController();
    controller.abort('SIGTERM');
    const stopped = openedIn(dir, {}, controller.signal);
    const again = await preflight(stopped.run, stopped.opened, controller.signal);
    expect(isStop(again) && again.exitCode).toBe(143);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('scan secrets, judge, write, certificate, print: a key found in a report is an input of the verdict, which does not pass', () => {
  const dir = tempDir();
  try {
    const o = openedIn(dir);
    const e = evidenceOf(o);
    fs.writeFileSync(path.join(o.run.reportsDir, 'results.json'), JSON.stringify({ header: `Bearer ${KEY}` }));
    const scanned = scanSecrets(o.run, o.opened.console, e.merged);
    expect(scanned.findings).toHaveLength(1);
    expect(o.out()).toMatch(/secret scan of \d+ files: 1 finding\(s\)/);
    const report = judge(e, scanned.findings);
    expect(report.problems.map((p) => p.kind)).toContain('secret-in-artifact');
    expect(report.gate.exitCode).not.toBe(EXIT.pass);
    expect(report.journal, 'the journal goes into the report').toEqual(e.checks.journal);
    const artifacts = writeArtifacts(e, scanned, report, {});
    const written = JSON.parse(fs.readFileSync(path.join(o.run.reportsDir, 'conformance.json'), 'utf8'));
    expect(written, 'the report returned is conformance.json as written').toEqual(artifacts.report);
    expect(fs.existsSync(path.join(o.run.reportsDir, 'evidence.har'))).toBe(true);
    expect(artifacts.certificate?.gate).toEqual(report.gate);
    expect(artifacts.keysInLateFiles).toEqual([]);
    printRun(e, artifacts, Date.now());
    expect(o.out()).toContain(`, exit ${report.gate.exitCode} — `);
    const files = fs
      .readdirSync(o.run.reportsDir, { recursive: true })
      .map(String)
      .filter((f) => fs.statSync(path.join(o.run.reportsDir, f)).isFile());
    for (const f of files) expect(fs.readFileSync(path.join(o.run.reportsDir, f), 'latin1').includes(KEY), f).toBe(false);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('scan what was written after the verdict: a key in a file written after the scan is scrubbed and judged like any key found: the reports and the certificate are written again and say the same as the exit code', () => {
  const dir = tempDir();
  try {
    const o = openedIn(dir);
    const e = evidenceOf(o);
    const scanned = scanSecrets(o.run, o.opened.console, e.merged);
    const first = judge(e, scanned.findings);
    const clean = writeArtifacts(e, scanned, first, {});
    expect(clean.keysInLateFiles, 'the reports written from redacted data hold no key').toEqual([]);
    expect(clean.report, 'judged once').toBe(first);
    // A writer that forgot to redact, after the verdict.
    fs.writeFileSync(path.join(o.run.reportsDir, 'stray.md'), `observed Authorization: Bearer ${KEY}\n`);
    const again = writeArtifacts(e, scanned, first, {});
    expect(o.out()).toMatch(
      /a key reached 1 file\(s\) written after the verdict; judged again with it\n {2}✗ [^\n]*stray\.md[^\n]*scrubbed in place/,
    );
    expect(again.report.problems.map((p) => p.kind)).toContain('secret-in-artifact');
    expect(again.report.gate.exitCode).not.toBe(EXIT.pass);
    expect(again.report.gate).not.toEqual(first.gate);
    // Every file and the outcome tell the same story.
    const written = JSON.parse(fs.readFileSync(path.join(o.run.reportsDir, 'conformance.json'), 'utf8'));
    expect(written).toEqual(again.report);
    expect(again.certificate?.gate).toEqual(again.report.gate);
    expect(outcomeOf(again).exitCode).toBe(again.report.gate.exitCode);
    expect(again.keysInLateFiles, 'the files written again hold no key').toEqual([]);
    for (const f of fs.readdirSync(o.run.reportsDir, { recursive: true }).map(String)) {
      const file = path.join(o.run.reportsDir, f);
      if (fs.statSync(file).isFile()) expect(fs.readFileSync(file, 'latin1').includes(KEY), f).toBe(false);
    }
    expect(o.out().includes(KEY)).toBe(false);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the outcome: the exit code of the gate; a key in a file written again makes it harness trouble (exit 5)', () => {
  const dir = tempDir();
  try {
    const o = openedIn(dir);
    const e = evidenceOf(o);
    const report = judge(e, []);
    expect(outcomeOf({ report, keysInLateFiles: [] })).toEqual({ exitCode: report.gate.exitCode, report });
    const keysInLateFiles = ['conformance.md: API_KEY (raw) — scrubbed in place'];
    expect(outcomeOf({ report, keysInLateFiles })).toEqual({ exitCode: EXIT.harness, report, keysInLateFiles });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('start the pacer, repair first, list what is left out, settle the journal, close: each returns its part; nothing open is nothing sent', async () => {
  const dir = tempDir();
  try {
    const o = openedIn(dir);
    const started = await startPacer(o.run, o.opened, JOURNAL);
    expect(started.childEnv.CONFORMANCE_PACER_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+/);
    expect(started.childEnv.CERTIFY_JOURNAL_FILE).toBe(path.join(o.run.reportsDir, JOURNAL));
    expect(started.childEnv.REPORTS_DIR).toBe(o.run.reportsDir);
    const repaired = await repairFirst(o.run, started, o.opened.console.say);
    expect(repaired.requests, 'no journal left open: nothing is sent').toBe(0);
    const leftOut = await listLeftOut(o.run, started.childEnv, o.opened.console);
    expect(leftOut.notRun, 'the profile leaves nothing out').toEqual([]);
    const settled = await settleJournal(o.run, repaired, started.childEnv, o.opened.console.detail);
    expect(settled).toMatchObject({ file: JOURNAL, requests: 0 });
    const closed = await o.opened.session.close();
    expect(closed.pacing, "the pacer's report is kept").toEqual([]);
    expect(o.closed).toEqual(['target']);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('after a signal, the pets the run changed and did not put back are named at run level with the ways to put them back; a closed change, a message and a run not stopped say nothing', async () => {
  const dir = tempDir();
  try {
    const base = { v: 1 as const, at: '2026-11-26T00:00:00.000Z', target: 'http://127.0.0.1:1/v1' };
    const write = (run: PreparedRun) => {
      const file = path.join(run.reportsDir, JOURNAL);
      appendRecord(file, { ...base, kind: 'change', entry: 'a1', by: 'load LOAD-01 (capacity mix)', petId: '1', original: '12' });
      appendRecord(file, { ...base, kind: 'change', entry: 'b2', by: 'functional UPD-02', petId: '2', original: '0' });
      appendRecord(file, { v: 1, at: base.at, kind: 'done', entry: 'b2', by: 'functional UPD-02', how: 'restored' });
      appendRecord(file, { ...base, kind: 'message', entry: 'c3', by: 'functional MSG-01', address: 'http://127.0.0.1:1/quickstart' });
      appendRecord(file, { ...base, kind: 'change', entry: 'd4', by: 'functional UPD-04', petId: '987654321', original: null });
      appendRecord(file, { ...base, kind: 'change', entry: 'e5', by: 'functional ERR-01', petId: '987654321', original: null });
    };
    const stopped = new AbortController();
    stopped.abort('SIGINT');
    const s = openedIn(dir, {}, stopped.signal);
    write(s.run);
    const problem = nameOpenAfterStop(s.run, JOURNAL, s.opened.console, stopped.signal);
    expect(s.out()).toContain(
      `certify: stopped by SIGINT before it put back or confirmed 1 pet(s) it changed: pet 1 (quantity 12 before; by load LOAD-01 (capacity mix)); and requests on 1 pet id(s) that were not listed (987654321), not yet checked to have created nothing; they are in ${JOURNAL}: the next certify with this reports folder puts them back first, or \`inventory-conformance restore\` does it alone`,
    );
    expect(s.out()).not.toContain('pet 2');
    expect(problem, 'kept as a run problem for the reports and the certificate').toMatchObject({
      kind: 'target-left-changed',
      observed: expect.stringMatching(/^1 pet\(s\) it changed: pet 1 \(quantity 12 before/),
    });
    const running = openedIn(path.join(dir, 'running'));
    write(running.run);
    expect(nameOpenAfterStop(running.run, JOURNAL, running.opened.console)).toBeUndefined();
    expect(running.out(), 'a run not stopped settles its journal instead').not.toContain('stopped by');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("lock the target: a free lock is taken and released when the target is closed; another run's lock past OTHER_RUN_WAIT_S stops the run with exit 5, a signal with 130; nothing sent, no key said", async () => {
  const dir = tempDir();
  const base = `http://127.0.0.1:${20_000 + Math.floor(Math.random() * 40_000)}/v1`;
  try {
    const free = openedIn(dir, { BASE_URL: base, OTHER_RUN_WAIT_S: '1' });
    expect(isStop(await lockTheTarget(free.run, free.opened, {}))).toBe(false);

    const late = openedIn(dir, { BASE_URL: base, OTHER_RUN_WAIT_S: '1' });
    const refused = await lockTheTarget(late.run, late.opened, {});
    if (!isStop(refused)) throw new Error('expected a stop');
    expect(refused.exitCode).toBe(EXIT.harness);
    expect(refused.reasons.join('\n')).toMatch(
      /another certification of this target on this machine \(pid \d+.*OTHER_RUN_WAIT_S.*nothing was sent/,
    );
    expect(late.out(), 'the wait is said when it starts').toMatch(/holds its turn: waiting for it to end \(at most 1 s\)/);
    expect(late.out()).not.toContain(KEY);

    const ac = new AbortController();
    const stopped = openedIn(dir, { BASE_URL: base, OTHER_RUN_WAIT_S: '60' }, ac.signal);
    setTimeout(() => ac.abort('SIGINT'), 200);
    const aborted = await lockTheTarget(stopped.run, stopped.opened, { signal: ac.signal });
    expect(isStop(aborted) && aborted.exitCode).toBe(130);

    const closed = await free.opened.session.close();
    expect(closed.otherRuns?.waitedForThis.length, 'the runs that waited are named').toBeGreaterThan(0);
    const next = openedIn(dir, { BASE_URL: base, OTHER_RUN_WAIT_S: '1' });
    expect(isStop(await lockTheTarget(next.run, next.opened, {})), 'the lock released is free').toBe(false);
    await next.opened.session.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
