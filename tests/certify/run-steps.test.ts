import { test, expect } from '../test.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { outcomeOf, STEPS } from '../../certify/run.ts';
import { closeTarget, newContext, runSteps, type RunContext, type Step } from '../../certify/steps/context.ts';
import {
  certificate,
  judge,
  listLeftOut,
  prepare,
  preflight,
  print,
  repairFirst,
  rescanWritten,
  scanSecrets,
  settleJournal,
  nameOpenAfterStop,
  startPacer,
  takeTargetTurn,
  voiceOf,
  writeArtifacts,
} from '../../certify/steps/named.ts';
import { prepareRun, type PreparedRun } from '../../certify/steps/prepare.ts';
import { describeTarget, type ResolvedTarget } from '../../certify/steps/resolve-target.ts';
import type { MergedRun } from '../../certify/steps/merge.ts';
import { EXIT } from '../../core/exit-codes.ts';
import { appendRecord } from '../../core/journal.ts';
import { findNeedle, secretNeedles } from '../../core/secrets.ts';

/** certify's run as a list of named steps over one context (certify/run.ts, certify/steps/context.ts, certify/steps/named.ts). */

const KEY = 'ik_run_steps_5e6f7a8b9c0d1e2f';

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'certify-run-steps-'));
}

/** A context past "resolve the target": a prepared run in `dir`, a target that records its close, the run's voice. */
function contextIn(
  dir: string,
  env: Record<string, string> = {},
  signal?: AbortSignal,
): { ctx: RunContext; out: () => string; closed: string[] } {
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
  const ctx = newContext(options);
  ctx.run = prepared.run;
  const targetEnv = { ...options.env };
  const target: ResolvedTarget = {
    env: targetEnv,
    description: describeTarget('full', targetEnv),
    close: async () => void closed.push('target'),
  };
  ctx.target = target;
  ctx.voice = voiceOf(targetEnv, options.write);
  return { ctx, out: () => said, closed };
}

const merged = (tests: MergedRun['tests'] = []): MergedRun => ({
  tests,
  runErrors: [],
  generatedAt: '2026-11-25T00:00:00.000Z',
  loadWritten: false,
  redactions: { leaks: [], inMemory: 0 },
});

test('STEPS: the run is one visible list of named steps; judged once, after the secret scan; written, certified and printed after it', () => {
  const names = STEPS.map((s) => s.name);
  expect(names).toEqual([
    'prepare',
    'resolve the target',
    "take the target's turn",
    'preflight',
    'start the pacer',
    'repair first',
    'list what is left out',
    'run the phases',
    'settle the journal',
    'name what the journal leaves open',
    'close the pacer and the target',
    'merge',
    'scan secrets',
    'judge',
    'write the reports',
    'certificate',
    'scan what was written after the verdict',
    'print',
  ]);
  expect(names.filter((n) => n === 'judge')).toHaveLength(1);
  expect(names.indexOf('scan secrets')).toBeLessThan(names.indexOf('judge'));
  expect(names.indexOf('judge')).toBeLessThan(names.indexOf('write the reports'));
  expect(
    STEPS.filter((s) => s.whenStopped === 'skip').map((s) => s.name),
    'after a signal only the journal is left to the next run',
  ).toEqual(['settle the journal']);
});

test('run loop: a step that stops ends the run, the prepared run is given up, and the pacer and target are closed', async () => {
  const dir = tempDir();
  try {
    const { ctx, closed } = contextIn(dir);
    ctx.pacer = {
      env: { CONFORMANCE_PACER_URL: 'http://127.0.0.1:1' },
      progress: () => ({ requests: 0, refused: 0, waits: 0 }),
      close: async () => (closed.push('pacer'), []),
      pendingUntilMs: () => 0,
    };
    const ran: string[] = [];
    const steps: Step[] = [
      { name: 'a', run: () => void ran.push('a') },
      { name: 'b', run: (c) => void (ran.push('b'), (c.stop = { exitCode: EXIT.unreachable, reasons: ['down'] })) },
      { name: 'c', run: () => void ran.push('c') },
    ];
    await runSteps(steps, ctx);
    expect(ran).toEqual(['a', 'b']);
    expect(ctx.stop).toEqual({ exitCode: EXIT.unreachable, reasons: ['down'] });
    expect(closed).toEqual(['pacer', 'target']);
    expect(ctx.pacing).toEqual([]);
    expect(fs.existsSync(ctx.run!.workDir), 'the scratch folder is removed').toBe(false);
    await closeTarget(ctx);
    expect(closed, 'closed once').toEqual(['pacer', 'target']);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('run loop: a step that throws still closes the target; after a signal a step marked skip is passed over, the others run', async () => {
  const dir = tempDir();
  try {
    const { ctx, closed } = contextIn(dir);
    await expect(
      runSteps(
        [
          {
            name: 'boom',
            run: () => {
              throw new Error('boom');
            },
          },
        ],
        ctx,
      ),
    ).rejects.toThrow('boom');
    expect(closed).toEqual(['target']);

    const controller = new AbortController();
    controller.abort('SIGTERM');
    const stopped = contextIn(dir, {}, controller.signal);
    const ran: string[] = [];
    await runSteps(
      [
        { name: 'a', run: () => void ran.push('a') },
        { name: 'settle', run: () => void ran.push('settle'), whenStopped: 'skip' },
        { name: 'judge', run: () => void ran.push('judge') },
      ],
      stopped.ctx,
    );
    expect(ran).toEqual(['a', 'judge']);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('prepare: a usage error stops the run with exit 2 and the reasons, no key in them, nothing written', () => {
  const dir = tempDir();
  try {
    let out = '';
    const ctx = newContext({
      env: { BASE_URL: `https://user:${KEY}@example.test/v1`, REPORTS_DIR: path.join(dir, 'r') },
      write: (t) => (out += t),
    });
    prepare(ctx);
    expect(ctx.stop?.exitCode).toBe(EXIT.usage);
    expect(ctx.stop?.reasons.join('\n')).toMatch(/BASE_URL must not carry credentials/);
    expect(secretNeedles([{ name: 'API_KEY', value: KEY }]).flatMap((n) => findNeedle(out + ctx.stop!.reasons.join('\n'), n))).toEqual([]);
    expect(ctx.run).toBeUndefined();
    expect(fs.readdirSync(dir)).toEqual([]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('preflight: an unreachable target stops the run with exit 3 and one reason; a signal stops it with 143 for SIGTERM', async () => {
  const dir = tempDir();
  try {
    const { ctx, out } = contextIn(dir);
    await preflight(ctx);
    expect(ctx.stop?.exitCode).toBe(EXIT.unreachable);
    expect(ctx.stop?.reasons).toEqual([expect.stringMatching(/^preflight failed: /)]);
    expect(out()).toContain('certify: preflight failed: ');

    const controller = new AbortController();
    controller.abort('SIGTERM');
    const stopped = contextIn(dir, {}, controller.signal);
    await preflight(stopped.ctx);
    expect(stopped.ctx.stop?.exitCode).toBe(143);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('scan secrets, judge, write, certificate, print: a key found in a report is an input of the verdict, which does not pass', () => {
  const dir = tempDir();
  try {
    const { ctx, out } = contextIn(dir);
    const run = ctx.run as PreparedRun;
    ctx.merged = merged();
    fs.writeFileSync(path.join(run.reportsDir, 'results.json'), JSON.stringify({ header: `Bearer ${KEY}` }));
    scanSecrets(ctx);
    expect(ctx.secretFindings).toHaveLength(1);
    expect(out()).toMatch(/secret scan of \d+ files: 1 finding\(s\)/);
    judge(ctx);
    expect(ctx.report?.problems.map((p) => p.kind)).toContain('secret-in-artifact');
    expect(ctx.report?.gate.exitCode).not.toBe(EXIT.pass);
    expect(ctx.report?.journal, 'the journal goes into the report').toEqual(ctx.journal);
    writeArtifacts(ctx);
    const written = JSON.parse(fs.readFileSync(path.join(run.reportsDir, 'conformance.json'), 'utf8'));
    expect(written, 'the report returned is conformance.json as written').toEqual(ctx.report);
    expect(fs.existsSync(path.join(run.reportsDir, 'evidence.har'))).toBe(true);
    certificate(ctx);
    expect(ctx.certificate?.gate).toEqual(ctx.report?.gate);
    print(ctx);
    expect(out()).toContain(`, exit ${ctx.report?.gate.exitCode} — `);
    const files = fs
      .readdirSync(run.reportsDir, { recursive: true })
      .map(String)
      .filter((f) => fs.statSync(path.join(run.reportsDir, f)).isFile());
    for (const f of files) expect(fs.readFileSync(path.join(run.reportsDir, f), 'latin1').includes(KEY), f).toBe(false);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('scan what was written after the verdict: a key in a file written after the scan is scrubbed and judged like any key found: the reports and the certificate are written again and say the same as the exit code', async () => {
  const dir = tempDir();
  try {
    const { ctx, out } = contextIn(dir);
    const run = ctx.run as PreparedRun;
    ctx.merged = merged();
    scanSecrets(ctx);
    judge(ctx);
    writeArtifacts(ctx);
    certificate(ctx);
    const firstGate = ctx.report!.gate;
    rescanWritten(ctx);
    expect(ctx.lateFindings, 'the reports written from redacted data hold no key').toBeUndefined();
    expect(ctx.report?.problems.map((p) => p.kind)).not.toContain('secret-in-artifact');
    // A writer that forgot to redact, after the verdict.
    fs.writeFileSync(path.join(run.reportsDir, 'conformance.md'), `observed Authorization: Bearer ${KEY}\n`);
    rescanWritten(ctx);
    expect(out()).toMatch(
      /a key reached 1 file\(s\) written after the verdict; judged again with it\n {2}✗ [^\n]*conformance\.md[^\n]*scrubbed in place/,
    );
    expect(ctx.report?.problems.map((p) => p.kind)).toContain('secret-in-artifact');
    expect(ctx.report?.gate.exitCode).not.toBe(EXIT.pass);
    expect(ctx.report?.gate).not.toEqual(firstGate);
    // Every file and the outcome tell the same story.
    const written = JSON.parse(fs.readFileSync(path.join(run.reportsDir, 'conformance.json'), 'utf8'));
    expect(written).toEqual(ctx.report);
    expect(ctx.certificate?.gate).toEqual(ctx.report?.gate);
    expect(outcomeOf(ctx).exitCode).toBe(ctx.report?.gate.exitCode);
    expect(ctx.lateFindings, 'the files written again hold no key').toBeUndefined();
    for (const f of fs.readdirSync(run.reportsDir, { recursive: true }).map(String)) {
      const file = path.join(run.reportsDir, f);
      if (fs.statSync(file).isFile()) expect(fs.readFileSync(file, 'latin1').includes(KEY), f).toBe(false);
    }
    expect(out().includes(KEY)).toBe(false);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the outcome: the exit code of the gate; a key in a file written after the verdict makes it harness trouble (exit 5); a stopped run gives its reasons', () => {
  const dir = tempDir();
  try {
    const { ctx } = contextIn(dir);
    ctx.merged = merged();
    scanSecrets(ctx);
    judge(ctx);
    const gateExit = ctx.report!.gate.exitCode;
    expect(outcomeOf(ctx)).toMatchObject({ exitCode: gateExit, report: ctx.report });
    expect(outcomeOf(ctx).lateFindings).toBeUndefined();
    ctx.lateFindings = ['conformance.md: API_KEY (raw) — scrubbed in place'];
    expect(outcomeOf(ctx)).toMatchObject({ exitCode: EXIT.harness, report: ctx.report, lateFindings: ctx.lateFindings });
    ctx.stop = { exitCode: EXIT.unreachable, reasons: ['target unreachable'] };
    expect(outcomeOf(ctx)).toEqual({ exitCode: EXIT.unreachable, reasons: ['target unreachable'] });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('start the pacer, repair first, list what is left out, settle the journal, close: each extends the context; nothing open is nothing sent', async () => {
  const dir = tempDir();
  try {
    const { ctx, closed } = contextIn(dir);
    await startPacer(ctx);
    expect(ctx.childEnv?.CONFORMANCE_PACER_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+/);
    expect(ctx.childEnv?.CERTIFY_JOURNAL_FILE).toBe(path.join(ctx.run!.reportsDir, ctx.journalFile));
    expect(ctx.childEnv?.REPORTS_DIR).toBe(ctx.run!.reportsDir);
    await repairFirst(ctx);
    expect(ctx.journal.requests, 'no journal left open: nothing is sent').toBe(0);
    await listLeftOut(ctx);
    expect(ctx.notRun, 'the profile leaves nothing out').toEqual([]);
    await settleJournal(ctx);
    expect(ctx.journal).toMatchObject({ file: ctx.journalFile, requests: 0 });
    await closeTarget(ctx);
    expect(ctx.pacer).toBeUndefined();
    expect(ctx.pacing, "the pacer's report is kept").toEqual([]);
    expect(closed).toEqual(['target']);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('after a signal, the pets the run changed and did not put back are named at run level with the ways to put them back; a closed change, a message and a run not stopped say nothing', async () => {
  const dir = tempDir();
  try {
    const base = { v: 1 as const, at: '2026-11-26T00:00:00.000Z', target: 'http://127.0.0.1:1/v1' };
    const write = (ctx: RunContext) => {
      const file = path.join(ctx.run!.reportsDir, ctx.journalFile);
      appendRecord(file, { ...base, kind: 'change', entry: 'a1', by: 'load LOAD-01 (capacity mix)', petId: '1', original: '12' });
      appendRecord(file, { ...base, kind: 'change', entry: 'b2', by: 'functional UPD-02', petId: '2', original: '0' });
      appendRecord(file, { v: 1, at: base.at, kind: 'done', entry: 'b2', by: 'functional UPD-02', how: 'restored' });
      appendRecord(file, { ...base, kind: 'message', entry: 'c3', by: 'functional MSG-01', address: 'http://127.0.0.1:1/quickstart' });
      appendRecord(file, { ...base, kind: 'change', entry: 'd4', by: 'functional UPD-04', petId: '987654321', original: null });
      appendRecord(file, { ...base, kind: 'change', entry: 'e5', by: 'functional ERR-01', petId: '987654321', original: null });
    };
    const stopped = new AbortController();
    stopped.abort('SIGINT');
    const s = contextIn(dir, {}, stopped.signal);
    write(s.ctx);
    nameOpenAfterStop(s.ctx);
    expect(s.out()).toContain(
      `certify: stopped by SIGINT before it put back or confirmed 1 pet(s) it changed: pet 1 (quantity 12 before; by load LOAD-01 (capacity mix)); and requests on 1 pet id(s) that were not listed (987654321), not yet checked to have created nothing; they are in ${s.ctx.journalFile}: the next certify with this reports folder puts them back first, or \`inventory-conformance restore\` does it alone`,
    );
    expect(s.out()).not.toContain('pet 2');
    expect(s.ctx.openAfterStop, 'kept as a run problem for the reports and the certificate').toMatchObject({
      kind: 'target-left-changed',
      observed: expect.stringMatching(/^1 pet\(s\) it changed: pet 1 \(quantity 12 before/),
    });
    const running = contextIn(dir);
    write(running.ctx);
    nameOpenAfterStop(running.ctx);
    expect(running.out(), 'a run not stopped settles its journal instead').not.toContain('stopped by');
    expect(running.ctx.openAfterStop).toBeUndefined();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("take the target's turn: a free turn is taken and given back when the target is closed; another run's turn past OTHER_RUN_WAIT_S stops the run with exit 5, a signal with 130; nothing sent, no key said", async () => {
  const dir = tempDir();
  const base = `http://127.0.0.1:${20_000 + Math.floor(Math.random() * 40_000)}/v1`;
  try {
    const free = contextIn(dir, { BASE_URL: base, OTHER_RUN_WAIT_S: '1' });
    await takeTargetTurn(free.ctx);
    expect(free.ctx.stop).toBeUndefined();
    expect(free.ctx.turn, 'the turn is held until the target is closed').toBeDefined();

    const late = contextIn(dir, { BASE_URL: base, OTHER_RUN_WAIT_S: '1' });
    await takeTargetTurn(late.ctx);
    expect(late.ctx.stop?.exitCode).toBe(EXIT.harness);
    expect(late.ctx.stop?.reasons.join('\n')).toMatch(
      /another certification of this target on this machine \(pid \d+.*OTHER_RUN_WAIT_S.*nothing was sent/,
    );
    expect(late.out(), 'the wait is said when it starts').toMatch(/holds its turn: waiting for it to end \(at most 1 s\)/);
    expect(late.out()).not.toContain(KEY);

    const ac = new AbortController();
    const stopped = contextIn(dir, { BASE_URL: base, OTHER_RUN_WAIT_S: '60' }, ac.signal);
    setTimeout(() => ac.abort('SIGINT'), 200);
    await takeTargetTurn(stopped.ctx);
    expect(stopped.ctx.stop?.exitCode).toBe(130);

    await closeTarget(free.ctx);
    expect(free.ctx.turn).toBeUndefined();
    expect(free.ctx.otherRuns?.waitedForThis.length, 'the runs that waited are named').toBeGreaterThan(0);
    const next = contextIn(dir, { BASE_URL: base, OTHER_RUN_WAIT_S: '1' });
    await takeTargetTurn(next.ctx);
    expect(next.ctx.stop, 'the turn given back is free').toBeUndefined();
    await closeTarget(next.ctx);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
