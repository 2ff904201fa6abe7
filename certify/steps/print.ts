/**
 * Step "print": the console summary of a run — failed requirements with their first message, run
 * problems, warnings, what was not certified and why, where the reports are, the verdict line and
 * the requests sent (per phase and, from the run-wide pacer, per key).
 */
import type { ConformanceReport } from '../verdict.ts';
import { quoteSentence } from '../certificate/quotes.ts';
import { failureLine, failureTexts } from '../failure-text.ts';

/** Prints the summary of `report` through `say` (which redacts). */
export function printSummary(report: ConformanceReport, say: (text: string) => void, o: { reportsFile: string; otherReports: string[]; seconds: number }): void {
  const s = report.summary;
  const failed = report.requirements.filter((r) => r.status === 'fail');
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
  if (report.problems.length) {
    say(`\nRun problems (${report.problems.length}):\n`);
    for (const p of report.problems) say(`  ✗ ${p.reason.split('\n')[0]}\n`);
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
  }
  say(`\nreports: ${o.reportsFile} (also ${o.otherReports.join(', ')})\n`);
  say(`certify: verdict ${report.verdict.toUpperCase()} — ${s.pass} pass, ${s.warn} warn, ${s.fail} fail, ${s.skipped} skipped (${o.seconds.toFixed(1)} s)\n`);
  const byPhase = Object.entries(report.requestsByPhase).map(([p, n]) => `${p} ${n}`).join(', ');
  if (byPhase) say(`requests by phase: ${byPhase}\n`);
  say(`requests sent: ${report.requests}\n`);
}
