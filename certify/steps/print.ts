/**
 * Step "print": the console summary of a run — failed requirements with their first message, known
 * failures apart, the pets the run left changed, run problems, warnings, what was not certified and why, where the reports are, the verdict line and
 * the requests sent (per phase and, from the run-wide pacer, per key).
 */
import { footprintLine } from '../footprint.ts';
import type { RunProblem } from '../../core/results.ts';
import type { JournalReport } from './repair.ts';
import type { ConformanceReport } from '../verdict.ts';
import { quoteSentence } from '../certificate/quotes.ts';
import { failureLine, failureTexts } from '../failure-text.ts';
import { otherRunsLines } from './turns.ts';

/** The run-level "target left changed" lines: each pet, its original and its current count, what to do; the messages the run posted. */
export function leftChangedLines(problems: readonly RunProblem[], journal?: JournalReport): string[] {
  const pets = problems.filter((p) => p.kind === 'target-left-changed').flatMap((p) => p.pets ?? []);
  const other = problems.filter((p) => p.kind === 'target-left-changed' && !p.pets?.length);
  const messages = journal ? [...journal.repair.messages, ...journal.end.messages] : [];
  const lines: string[] = [];
  if (pets.length || other.length) {
    lines.push(
      pets.length
        ? `Target left changed: the run could not restore ${pets.length} pet(s); restore them by hand (this fails the gate):`
        : 'Target left changed:',
      ...pets.map((p) =>
        p.created
          ? `  ✗ pet ${p.petId}: created by the run (not listed before a request on it, listed now at quantity ${p.current ?? '?'}); delete it by hand`
          : `  ✗ pet ${p.petId}: original quantity ${p.original}, now ${p.current ?? 'missing from the list'}`,
      ),
      ...other.map((p) => `  ✗ ${p.reason.split('\n')[0]}`),
    );
  }
  if (messages.length) {
    const where = [...new Set(messages.map((m) => `${m.address}/messages`))].join(', ');
    lines.push(
      `Target left changed, by design: ${messages.length} message(s) posted to ${where}; the API cannot take a message back: delete them by hand if your service allows (this does not fail the gate).`,
    );
  }
  return lines;
}

/** What the run repaired first (an earlier run did not finish), and journals of other targets it left alone. */
export function repairedLines(journal?: JournalReport): string[] {
  const r = journal?.repair;
  if (!r || (!r.restored.length && !r.otherTargets.length)) return [];
  return [
    ...(r.restored.length
      ? [
          `Repaired first: an earlier run did not finish; ${r.restored.length} pet(s) it left changed were put back and verified before anything else was sent: ${r.restored.map((p) => `pet ${p.petId}`).join(', ')}`,
        ]
      : []),
    ...r.otherTargets.map(
      (o) => `Journal of another target left alone: ${o.file} (${o.open} open entr${o.open === 1 ? 'y' : 'ies'} for ${o.target})`,
    ),
  ];
}

/** Prints the summary of `report` through `say` (which redacts). */
export function printSummary(
  report: ConformanceReport,
  say: (text: string) => void,
  o: { reportsFile: string; otherReports: string[]; seconds: number },
): void {
  const s = report.summary;
  const known = new Set(report.gate.knownFailures.map((k) => k.id));
  const failed = report.requirements.filter((r) => r.status === 'fail' && !known.has(r.id));
  if (known.size)
    say(
      `\nKnown failures (${known.size}; they do not fail the gate): ${report.gate.knownFailures.map((k) => `${k.id}${k.reason ? ` (${k.reason.split('\n')[0]})` : ''}`).join(', ')}\n`,
    );
  if (failed.length) {
    say(`\nFailed requirements (${failed.length}):\n`);
    for (const r of failed) {
      say(`  ✗ ${r.id} (${r.level}) ${quoteSentence(r.title)}\n`);
      const texts = failureTexts(r.evidence);
      if (!texts.length) say(`      ${(r.reason ?? '').replace(/\n/g, ' ')}\n`);
      for (const t of texts.slice(0, 3)) say(`      ${failureLine(t)}\n${t.curl ? `      reproduce: ${t.curl}\n` : ''}`);
      if (texts.length > 3) say(`      … ${texts.length - 3} more in conformance.md\n`);
    }
  }
  const footprint = footprintLine(report.footprint?.messages);
  const left = [...repairedLines(report.journal), ...leftChangedLines(report.problems, report.journal), ...(footprint ? [footprint] : [])];
  if (left.length) say(`\n${left.join('\n')}\n`);
  const problems = report.problems.filter((p) => p.kind !== 'target-left-changed');
  if (problems.length) {
    say(`\nRun problems (${problems.length}):\n`);
    for (const p of problems) say(`  ✗ ${p.reason.split('\n')[0]}\n`);
  }
  const warned = report.requirements.filter((r) => r.status === 'warn');
  if (warned.length) say(`\nWarnings (${warned.length}, see conformance.md): ${warned.map((r) => r.id).join(', ')}\n`);
  if (report.notCertified.length) {
    say(`\nNot certified (${report.notCertified.length}; a limit of this run, not the server's failure):\n`);
    const byReason = new Map<string, string[]>();
    for (const n of report.notCertified) byReason.set(n.reason, [...(byReason.get(n.reason) ?? []), n.id]);
    for (const [reason, ids] of byReason) say(`  ◦ ${ids.join(', ')}: ${reason.split('\n')[0]}\n`);
  }
  for (const k of report.pacing ?? []) {
    say(
      `pacing ${k.key}: ${k.requests} request(s), ${k.waits !== undefined ? `${k.waits} wait(s), ` : ''}longest wait ${k.longestWaitS} s, ` +
        `${k.refused} 429(s), ${k.earlyRequests} early request(s)` +
        `${k.suspectedBan ? ', ban suspected' : ''}\n`,
    );
    for (const note of k.notes ?? []) say(`  ◦ ${note}\n`);
    if (k.anotherClient) say(`  ◦ another client: ${k.anotherClient}\n`);
  }
  for (const line of otherRunsLines(report.otherRuns)) say(`other runs: ${line}\n`);
  say(`\nreports: ${o.reportsFile} (also ${o.otherReports.join(', ')})\n`);
  const g = report.gate;
  const label = g.result === 'harness' ? 'HARNESS TROUBLE' : g.result.toUpperCase();
  const knownNote = g.knownFailures.length ? ` (${g.knownFailures.length} known failure(s) accepted)` : '';
  const ran = report.phases.filter((p) => p.ran && p.seconds !== undefined);
  const timing = ran
    .map((p) => `${p.name} ${p.seconds!.toFixed(1)} s${p.waitedS ? `, ${p.waitedS.toFixed(1)} s waiting on windows` : ''}`)
    .join('; ');
  say(`certify: verdict ${label}${knownNote}, exit ${g.exitCode} — ${s.pass} pass, ${s.warn} warn, ${s.fail} fail, ${s.skipped} skipped (${o.seconds.toFixed(1)} s${timing ? `: ${timing}` : ''})
`);
  const byPhase = Object.entries(report.requestsByPhase)
    .map(([p, n]) => `${p} ${n}`)
    .join(', ');
  if (byPhase) say(`requests by phase: ${byPhase}\n`);
  say(`requests sent: ${report.requests}\n`);
  if (report.journal?.requests) say(`requests sent by the journal's repairs (before and after the phases): ${report.journal.requests}\n`);
}
