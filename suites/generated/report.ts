/**
 * How a generated failure reads: the finding (requirement, expected, observed), the shrunk
 * request, the replay token and the curl reproduction. Pure.
 */
import { formatFinding, type Finding } from '../lib/finding.ts';
import type { OperationRun } from './run-cases.ts';

/** The command that replays a token (certify's phase; `cli replay <token>` sets the same variable). */
export function replayCommand(token: string): string {
  return `CONFORMANCE_REPLAY=${token} npm run certify`;
}

/** One failure block for a rule: every class whose shrunk case broke it. */
export function ruleFailures(run: OperationRun, id: string): string[] {
  const out: string[] = [];
  for (const c of run.classes) {
    const f = c.failure;
    if (!f) continue;
    const hits = f.findings.filter((x) => x.id === id);
    if (!hits.length) continue;
    out.push(
      [
        `- ${c.name}: ${hits.map(formatFinding).join('; ')}`,
        `  request (shrunk in ${f.shrinks} step${f.shrinks === 1 ? '' : 's'}${f.shrinkCut ? ', shrinking stopped at the budget' : ''}): ${f.request}`,
        `  replay: ${replayCommand(f.token)}`,
        `  curl: ${f.curl}`,
      ].join('\n'),
    );
  }
  for (const f of run.findings.filter((x: Finding) => x.id === id)) out.push(`- ${formatFinding(f)}`);
  return out;
}

/** A one-line summary of an operation's run, for the `evidence` annotation. */
export function summary(run: OperationRun): string {
  const cases = run.classes.reduce((s, c) => s + c.sent, 0);
  const failed = run.classes.filter((c) => c.failure).length;
  return `${run.op}: ${run.classes.length} classes, ${cases} generated cases, ${run.requests} requests (seed ${run.seed}); ${failed} class${failed === 1 ? '' : 'es'} failing`;
}
