/**
 * How a generated failure reads: the finding (requirement, expected, observed), the shrunk
 * request, the replay token and the curl reproduction. Pure.
 */
import { formatFinding, type Finding } from '../lib/finding.ts';
import type { OperationRun } from './run-cases.ts';
import { shellQuote } from './replay.ts';

/**
 * The command that replays a token (certify's phase; `cli replay <token>` sets the same variable)
 * against the target that failed: its `BASE_URL` (and `API_URL`) named, so a config file's
 * default target is not used instead.
 */
export function replayCommand(token: string, target: { baseUrl?: string; apiUrl?: string } = {}): string {
  const vars = [target.baseUrl ? `BASE_URL=${shellQuote(target.baseUrl)}` : '', target.apiUrl ? `API_URL=${shellQuote(target.apiUrl)}` : ''].filter(Boolean);
  return [...vars, `CONFORMANCE_REPLAY=${token}`, 'npm run certify'].join(' ');
}

/** The findings of rule `id` in a run, each with the curl reproduction of its shrunk case. */
export function ruleFindings(run: OperationRun, id: string): Finding[] {
  const out: Finding[] = [];
  for (const c of run.classes) {
    for (const x of c.failure?.findings.filter((f) => f.id === id) ?? []) out.push({ ...x, message: `${c.name}: ${x.message}`, curl: c.failure!.curl });
  }
  out.push(...run.findings.filter((x: Finding) => x.id === id));
  return out;
}

/** One failure block for a rule: every class whose shrunk case broke it. */
export function ruleFailures(run: OperationRun, id: string, target: { baseUrl?: string; apiUrl?: string } = {}): string[] {
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
        `  replay: ${replayCommand(f.token, target)}`,
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
