/**
 * `conformance.md`: the human-readable verdict, in the order a reader acts on it: the verdict and
 * the gate's reasons; the failures, each with expected, observed and curl; the pets left changed
 * and the run problems; what was not certified and why; warnings; then the rest (the run's
 * figures, load, pacing, what it left on the target, counted, every requirement by spec section,
 * the requirements out of scope behind one click). Long lists are counted; `conformance.json`
 * holds them whole. Pure.
 */
import type { ConformanceReport, EvidenceEntry, RequirementResult, RequirementStatus } from './verdict.ts';
import { quoteSentence } from './certificate/quotes.ts';
import { failureTexts } from './failure-text.ts';
import { footprintLine, messageAddresses, messagesCountedText } from './footprint.ts';
import { otherRunsLines } from './steps/target-lock.ts';

/** Top-level sections in the spec's order; other sections (RFCs, rules) follow in ledger order. */
const SPEC_ORDER = [
  'What the service does',
  'Resources and their fields',
  'States and transitions',
  'Endpoints',
  'Authentication',
  'Events',
  'Errors',
  'Limits',
  'Versioning',
];

export const HTTP_RULES = 'HTTP rules, by RFC clause';

/** `Limits, rule 1` → [`Limits`, `rule 1`]; `RFC 9110 §11.1` → [HTTP_RULES, `RFC 9110 §11.1`]. */
export function sectionOf(section: string): [string, string] {
  for (const top of SPEC_ORDER) {
    if (section === top) return [top, '—'];
    if (
      section.startsWith(`${top} > `) ||
      section.startsWith(`${top},`) ||
      section.startsWith(`${top};`) ||
      section.startsWith(`${top} (`)
    ) {
      return [top, section.slice(top.length).replace(/^(\s*>\s*|[,;]\s*|\s+)/, '')];
    }
  }
  if (/^(RFC\s|HTTP rules|draft-)/.test(section)) return [HTTP_RULES, section];
  const [top, ...rest] = section.split(' > ');
  return [top!.trim(), rest.join(' > ') || '—'];
}

const ICON: Record<RequirementStatus, string> = { pass: '✅ pass', fail: '❌ fail', warn: '⚠️ warn', skipped: '⏭️ not certified' };

/** A requirement the ledger excludes: out of scope (its reason starts `excluded:`). */
export function outOfScope(r: Pick<RequirementResult, 'status' | 'reason'>): boolean {
  return r.status === 'skipped' && !!r.reason?.startsWith('excluded');
}

/** A requirement's status in words: a skipped one is out of scope (the ledger's exclusion) or not certified. */
function statusText(r: RequirementResult): string {
  return outOfScope(r) ? '⏭️ out of scope' : ICON[r.status];
}

/** `56 pass, 1 warn, 0 fail, 20 out of scope` (and `N not certified` when some skipped requirement is). */
export function countsLine(report: Pick<ConformanceReport, 'summary' | 'requirements'>): string {
  const s = report.summary;
  const out = report.requirements.filter(outOfScope).length;
  const other = s.skipped - out;
  return `${s.pass} pass, ${s.warn} warn, ${s.fail} fail${other ? `, ${other} not certified` : ''}, ${out} out of scope`;
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

function block(text: string): string {
  const fence = text.includes('```') ? '~~~~' : '```';
  return `${fence}\n${text}\n${fence}`;
}

function targetLine(target: unknown): string {
  if (target && typeof target === 'object') {
    const t = target as Record<string, unknown>;
    const parts = [`inventory \`${String(t.baseUrl ?? '?')}\``];
    if (t.apiUrl) parts.push(`messages \`${String(t.apiUrl)}\``);
    const tls = typeof t.tls === 'string' && t.tls.startsWith('not verified') ? ` — **TLS certificate ${t.tls}**` : '';
    return parts.join(', ') + (t.kind === 'reference' ? ' (bundled reference server)' : '') + tls;
  }
  return `\`${String(target)}\``;
}

function name(r: RequirementResult): string {
  return `**${r.id}**${r.experimental ? ' 🧪 _experimental_' : ''}`;
}

function evidenceLines(e: EvidenceEntry, full: boolean): string[] {
  const out: string[] = [];
  out.push(`- \`${e.test}\` [${e.project}] → **${e.outcome}**${e.requests ? ` (${e.requests} requests)` : ''}`);
  for (const f of failureTexts([e], { warnings: true })) {
    out.push(`  - ${f.what.replace(/\n/g, ' ')}`);
    if (f.expected !== undefined) out.push(`    - expected: ${f.expected.replace(/\n/g, ' ')}`);
    if (f.observed !== undefined) out.push(`    - observed: ${f.observed.replace(/\n/g, ' ')}`);
    if (f.curl) out.push('    - reproduce (set `API_KEY` first):', '', indent(indent(block(f.curl))), '');
  }
  for (const w of e.warnings ?? []) out.push(`  - ⚠️ ${w.replace(/\n/g, ' ')}`);
  if (e.notCertified) out.push(`  - not certified: ${e.notCertified}`);
  if (full) {
    const ev = e.evidence ?? [];
    const shown = ev.slice(0, 12);
    for (const x of shown) out.push(`  - \`${x.replace(/`/g, "'").replace(/\n/g, ' ')}\``);
    if (ev.length > shown.length) out.push(`  - … ${ev.length - shown.length} more exchanges in results.json`);
  }
  return out;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}

/** Heading of the project's own rules (ledger `source: project`), apart from the spec's sections. */
export const PROJECT_RULES = "Project rules (this harness's own, not spec conformance)";

const GATE_LABEL: Record<ConformanceReport['gate']['result'], string> = {
  pass: '✅ PASS',
  fail: '❌ FAIL',
  'not-certified': '⚠️ NOT CERTIFIED (strict)',
  harness: '⛔ HARNESS TROUBLE (the run could not judge)',
  unreachable: '⛔ UNREACHABLE',
  usage: '⛔ USAGE ERROR',
  interrupted: '⛔ INTERRUPTED',
};

/** The gate's part: the one result every report states, its exit code, and the known, fixed and new failures. */
export function gateMarkdown(report: ConformanceReport): string[] {
  const g = report.gate;
  const lines = [
    `**Gate: ${GATE_LABEL[g.result]}${g.result === 'pass' && g.knownFailures.length ? ' (with known failures)' : ''}** — exit code ${g.exitCode}${g.strict ? ' (strict)' : ''}`,
    '',
  ];
  for (const r of g.reasons) lines.push(`- ${r.replace(/\n/g, ' ')}`);
  if (g.reasons.length) lines.push('');
  if (g.baseline) lines.push(`Baseline: \`${g.baseline.file}\` (sha256 ${g.baseline.digest.slice(0, 16)}…)`, '');
  if (g.comparedWith)
    lines.push(
      `Compared with: \`${g.comparedWith.file}\` of ${g.comparedWith.generatedAt} (certificate ${g.comparedWith.certificate.slice(0, 16)}…): only what passed there and fails now fails the gate.`,
      '',
    );
  if (g.newFailures.length)
    lines.push(`New failures (they fail the gate): ${g.newFailures.map((f) => `**${f.id}** (${f.why})`).join(', ')}`, '');
  if (g.knownFailures.length)
    lines.push(
      `Known failures (they do not fail the gate): ${g.knownFailures.map((k) => `**${k.id}**${k.reason ? ` (${k.reason.replace(/\n/g, ' ')})` : ''}`).join(', ')}`,
      '',
    );
  if (g.fixedFailures.length)
    lines.push(`Fixed (remove them from the baseline): ${g.fixedFailures.map((f) => `**${f.id}** now ${f.status}`).join(', ')}`, '');
  return lines;
}

/** The pets the run left changed (they fail the gate): each pet, its original and its current count, what to do. */
export function leftChangedMarkdown(report: ConformanceReport): string[] {
  const lines: string[] = [];
  const left = report.problems.filter((p) => p.kind === 'target-left-changed');
  const pets = left.flatMap((x) => x.pets ?? []);
  if (left.length) lines.push('## Target left changed', '');
  if (pets.length) {
    lines.push('The run could not restore these pets; restore them by hand. This fails the gate, whatever the requirements say.', '');
    lines.push('| Pet | Original quantity | Current quantity | What to do |', '|---|---|---|---|');
    for (const p of pets) {
      lines.push(
        `| ${cell(p.petId)} | ${cell(p.created ? 'not listed (created by the run)' : p.original)} | ${cell(p.current ?? 'missing from the list')} | ${cell(p.action ?? 'set its quantity back by hand')} |`,
      );
    }
    lines.push('');
  }
  // Named without a reading of each pet (a run stopped before it put back what it changed).
  for (const p of left.filter((x) => !x.pets?.length)) lines.push(`- ${cell(p.reason)}`, '');
  return lines;
}

/** What the run left on the target by design (the messages it posted, counted by check) and what it repaired first. */
function footprintMarkdown(report: ConformanceReport): string[] {
  const lines: string[] = [];
  const j = report.journal;
  const messages = j ? [...j.repair.messages, ...j.end.messages] : [];
  const counted = messagesCountedText(messages, 12);
  const footprint = footprintLine(report.footprint?.messages);
  if (footprint || counted || j?.repair.restored.length || j?.repair.otherTargets.length)
    lines.push('## What the run left on the target', '');
  if (counted)
    lines.push(
      `${counted} (to ${messageAddresses(messages)
        .map((a) => `\`${cell(a)}\``)
        .join(
          ', ',
        )}). The API cannot take a message back: delete them by hand if the service allows; this does not fail the gate. Each message, with its time, is in \`conformance.json\` (\`journal\`).`,
      '',
    );
  if (footprint) lines.push(cell(footprint), '');
  if (j?.repair.restored.length) {
    lines.push(
      `Repaired first: an earlier run did not finish; before this run sent anything else it put back and verified ${j.repair.restored.map((p) => `pet ${cell(p.petId)} (${p.how})`).join(', ')}.`,
      '',
    );
  }
  for (const o of j?.repair.otherTargets ?? [])
    lines.push(`Journal of another target left alone: ${cell(o.file)} (${o.open} open for ${cell(o.target)}).`, '');
  const alone = j ? [...(j.repair.leftAlone ?? []), ...(j.end.leftAlone ?? [])] : [];
  if (alone.length) {
    lines.push(
      `Left alone (${alone.length}): somebody else wrote these pets since the run did; the repair did not write over them:`,
      '',
      ...alone.map(
        (a) =>
          `- pet ${cell(a.petId)}: original ${cell(a.original)}, the run wrote ${cell(a.written?.join(' or ') || 'not recorded')}, found ${cell(a.found ?? 'missing')}`,
      ),
      '',
    );
  }
  for (const h of j?.holds ?? []) lines.push(`Waited for an earlier run's 429: ${cell(h.reason)}`, '');
  return lines;
}

/** The report's head: the gate and its reasons, the target, profile, the requirement counts. */
function headMarkdown(report: ConformanceReport): string[] {
  const lines: string[] = [];
  lines.push('# Inventory Service conformance report', '');
  lines.push(...gateMarkdown(report));
  lines.push(`- Target: ${targetLine(report.target)}`);
  lines.push(`- Profile: \`${report.profile}\``);
  lines.push(`- Requirements: ${countsLine(report)}`, '');
  return lines;
}

/** The run's figures: requests by phase, the phases and their times, when. */
function runMarkdown(report: ConformanceReport): string[] {
  const lines: string[] = ['## The run', ''];
  const byPhase = Object.entries(report.requestsByPhase ?? {})
    .map(([p, n]) => `${p} ${n}`)
    .join(', ');
  lines.push(`- Requests sent: ${report.requests}${byPhase ? ` (${byPhase})` : ''}`);
  const phases = (report.phases ?? [])
    .map((p) => (p.ran ? `${p.name} ${p.seconds} s${p.exit === 0 ? '' : ` (exit ${p.exit})`}` : `${p.name} not run (${p.reason})`))
    .join(', ');
  if (phases) lines.push(`- Phases, each from its opening (they overlap): ${phases}`);
  lines.push(`- Generated: ${report.generatedAt}`, '');
  return lines;
}

/** What was not certified, grouped by reason, stated plainly near the top: never the server's failure. */
function notCertifiedMarkdown(report: ConformanceReport): string[] {
  const lines: string[] = [];
  if (!report.notCertified.length) return lines;
  lines.push('## Not certified by this run', '');
  lines.push(
    `The checks below were not judged: the profile \`${report.profile}\` left them out, the harness reached one of its own ` +
      'limits (a cap, a `Retry-After` beyond `MAX_RETRY_AFTER_S`, a shared key, a missing prerequisite), or the run could not tell ' +
      'what it saw (a request not answered in time while the server answered nothing else either, a timeout judged while the ' +
      "harness's own process was held from running): never a failure of the server. " +
      'These requirements are **not certified**, whatever the verdict says about the rest.',
    '',
  );
  const byReason = new Map<string, typeof report.notCertified>();
  for (const n of report.notCertified) {
    const list = byReason.get(n.reason) ?? [];
    list.push(n);
    byReason.set(n.reason, list);
  }
  for (const [reason, list] of byReason) {
    lines.push(`${reason}:`, '');
    for (const n of list)
      lines.push(`- **${n.id}** (${n.level}) ${quoteSentence(n.title)}${n.partial ? ' — _partly: its other checks ran_' : ''}`);
    lines.push('');
  }
  return lines;
}

/** What the run-wide pacer saw on each key (by label). */
function pacingMarkdown(report: ConformanceReport): string[] {
  const lines: string[] = [];
  if (report.pacing?.length) {
    lines.push(
      '## Pacing',
      '',
      'What the run-wide pacer saw on each key (by label): nothing is sent on a key while a 429 on it is pending.',
      '',
    );
    lines.push('| Key | Requests | Waits | Longest wait | 429s | Early requests | Ban suspected |', '|---|---|---|---|---|---|---|');
    for (const k of report.pacing) {
      lines.push(
        `| \`${k.key}\` | ${k.requests} | ${k.waits ?? '—'} | ${k.longestWaitS} s | ${k.refused} | ${k.earlyRequests} | ${k.suspectedBan ? 'yes' : 'no'} |`,
      );
    }
    lines.push('');
    const notes = report.pacing.flatMap((k) =>
      [...(k.notes ?? []), ...(k.anotherClient ? [`another client: ${k.anotherClient}`] : [])].map((n) => `- \`${k.key}\`: ${n}`),
    );
    if (notes.length) lines.push(...notes, '');
  }
  const others = otherRunsLines(report.otherRuns);
  if (others.length) lines.push('## Other runs', '', ...others.map((l) => `- ${l}`), '');
  return lines;
}

/** Run problems (the target left changed aside: the head states it): each fails the run on its own. */
function problemsMarkdown(report: ConformanceReport): string[] {
  const lines: string[] = [];
  const problems = report.problems.filter((p) => p.kind !== 'target-left-changed');
  if (problems.length) {
    lines.push('## Run problems', '', 'Each of these fails the run on its own:', '');
    for (const p of problems) lines.push(`- ${p.reason.replace(/\n/g, ' ')}`);
    lines.push('');
  }
  return lines;
}

/** Each failed requirement with its evidence; a known failure (the baseline's) says so. */
function failuresMarkdown(report: ConformanceReport): string[] {
  const lines: string[] = [];
  const failed = report.requirements.filter((r) => r.status === 'fail');
  if (failed.length) {
    lines.push(`## Failures (${failed.length})`, '');
    const known = new Map(report.gate.knownFailures.map((k) => [k.id, k]));
    for (const r of failed) {
      const k = known.get(r.id);
      lines.push(`### ${name(r)} (${r.level}) ${quoteSentence(r.title)}${k ? ' — known failure' : ''}`, '', `Section: ${r.section}`, '');
      if (k) lines.push(`Known failure (${k.from}${k.reason ? `: ${k.reason.replace(/\n/g, ' ')}` : ''}): it does not fail the gate.`, '');
      if (r.reason) lines.push(`Reason: ${r.reason}`, '');
      for (const e of r.evidence.filter((x) => x.outcome !== 'passed')) lines.push(...evidenceLines(e, true));
      lines.push('');
    }
  }
  return lines;
}

/** Should-level findings and leniency notes, with the evidence that warned. */
function warningsMarkdown(report: ConformanceReport): string[] {
  const lines: string[] = [];
  const warned = report.requirements.filter((r) => r.status === 'warn');
  if (warned.length) {
    lines.push(`## Warnings (${warned.length})`, '', 'Should-level findings and leniency notes; they do not fail the run.', '');
    for (const r of warned) {
      lines.push(`### ${name(r)} (${r.level}) ${quoteSentence(r.title)}`, '');
      if (r.reason) lines.push(`Reason: ${r.reason}`, '');
      for (const e of r.evidence.filter((x) => x.outcome !== 'passed' || (x.warnings?.length ?? 0) > 0))
        lines.push(...evidenceLines(e, false));
      lines.push('');
    }
  }
  return lines;
}

/** The load phase's checks, each once, with its first figures (the rest are in `load.json`). */
function loadMarkdown(report: ConformanceReport): string[] {
  const lines: string[] = [];
  const load = report.requirements.filter((r) => r.evidence.some((e) => e.project === 'load' && e.outcome !== 'skipped'));
  if (load.length) {
    lines.push('## Load and limiter figures', '', 'From the `load` phase; the full figures are in `load.json`.', '');
    const shown = new Set<string>();
    for (const r of load) {
      for (const e of r.evidence.filter((x) => x.project === 'load' && x.outcome !== 'skipped')) {
        if (shown.has(e.test)) continue;
        shown.add(e.test);
        lines.push(`- ${ICON[r.status]} \`${e.test}\` → **${e.outcome}**${e.requests ? ` (${e.requests} requests)` : ''}`);
        for (const x of (e.evidence ?? []).slice(0, 8)) lines.push(`  - ${x.replace(/\n/g, ' ')}`);
      }
    }
    lines.push('');
  }
  return lines;
}

/** The requirements of operations the spec marks experimental. */
function experimentalMarkdown(report: ConformanceReport): string[] {
  const lines: string[] = [];
  if (report.experimental.length) {
    lines.push(
      '## Experimental operations',
      '',
      `🧪 marks requirements of operations the spec marks experimental (\`updateInventory\`: "its request shape may change"): ${report.experimental.join(', ')}.`,
      '',
    );
  }
  return lines;
}

/** The table of every requirement, by spec section: clause, level, status, statement, tests passed. */
function requirementsMarkdown(report: ConformanceReport): string[] {
  const lines: string[] = [];
  lines.push('## All requirements by spec section', '');
  for (const [section, list] of sectionGroups(report.requirements)) {
    lines.push(`### ${section}`, '', '| Requirement | Clause | Level | Status | Statement | Tests |', '|---|---|---|---|---|---|');
    for (const r of list) {
      const [, clause] = sectionOf(r.section);
      const tests = r.evidence.length ? `${r.evidence.filter((e) => e.outcome === 'passed').length}/${r.evidence.length} passed` : '—';
      lines.push(`| ${name(r)} | ${cell(clause)} | ${r.level} | ${statusText(r)} | ${cell(quoteSentence(r.title))} | ${tests} |`);
    }
    lines.push('');
  }
  return lines;
}

/** The requirements the ledger excludes (out of scope), each with its reason, behind one click. */
function excludedMarkdown(report: ConformanceReport): string[] {
  const lines: string[] = [];
  const excluded = report.requirements.filter(outOfScope);
  if (excluded.length) {
    lines.push(
      `## Out of scope (${excluded.length})`,
      '',
      '<details><summary>The ledger excludes these from certification: they cannot be observed from outside, or the spec does not show them. Each with its reason.</summary>',
      '',
    );
    for (const r of excluded)
      lines.push(`- **${r.id}** (${r.level}) ${quoteSentence(r.title)} — ${r.reason!.replace(/^excluded:\s*/, '').replace(/\n/g, ' ')}`);
    lines.push('', '</details>', '');
  }
  return lines;
}

/** Tests that name no requirement of the ledger. */
function unmappedMarkdown(report: ConformanceReport): string[] {
  const lines: string[] = [];
  if (report.unmapped.length) {
    lines.push('## Tests naming no ledger requirement', '');
    for (const u of report.unmapped) lines.push(`- \`${u.test}\` [${u.project}] → ${u.outcome}`);
    lines.push('');
  }
  return lines;
}

/** The files beside the report. */
function footerMarkdown(): string[] {
  const lines: string[] = [];
  lines.push(
    '---',
    '',
    'Files beside this one: `conformance.json` (the same verdict, machine-readable), `html/index.html` (Playwright HTML report), ' +
      '`junit.xml`, `results.json` (Playwright JSON), `load.json` (load figures, when the load phase ran), `evidence.har` (the exchanges behind each requirement, for any HAR viewer). See reports/README.md.',
    '',
  );
  return lines;
}

/** The whole report, section by section in the order the file's comment gives. */
export function renderMarkdown(report: ConformanceReport): string {
  return [
    ...headMarkdown(report),
    ...failuresMarkdown(report),
    ...leftChangedMarkdown(report),
    ...problemsMarkdown(report),
    ...notCertifiedMarkdown(report),
    ...warningsMarkdown(report),
    ...runMarkdown(report),
    ...loadMarkdown(report),
    ...pacingMarkdown(report),
    ...footprintMarkdown(report),
    ...experimentalMarkdown(report),
    ...requirementsMarkdown(report),
    ...excludedMarkdown(report),
    ...unmappedMarkdown(report),
    ...footerMarkdown(),
  ].join('\n');
}

/**
 * Requirements grouped by the spec's top-level sections in the spec's order, then the HTTP rules
 * (by RFC clause), then the project's own rules (reported apart from spec conformance).
 */
export function sectionGroups<T extends { section: string; source?: string }>(requirements: readonly T[]): [string, T[]][] {
  const sections = new Map<string, T[]>();
  for (const r of requirements) {
    const [top] = r.source === 'project' ? [PROJECT_RULES] : sectionOf(r.section);
    sections.set(top, [...(sections.get(top) ?? []), r]);
  }
  const order = (name: string) => {
    const i = SPEC_ORDER.indexOf(name);
    return i >= 0 ? i : name === HTTP_RULES ? SPEC_ORDER.length : name === PROJECT_RULES ? SPEC_ORDER.length + 2 : SPEC_ORDER.length + 1;
  };
  return [...sections.entries()].sort(([a], [b]) => order(a) - order(b));
}
