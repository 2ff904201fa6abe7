/**
 * certify's named steps, each a function of the run's context (`context.ts`): it reads what the
 * earlier steps set and adds its own part. The work of each is in its own module of `steps/`; this
 * file only wires it to the context. The order is `STEPS` in `certify/run.ts`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { EXIT } from '../../core/exit-codes.ts';
import { readJournals } from '../../core/journal.ts';
import { redactorFor, secretsFromEnv, SECRET_VARIABLES } from '../../core/secrets.ts';
import { certificateStep } from '../certificate/index.ts';
import { inputRedactor, PHASES } from '../env.ts';
import { writeEvidenceHar } from '../evidence-har.ts';
import { listPhases } from '../phases.ts';
import { listFiles } from '../secret-scan.ts';
import type { VerdictInput } from '../verdict.ts';
import { need, type RunContext, type RunVoice } from './context.ts';
import { gateJunitFile, judgeReport, redactReport, verdictInputFor, writeReportFiles } from './judge.ts';
import { listLeftOut as listLeftOutPhases } from './left-out.ts';
import { mergeRun } from './merge.ts';
import { startRunPacer } from './pacer.ts';
import { initialHoldsOf, journalRefusals, pendingHolds } from './holds.ts';
import { interruptedExit, preflight as preflightTarget, PREFLIGHT_EXIT } from './preflight.ts';
import { printSummary } from './print.ts';
import { prepareRun } from './prepare.ts';
import { journalProblem, openAfterStopProblem, repairFirst as repairJournal, settleOwn } from './repair.ts';
import { resolveTarget as startTargetOf } from './resolve-target.ts';
import { runAllPhases } from './run-phases.ts';
import { scanSecrets as scanFolder } from './scan-secrets.ts';
import { acrossMachinesNote, isHeld, takeTurn } from './turns.ts';

/** Step "prepare": the variables, the reports folder, the gate's inputs, the ledger; a problem is a usage error (exit 2), every key redacted from it. */
export function prepare(ctx: RunContext): void {
  const { env, write, onlyPhases, onlyTests, onlyTitles, maxFailures, configFile, ledgerFile, verdictOnly } = ctx.options;
  const prepared = prepareRun({ env, onlyPhases, onlyTests, onlyTitles, maxFailures, configFile, ledgerFile, verdictOnly });
  if (prepared.ok) {
    ctx.run = prepared.run;
    return;
  }
  const redact = inputRedactor(env);
  const reasons = prepared.errors.map((e) => redact(e));
  write('certify: usage error:\n');
  for (const r of reasons) write(`  - ${r}\n`);
  write('Run `npx inventory-conformance certify --help` for the variables (`npm run certify -- --help` in a clone).\n');
  ctx.stop = { exitCode: EXIT.usage, reasons };
}

/** The run's voice: the target's keys, the redaction of all of them, a `say` that redacts, and a `detail` only a verbose console shows. */
export function voiceOf(targetEnv: Record<string, string | undefined>, write: (text: string) => void, verbose = false): RunVoice {
  const secrets = secretsFromEnv(targetEnv);
  const redact = redactorFor(secrets);
  const say = (text: string) => write(redact(text));
  return { secrets, redact, say, verbose, detail: verbose ? say : () => undefined };
}

/** Step "resolve the target": `BASE_URL`, or the bundled reference server; one that does not start is harness trouble (exit 5). Names the target. */
export async function resolveTarget(ctx: RunContext): Promise<void> {
  const run = need(ctx.run, 'the prepared run');
  try {
    ctx.target = await startTargetOf(run.config, ctx.options.env);
  } catch (error) {
    const reason = `could not start the bundled reference server: ${(error as Error).message}`;
    ctx.options.write(`certify: ${reason}\n`);
    ctx.stop = { exitCode: EXIT.harness, reasons: [reason] };
    return;
  }
  const target = ctx.target;
  ctx.voice = voiceOf(target.env, ctx.options.write, run.settings.CONFORMANCE_VERBOSE);
  const ref = target.reference;
  ctx.voice.say(
    `certify: target ${target.env.BASE_URL}${target.env.API_URL ? ` (messages: ${target.env.API_URL})` : ''}` +
      (ref
        ? ` — bundled reference server, minute window ${ref.settings.minuteWindowMs / 1000} s, ban ${ref.settings.banMs / 1000} s\n`
        : '\n'),
  );
}

/** Step "preflight": one request without a key; unreachable, TLS not verified, a redirect or not this API stops the run (exit 3), a signal with 130/143. Then says what the run is about to do. */
export async function preflight(ctx: RunContext): Promise<void> {
  const run = need(ctx.run, 'the prepared run');
  const target = need(ctx.target, 'the target');
  const { say, detail, redact } = need(ctx.voice, "the run's voice");
  const { signal } = ctx.options;
  const pre = await preflightTarget(
    { baseUrl: target.env.BASE_URL!, ...(target.env.API_URL ? { apiUrl: target.env.API_URL } : {}) },
    { timeoutMs: Math.min(run.settings.REQUEST_TIMEOUT_MS, 10_000), insecure: run.settings.INSECURE_TLS, ...(signal ? { signal } : {}) },
  );
  if (!pre.ok) {
    const reason = `${pre.interrupted ? '' : 'preflight failed: '}${pre.line}`;
    say(`certify: ${reason}\n`);
    ctx.stop = { exitCode: pre.interrupted ? interruptedExit(signal) : PREFLIGHT_EXIT, reasons: [redact(reason)] };
    return;
  }
  for (const line of pre.lines) detail(`certify: ${line}\n`);
  say(
    `certify: profile ${run.config.profile}; phases ${run.phases.join(' → ')}; keys given: ` +
      `${SECRET_VARIABLES.filter((n) => target.env[n]).join(', ') || 'none'}; reports in ${run.reportsDir}\n`,
  );
  for (const note of run.config.notes) say(`certify: note: ${note}\n`);
}

/**
 * Step "take the target's turn": certifications of one target on one machine take turns (`turns.ts`);
 * this run waits, before it sends anything to the target (its preflight included: a 429 the other
 * run met may hold every request to the target), until no other holds the turn, at most
 * `OTHER_RUN_WAIT_S` (past it: exit 5, nothing sent; a signal: 130/143). The bundled reference
 * server needs no turn.
 */
export async function takeTargetTurn(ctx: RunContext): Promise<void> {
  const run = need(ctx.run, 'the prepared run');
  const { say } = need(ctx.voice, "the run's voice");
  const { signal } = ctx.options;
  // The bundled reference server is this run's own (a free port, closed with the run): no other run can reach it.
  if (need(ctx.target, 'the target').reference) return;
  const turn = await takeTurn(need(ctx.target, 'the target').env.BASE_URL!, {
    maxWaitMs: run.settings.OTHER_RUN_WAIT_S * 1000,
    say: (line) => say(`certify: ${line}\n`),
    ...(signal ? { signal } : {}),
    ...(ctx.options.turnsDir ? { tmp: ctx.options.turnsDir } : {}),
  });
  if (isHeld(turn)) {
    ctx.turn = turn;
    ctx.otherRuns = turn.report;
    if (turn.report.waitedFor.length)
      say(
        `certify: waited ${turn.report.waitedS} s for another certification of this target on this machine to end (pid ${turn.report.waitedFor.map((r) => r.pid).join(', ')})\n`,
      );
    if (turn.report.notCoordinated) say(`certify: note: ${turn.report.notCoordinated}\n`);
    return;
  }
  const reason =
    turn.kind === 'aborted'
      ? `stopped while waiting for another certification of this target on this machine to end (${signal?.reason ?? 'SIGINT'}); nothing was sent to the target`
      : turn.quietUntil
        ? `a 429 the previous certification of this target on this machine met asks that nothing be sent before ${turn.quietUntil}, beyond OTHER_RUN_WAIT_S: nothing was sent to the target; run again after that time${turn.quietFile ? `, or, if that server has been restarted or replaced since (its 429 no longer holds), delete ${turn.quietFile}` : ''}`
        : `another certification of this target on this machine${turn.holder ? ` (pid ${turn.holder.pid}, started ${turn.holder.since})` : ''} still runs after ${Math.round(turn.waitedS)} s (OTHER_RUN_WAIT_S): nothing was sent to the target; run again when it has ended, or raise OTHER_RUN_WAIT_S`;
  say(`certify: ${reason}\n`);
  ctx.stop = { exitCode: turn.kind === 'aborted' ? interruptedExit(signal) : EXIT.harness, reasons: [reason] };
}

/** Step "start the pacer": one run-wide pacer for every phase; the environment every child gets (the pacer, the profile, the reports folder, the journal). */
export async function startPacer(ctx: RunContext): Promise<void> {
  const run = need(ctx.run, 'the prepared run');
  const target = need(ctx.target, 'the target');
  const baseUrl = target.env.BASE_URL!;
  // A 429 an earlier run met and journaled, still pending: nothing is sent on its key before it passes.
  const holds = pendingHolds(readJournals(run.reportsDir), baseUrl, Date.now(), run.settings.MAX_RETRY_AFTER_S);
  for (const h of holds) need(ctx.voice, "the run's voice").say(`certify: ${h.reason}\n`);
  if (holds.length) ctx.journal = { ...ctx.journal, holds };
  ctx.pacer = await startRunPacer({
    maxRetryAfterS: run.settings.MAX_RETRY_AFTER_S,
    workers: run.settings.WORKERS,
    maxMessages: run.settings.MAX_MESSAGES,
    initialHolds: initialHoldsOf(holds),
    onRefusal: journalRefusals(path.join(run.reportsDir, ctx.journalFile), baseUrl, 'pacer (certify)'),
  });
  ctx.childEnv = {
    ...target.env,
    ...ctx.pacer.env,
    CONFORMANCE_PROFILE: run.config.profile,
    REPORTS_DIR: run.reportsDir,
    CERTIFY_JOURNAL_FILE: path.join(run.reportsDir, ctx.journalFile),
  };
}

/** Step "repair first": what an earlier run left open in the journal is put back before anything else is sent. */
export async function repairFirst(ctx: RunContext): Promise<void> {
  const run = need(ctx.run, 'the prepared run');
  const repaired = await repairJournal(
    run.reportsDir,
    ctx.journalFile,
    need(ctx.childEnv, "the children's environment"),
    need(ctx.voice, "the run's voice").say,
  );
  ctx.journal = { ...ctx.journal, repair: repaired.outcome, requests: ctx.journal.requests + repaired.requests };
}

/** Step "list what is left out": each check of a phase the profile does not run becomes not certified. */
export async function listLeftOut(ctx: RunContext): Promise<void> {
  const run = need(ctx.run, 'the prepared run');
  const childEnv = need(ctx.childEnv, "the children's environment");
  const voice = need(ctx.voice, "the run's voice");
  const list = (ps: readonly string[]) => listPhases([...ps], run.configFile, childEnv, voice.redact, path.join(run.workDir, 'list.json'));
  const leftOut = await listLeftOutPhases(run.leftOutPhases, run.config.profile, list);
  for (const line of leftOut.lines) voice.say(line);
  ctx.notRun = leftOut.notRun;
  ctx.runErrors.push(...leftOut.runErrors);
}

/** Step "run the phases": every phase in one Playwright run; a signal starts no further phase. */
export async function runPhases(ctx: RunContext): Promise<void> {
  const pacer = need(ctx.pacer, 'the pacer');
  const run = need(ctx.run, 'the prepared run');
  const voice = need(ctx.voice, "the run's voice");
  const ran = await runAllPhases(run, need(ctx.childEnv, "the children's environment"), voice, () => pacer.progress(), ctx.options.signal);
  ctx.results = ran.results;
  ctx.runErrors.push(...ran.runErrors);
}

/** Step "settle the journal": what a check left open is tried once more (skipped after a signal: the next run repairs first). */
export async function settleJournal(ctx: RunContext): Promise<void> {
  const run = need(ctx.run, 'the prepared run');
  // What the journal settled at the end is in the summary (a pet left changed) and the reports: the console says it only when verbose.
  const settled = await settleOwn(
    run.reportsDir,
    ctx.journalFile,
    need(ctx.childEnv, "the children's environment"),
    need(ctx.voice, "the run's voice").detail,
  );
  ctx.journal = { ...ctx.journal, end: settled.outcome, requests: ctx.journal.requests + settled.requests };
}

/**
 * Step "name what the journal leaves open": after a signal the run sends nothing more, and what its
 * own journal leaves open (a pet a stopped check changed and did not put back) is named at run
 * level, with the two ways to put it back: said now, and kept as a run problem for the reports and
 * the certificate.
 */
export function nameOpenAfterStop(ctx: RunContext): void {
  const signal = ctx.options.signal;
  if (!signal?.aborted) return;
  const problem = openAfterStopProblem(need(ctx.run, 'the prepared run').reportsDir, ctx.journalFile, String(signal.reason ?? 'a signal'));
  if (!problem) return;
  ctx.openAfterStop = problem;
  need(ctx.voice, "the run's voice").say(`certify: ${problem.reason}\n`);
}

/** Step "merge": the test records the run's reporter wrote per phase; load.json. */
export async function merge(ctx: RunContext): Promise<void> {
  const voice = need(ctx.voice, "the run's voice");
  ctx.merged = await mergeRun(need(ctx.run, 'the prepared run'), voice.redact, voice.say);
}

/** Step "scan secrets": every file of the reports folder for every form of every key; with the keys the redacting reporter caught, an input of the verdict. */
export function scanSecrets(ctx: RunContext): void {
  const run = need(ctx.run, 'the prepared run');
  const { secrets, say, detail } = need(ctx.voice, "the run's voice");
  ctx.scannedAt = Date.now();
  const scan = scanFolder([run.reportsDir], secrets, process.cwd(), run.folder.owns);
  (scan.findings.length ? say : detail)(
    `certify: secret scan of ${scan.filesScanned} files: ${scan.findings.length ? `${scan.findings.length} finding(s)` : 'no key found'}\n`,
  );
  for (const x of scan.findings) say(`  ✗ ${x}\n`);
  ctx.secretFindings = [...need(ctx.merged, 'the merge').redactions.leaks, ...scan.findings];
}

/** The verdict's input from the context (a replay: only the requirements its case evidences). */
export function verdictInputOf(ctx: RunContext): VerdictInput {
  const run = need(ctx.run, 'the prepared run');
  const merged = need(ctx.merged, 'the merge');
  const { signal } = ctx.options;
  const input = verdictInputFor({
    allPhases: PHASES,
    phases: run.phases,
    leftOutPhases: run.leftOutPhases,
    results: ctx.results,
    notRun: ctx.notRun,
    tests: merged.tests,
    ledger: run.ledger,
    gate: run.gate,
    replaying: run.replaying,
    profile: run.config.profile,
    target: need(ctx.target, 'the target').description,
    generatedAt: merged.generatedAt,
    runErrors: [...run.runErrors, ...ctx.runErrors, ...merged.runErrors],
    redact: need(ctx.voice, "the run's voice").redact,
    ...(signal?.aborted ? { interrupted: { signal: String(signal.reason ?? 'SIGINT'), exitCode: interruptedExit(signal) } } : {}),
  });
  // The journal: pets left changed (a run-level problem), and pets its end-of-run repair put back.
  const problem = journalProblem(ctx.journal);
  if (problem) input.problems = [...(input.problems ?? []), problem];
  // A stopped run: what its journal leaves open (nameOpenAfterStop).
  if (ctx.openAfterStop)
    input.problems = [
      ...(input.problems ?? []),
      { ...ctx.openAfterStop, reason: need(ctx.voice, "the run's voice").redact(ctx.openAfterStop.reason) },
    ];
  if (ctx.journal.end.restored.length) input.restoredAfter = ctx.journal.end.restored.map((p) => p.petId);
  return { ...input, secretFindings: need(ctx.secretFindings, 'the secret scan') };
}

/** Step "judge": the verdict and its gate, once, after the secret scan (a key found fails the run). */
export function judge(ctx: RunContext): void {
  const across = acrossMachinesNote((ctx.pacing ?? []).filter((k) => k.anotherClient).map((k) => k.key));
  const otherRuns =
    ctx.otherRuns || across
      ? { ...(ctx.otherRuns ?? { waitedFor: [], waitedS: 0, waitedForThis: [] }), ...(across ? { acrossMachines: across } : {}) }
      : undefined;
  const extra = {
    ...(ctx.pacing ? { pacing: ctx.pacing } : {}),
    journal: ctx.journal,
    ...(otherRuns ? { otherRuns } : {}),
    ...(ctx.messages ? { footprint: { messages: ctx.messages } } : {}),
  };
  // The report as conformance.json states it (redacted): the CLI prints it, the certificate is written from it.
  ctx.report = redactReport(judgeReport(verdictInputOf(ctx), extra), need(ctx.voice, "the run's voice").redact);
}

/** Step "write the reports": conformance.json and .md, evidence.har (the exchanges behind each requirement), junit.xml stating the gate; each text redacted. */
export function writeArtifacts(ctx: RunContext): void {
  const run = need(ctx.run, 'the prepared run');
  const report = need(ctx.report, 'the verdict');
  const { redact } = need(ctx.voice, "the run's voice");
  writeReportFiles(report, run.reportsDir, redact);
  writeEvidenceHar(run.reportsDir, report, need(ctx.merged, 'the merge').tests, redact);
  gateJunitFile(report, run.reportsDir, redact);
}

/** Step "certificate": written from the report (never for a replay: it judges one case, not the spec); then the reports folder's manifest is closed. */
export function certificate(ctx: RunContext): void {
  const run = need(ctx.run, 'the prepared run');
  const { say, redact } = need(ctx.voice, "the run's voice");
  if (!run.replaying) {
    const previous = run.gate.previous;
    ctx.certificate = certificateStep({
      report: need(ctx.report, 'the verdict'),
      reportsDir: run.reportsDir,
      env: ctx.options.env,
      write: say,
      redact,
      ...(previous ? { previous } : {}),
    });
  }
}

/**
 * Step "scan what was written after the verdict": the reports, the evidence, junit.xml and the
 * certificate are written from redacted data after the scan that the verdict judged; every file
 * written since is scanned once more. A key found there is scrubbed (or the file removed), then it
 * is judged like a key found by the first scan: the verdict, the reports and the certificate are
 * written again, so every file and the exit code tell the same story, and what they wrote is
 * scanned once more. A key found even then voids the run (harness trouble, exit 5). Then the
 * reports folder's manifest records what the run wrote.
 */
export function rescanWritten(ctx: RunContext): void {
  const run = need(ctx.run, 'the prepared run');
  const { say } = need(ctx.voice, "the run's voice");
  const found = keysWrittenSince(ctx, need(ctx.scannedAt, 'the secret scan'));
  if (found.length) {
    say(`certify: a key reached ${found.length} file(s) written after the verdict; judged again with it\n`);
    for (const x of found) say(`  ✗ ${x}\n`);
    const rewrittenAt = Date.now();
    ctx.secretFindings = [...need(ctx.secretFindings, 'the secret scan'), ...found];
    judge(ctx);
    writeArtifacts(ctx);
    certificate(ctx);
    const again = keysWrittenSince(ctx, rewrittenAt);
    if (again.length) {
      ctx.lateFindings = again;
      say(`certify: a key reached ${again.length} file(s) written again: the run is void (harness trouble, exit 5)\n`);
      for (const x of again) say(`  ✗ ${x}\n`);
    }
  }
  run.folder.finish();
}

/** Scans the files of the reports folder written at or after `sinceMs`; each file holding a key is scrubbed or removed. */
function keysWrittenSince(ctx: RunContext, sinceMs: number): string[] {
  const run = need(ctx.run, 'the prepared run');
  const written = listFiles(run.reportsDir).filter((f) => modifiedSince(f, sinceMs));
  return scanFolder(written, need(ctx.voice, "the run's voice").secrets, process.cwd(), run.folder.owns).findings;
}

/** The file was written at or after `sinceMs` (a file that cannot be read counts as written). */
function modifiedSince(file: string, sinceMs: number): boolean {
  try {
    return fs.statSync(file).mtimeMs >= sinceMs;
  } catch {
    return true;
  }
}

/** Step "print": the console summary and the verdict line. */
export function print(ctx: RunContext): void {
  const run = need(ctx.run, 'the prepared run');
  const otherReports = [
    'conformance.json',
    // A verdictOnly run does not write these.
    ...(run.mergeReports ? ['html/index.html', 'junit.xml', 'results.json'] : []),
    'evidence.har',
    ...(need(ctx.merged, 'the merge').loadWritten ? ['load.json'] : []),
  ];
  const voice = need(ctx.voice, "the run's voice");
  printSummary(need(ctx.report, 'the verdict'), voice.say, {
    detail: voice.detail,
    reportsFile: path.join(run.reportsDir, 'conformance.md'),
    otherReports,
    seconds: (Date.now() - ctx.started) / 1000,
  });
}
