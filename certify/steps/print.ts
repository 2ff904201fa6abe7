/**
 * Step "print": the console summary of a run, in the order a reader acts on it — failed requirements
 * (expected, observed, curl), known failures apart, the pets the run left changed, run problems,
 * what was not certified and why, warnings, the messages it posted, where the reports are, the
 * verdict line and the requests sent (per phase and per key only when verbose).
 */
import type { RunProblem } from '../../core/results.ts';
import type { JournalReport } from './repair.ts';
import type { ConformanceReport } from '../verdict.ts';
import { quoteSentence } from '../certificate/quotes.ts';
import { failureLine, failureTexts } from '../failure-text.ts';
import { budgetLine, footprintLine, messageAddresses, messagesCountedText } from '../footprint.ts';
import { otherRunsLines } from './target-lock.ts';

/** The run-level "target left changed" lines: each pet, its original and its current count, what to do (the messages posted: `messagesCounted`). */
export function leftChangedLines(problems: readonly RunProblem[]): string[] {
  const pets = problems.filter((p) => p.kind === 'target-left-changed').flatMap((p) => p.pets ?? []);
  const other = problems.filter((p) => p.kind === 'target-left-changed' && !p.pets?.length);
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
  return lines;
}

/** What the run repaired first (an earlier run did not finish), and journals of other targets it left alone. */
export function repairedLines(journal?: JournalReport): string[] {
  const r = journal?.repair;
  const alone = journal ? [...(journal.repair.leftAlone ?? []), ...(journal.end.leftAlone ?? [])] : [];
  const held = (journal?.holds ?? []).map((h) => `Waited for an earlier run's 429: ${h.reason}`);
  const aloneLines = alone.length
    ? [
        `Left alone: ${alone.length} pet(s) somebody else wrote since the run did (not written over; nothing lost):`,
        ...alone.map(
          (a) =>
            `  ! pet ${a.petId}: original ${a.original}, the run wrote ${a.written?.join(' or ') || 'not recorded'}, found ${a.found ?? 'missing'}`,
        ),
      ]
    : [];
  if (!r || (!r.restored.length && !r.otherTargets.length)) return [...held, ...aloneLines];
  return [
    ...held,
    ...aloneLines,
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

/** One console line: a text's line breaks as spaces. */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ');
}

/** The failed requirements not accepted by the gate, each with up to three failures (expected, observed) and their curl: at most 9 lines each. */
export function failedLines(report: ConformanceReport): string[] {
  const known = new Set(report.gate.knownFailures.map((k) => k.id));
  const failed = report.requirements.filter((r) => r.status === 'fail' && !known.has(r.id));
  if (!failed.length) return [];
  const lines = [`Failed requirements (${failed.length}):`];
  for (const r of failed) {
    lines.push(`  ✗ ${r.id} (${r.level}) ${oneLine(quoteSentence(r.title))}`);
    const texts = failureTexts(r.evidence);
    if (!texts.length) lines.push(`      ${oneLine(r.reason ?? '')}`);
    for (const t of texts.slice(0, 3)) {
      lines.push(`      ${oneLine(failureLine(t))}`);
      if (t.curl) lines.push(`      reproduce: ${oneLine(t.curl)}`);
    }
    if (texts.length > 3) lines.push(`      … ${texts.length - 3} more in conformance.md`);
  }
  return lines;
}

/** `56 pass, 1 warn, 0 fail, 20 out of scope`: "skipped" told apart as what it is, the ledger's exclusions or not certified. */
export function countsText(report: ConformanceReport): string {
  const s = report.summary;
  const outOfScope = report.requirements.filter((r) => r.status === 'skipped' && r.reason?.startsWith('excluded')).length;
  const skippedOther = s.skipped - outOfScope;
  return `${s.pass} pass, ${s.warn} warn, ${s.fail} fail${skippedOther ? `, ${skippedOther} not certified` : ''}, ${outOfScope} out of scope`;
}

/**
 * Prints the summary of `report`: the failures, run problems, what was not certified, warnings,
 * what the run left on the target, where the reports are, the verdict. `say` redacts; `o.detail`
 * is what only a verbose console shows (each key's pacing, the requests by phase; default `say`).
 */
/** A reason of the console's first screen: at most `max` characters, cut after a list item; the whole is in conformance.md. */
export function atAGlance(text: string, max = 240): string {
  if (text.length <= max) return text;
  const cut = text.lastIndexOf('; ', max);
  return `${text.slice(0, cut > max / 2 ? cut : max)}; … (the whole list in conformance.md)`;
}

export function printSummary(
  report: ConformanceReport,
  say: (text: string) => void,
  o: { reportsFile: string; otherReports: string[]; seconds: number; detail?: (text: string) => void },
): void {
  const detail = o.detail ?? say;
  say('\n');
  if (report.gate.knownFailures.length)
    say(
      `Known failures (${report.gate.knownFailures.length}; they do not fail the gate): ${report.gate.knownFailures.map((k) => `${k.id}${k.reason ? ` (${k.reason.split('\n')[0]})` : ''}`).join(', ')}\n`,
    );
  const failed = failedLines(report);
  if (failed.length) say(`${failed.join('\n')}\n\n`);
  const left = [...repairedLines(report.journal), ...leftChangedLines(report.problems)];
  if (left.length) say(`${left.join('\n')}\n`);
  const problems = report.problems.filter((p) => p.kind !== 'target-left-changed');
  if (problems.length) {
    say(`Run problems (${problems.length}):\n`);
    for (const p of problems) say(`  ✗ ${p.reason.split('\n')[0]}\n`);
  }
  if (report.notCertified.length) {
    say(`Not certified (${report.notCertified.length}; a limit of this run, not the server's failure):\n`);
    const byReason = new Map<string, string[]>();
    for (const n of report.notCertified) byReason.set(n.reason, [...(byReason.get(n.reason) ?? []), n.id]);
    for (const [reason, ids] of byReason) say(`  ◦ ${ids.join(', ')}: ${atAGlance(reason.split('\n')[0] ?? '')}\n`);
  }
  const warned = report.requirements.filter((r) => r.status === 'warn');
  if (warned.length) say(`Warnings (${warned.length}, see conformance.md): ${warned.map((r) => r.id).join(', ')}\n`);
  const posted = report.journal ? [...report.journal.repair.messages, ...report.journal.end.messages] : [];
  const messages = messagesCountedText(posted, 4);
  if (messages)
    say(
      `Left on the target, by design: ${messages} (to ${messageAddresses(posted).join(', ')}); the API cannot take a message back (not a failure)\n`,
    );
  // The budget's own line: whole without a journal's count, else only what it adds (what it kept back).
  const budget = messages ? budgetLine(report.footprint?.messages) : footprintLine(report.footprint?.messages);
  if (budget) say(`${budget}\n`);
  for (const k of report.pacing ?? []) {
    // Each key's pacing only when verbose, unless it tells of a problem (a 429 sent early, a ban, another client).
    const speak = k.earlyRequests || k.suspectedBan || k.anotherClient ? say : detail;
    speak(
      `pacing ${k.key}: ${k.requests} request(s), ${k.waits !== undefined ? `${k.waits} wait(s), ` : ''}longest wait ${k.longestWaitS} s, ` +
        `${k.refused} 429(s), ${k.earlyRequests} early request(s)` +
        `${k.suspectedBan ? ', ban suspected' : ''}\n`,
    );
    for (const note of k.notes ?? []) detail(`  ◦ ${note}\n`);
    if (k.anotherClient) say(`  ◦ another client: ${k.anotherClient}\n`);
  }
  for (const line of otherRunsLines(report.otherRuns)) say(`other runs: ${line}\n`);
  say(`reports: ${o.reportsFile} (also ${o.otherReports.join(', ')})\n`);
  const g = report.gate;
  const label = g.result === 'harness' ? 'HARNESS TROUBLE' : g.result.toUpperCase();
  const knownNote = g.knownFailures.length ? ` (${g.knownFailures.length} known failure(s) accepted)` : '';
  const ran = report.phases.filter((p) => p.ran && p.seconds !== undefined);
  const timing = ran
    .map((p) => `${p.name} ${p.seconds!.toFixed(1)} s${p.waitedS ? `, ${p.waitedS.toFixed(1)} s waiting on windows` : ''}`)
    .join('; ');
  say(
    `certify: verdict ${label}${knownNote}, exit ${g.exitCode} — ${countsText(report)} (${o.seconds.toFixed(1)} s${timing ? `: ${timing}` : ''})\n`,
  );
  const byPhase = Object.entries(report.requestsByPhase)
    .map(([p, n]) => `${p} ${n}`)
    .join(', ');
  if (byPhase) detail(`requests by phase: ${byPhase}\n`);
  say(`requests sent: ${report.requests}\n`);
  if (report.journal?.requests)
    detail(`requests sent by the journal's repairs (before and after the phases): ${report.journal.requests}\n`);
}
