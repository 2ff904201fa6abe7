/**
 * How a generated failure reads: the finding (requirement, expected, observed), the shrunk
 * request, the replay token and the curl reproduction. Pure.
 */
import { formatFinding, type Finding } from '../../core/finding.ts';
import type { OperationRun } from './run-cases.ts';
import { shellQuote } from './replay.ts';
import { MAX_UNANSWERED } from './run-coverage.ts';

/**
 * The command that replays a token (certify's phase; `cli replay <token>` sets the same variable)
 * against the target that failed: its `BASE_URL` (and `API_URL`) named, so a config file's
 * default target is not used instead.
 */
export function replayCommand(token: string, target: { baseUrl?: string; apiUrl?: string } = {}): string {
  const vars = [
    target.baseUrl ? `BASE_URL=${shellQuote(target.baseUrl)}` : '',
    target.apiUrl ? `API_URL=${shellQuote(target.apiUrl)}` : '',
  ].filter(Boolean);
  return [...vars, `CONFORMANCE_REPLAY=${token}`, 'npm run certify'].join(' ');
}

/** The findings of rule `id` in a run, each with the curl reproduction of its shrunk case. */
export function ruleFindings(run: OperationRun, id: string): Finding[] {
  const out: Finding[] = [];
  for (const f of run.coverage.failures) {
    for (const x of f.findings.filter((y) => y.id === id))
      out.push({ ...x, message: `coverage ${run.op} ${f.name} (value ${f.value}): ${x.message}`, curl: f.curl });
  }
  for (const c of run.classes) {
    for (const x of c.failure?.findings.filter((f) => f.id === id) ?? [])
      out.push({ ...x, message: `${c.name}: ${x.message}`, curl: c.failure!.curl });
  }
  out.push(...run.findings.filter((x: Finding) => x.id === id));
  out.push(...ruleWarnings(run, id));
  return out;
}

/** The warnings of rule `id` in a run (requests outside the API, a front door's answer), each with its curl line. */
export function ruleWarnings(run: OperationRun, id: string): Finding[] {
  return [...(run.coverage.warnings ?? []), ...run.classes.flatMap((c) => c.warnings ?? [])].filter((f) => f.id === id);
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
  return [...coverageFailures(run, id, target), ...out];
}

/** Most coverage failures printed per rule and operation; the rest are counted. */
const MAX_PRINTED = 12;

/** The failing coverage cases for a rule: class (location and case), value, finding, request, curl, replay. */
export function coverageFailures(run: OperationRun, id: string, target: { baseUrl?: string; apiUrl?: string } = {}): string[] {
  const hits = run.coverage.failures.filter((f) => f.findings.some((x) => x.id === id));
  const out = hits.slice(0, MAX_PRINTED).map((f) =>
    [
      `- coverage ${run.op} ${f.name} (value ${f.value}): ${f.findings
        .filter((x) => x.id === id)
        .map(formatFinding)
        .join('; ')}`,
      `  request: ${f.request}`,
      `  replay: ${replayCommand(f.token, target)}`,
      `  curl: ${f.curl}`,
    ].join('\n'),
  );
  if (hits.length > MAX_PRINTED)
    out.push(
      `- and ${hits.length - MAX_PRINTED} more coverage case(s) of ${run.op} break ${id}: ${hits
        .slice(MAX_PRINTED)
        .map((f) => f.name)
        .join('; ')}`,
    );
  return out;
}

/** Coverage cases per location: `coverage updateInventory: 120 of 130 sent — body 40/40, string 0/0, …`. */
export function coverageSummary(run: OperationRun): string {
  const c = run.coverage;
  const sent = Object.values(c.sent).reduce((a, b) => a + b, 0);
  const all = sent + c.leftOut.length;
  const per = (Object.keys(c.planned) as Array<keyof typeof c.planned>).map((l) => `${l} ${c.sent[l]}`).join(', ');
  return `coverage ${run.op}: ${sent} of ${all + c.abandoned.length} cases sent (${per}); ${c.failures.length} failing${c.leftOut.length ? `; ${c.leftOut.length} left out by the budget` : ''}${c.abandoned.length ? `; ${c.abandoned.length} not sent after ${MAX_UNANSWERED} requests got no response` : ''}`;
}

/** The cases not sent because the target stopped answering, by name, with their number. */
export function abandonedLine(run: OperationRun): string {
  const n = run.coverage.abandoned.length;
  return `${n} coverage case${n === 1 ? '' : 's'} of ${run.op} not sent: ${MAX_UNANSWERED} of its requests got no response within REQUEST_TIMEOUT_MS, and each further one would wait as long: ${run.coverage.abandoned.join('; ')}`;
}

/** The line of coverage cases not sent because the run's messages (MAX_MESSAGES) were spent. */
export function messagesSpentLine(run: OperationRun): string {
  const names = run.coverage.messagesSpent ?? [];
  return `${names.length} coverage case${names.length === 1 ? '' : 's'} of ${run.op} not sent, the run's MAX_MESSAGES spent (raise MAX_MESSAGES to send them; each queues a real message on the target): ${names.join('; ')}`;
}

/** The cases the budget left out, by name, with their number. */
export function leftOutLine(run: OperationRun): string {
  const n = run.coverage.leftOut.length;
  return `${n} coverage case${n === 1 ? '' : 's'} of ${run.op} did not fit the generated budget (GENERATED_BUDGET, or two windows of API_PLAN): ${run.coverage.leftOut.join('; ')}`;
}

/** A one-line summary of an operation's run, for the `evidence` annotation. */
export function summary(run: OperationRun): string {
  const cases = run.classes.reduce((s, c) => s + c.sent, 0);
  const failed = run.classes.filter((c) => c.failure).length;
  return `${run.op}: ${run.classes.length} classes, ${cases} generated cases, ${run.requests} requests (seed ${run.seed}); ${failed} class${failed === 1 ? '' : 'es'} failing`;
}
