/**
 * `junit.xml` states the gate: Playwright's JUnit report, with each known failure (listed in the
 * baseline, or not passing in the compared certificate either) turned into a skipped case that
 * gives its reason, and one more suite, `inventory-conformance gate`, whose one case passes,
 * fails or is skipped as the gate does. A CI test tab then turns red exactly when the exit code
 * says so. Pure: text in, text out.
 */
import type { ConformanceReport } from './verdict.ts';

const FAILED = new Set(['failed', 'flaky', 'interrupted']);

export function xmlEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

function unescapeXml(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** The failing tests (project and title) whose every failed requirement is a known failure, with the reason. */
export function knownFailingTests(
  report: Pick<ConformanceReport, 'gate' | 'requirements'>,
): { project: string; title: string; reason: string }[] {
  const known = new Map(report.gate.knownFailures.map((k) => [k.id, k]));
  const failedBy = new Map<string, { project: string; title: string; ids: string[] }>();
  for (const r of report.requirements.filter((x) => x.status === 'fail' || x.status === 'warn')) {
    for (const e of r.evidence.filter((x) => FAILED.has(x.outcome))) {
      const key = `${e.project}\u0000${e.test}`;
      const entry = failedBy.get(key) ?? { project: e.project, title: e.test, ids: [] };
      if (r.status === 'fail') entry.ids.push(r.id);
      failedBy.set(key, entry);
    }
  }
  const out: { project: string; title: string; reason: string }[] = [];
  for (const t of failedBy.values()) {
    if (!t.ids.length || !t.ids.every((id) => known.has(id))) continue;
    const reasons = t.ids.map((id) => {
      const k = known.get(id)!;
      return `${id}: known failure (${k.from === 'baseline' ? 'baseline' : 'compared certificate'})${k.reason ? `: ${k.reason}` : ''}`;
    });
    out.push({ project: t.project, title: t.title, reason: reasons.join('; ') });
  }
  return out;
}

function attr(tag: string, name: string): string | undefined {
  const m = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  return m ? unescapeXml(m[1]!) : undefined;
}

function setAttr(tag: string, name: string, value: number): string {
  return new RegExp(`\\s${name}="`).test(tag)
    ? tag.replace(new RegExp(`(\\s${name}=")[^"]*(")`), `$1${value}$2`)
    : tag.replace(/>$/, ` ${name}="${value}">`);
}

/** The gate's own suite: one case that passes, fails (exit 1, 4, 5) or reads as the gate does. */
function gateSuite(report: Pick<ConformanceReport, 'gate' | 'generatedAt'>, line: string): string {
  const g = report.gate;
  const failed = g.result !== 'pass';
  const body = g.reasons.map((r) => xmlEscape(r)).join('\n');
  return (
    `<testsuite name="inventory-conformance gate" timestamp="${xmlEscape(report.generatedAt)}" hostname="gate" tests="1" failures="${failed ? 1 : 0}" skipped="0" time="0" errors="0">\n` +
    `<testcase name="${xmlEscape(line)}" classname="gate" time="0">\n` +
    (failed ? `<failure message="${xmlEscape(line)}" type="GATE">\n${body}\n</failure>\n` : '') +
    (g.knownFailures.length
      ? `<properties>\n${g.knownFailures.map((k) => `<property name="known failure" value="${xmlEscape(`${k.id}${k.reason ? `: ${k.reason}` : ''}`)}">\n</property>\n`).join('')}</properties>\n`
      : '') +
    `<system-out>\n${body}\n</system-out>\n</testcase>\n</testsuite>\n`
  );
}

/**
 * Rewrites Playwright's junit.xml: known failures become skipped cases with their reason, the
 * counts follow, and the gate's suite is added last. `line` is the gate's one line (gate.ts gateLine).
 */
export function gateJunit(xml: string, report: Pick<ConformanceReport, 'gate' | 'requirements' | 'generatedAt'>, line: string): string {
  const known = knownFailingTests(report);
  const matchKnown = (name: string, project: string | undefined) =>
    known.find((k) => (project === undefined || k.project === project) && (name === k.title || name.endsWith(` › ${k.title}`)));
  const turned = { failures: 0, errors: 0 };
  const suites = xml.replace(/<testsuite\b[^>]*>[\s\S]*?<\/testsuite>/g, (suite) => {
    const open = /^<testsuite\b[^>]*>/.exec(suite)![0];
    const project = attr(open, 'hostname');
    let here = 0;
    const counts = { failures: [] as number[], errors: [] as number[] };
    const body = suite.replace(/<testcase\b([^>]*)>([\s\S]*?)<\/testcase>/g, (tc, attrs: string, inner: string) => {
      const k = matchKnown(attr(`<x${attrs}>`, 'name') ?? '', project);
      // Playwright writes a failed expect() as <failure> and any other thrown error as <error>.
      const failedAs = /<failure\b/.test(inner) ? 'failures' : /<error\b/.test(inner) ? 'errors' : undefined;
      if (!k || !failedAs) return tc;
      here++;
      (failedAs === 'failures' ? counts.failures : counts.errors).push(1);
      const rest = inner.replace(/<(failure|error)\b[\s\S]*?<\/\1>\n?|<(?:failure|error)\b[^>]*\/>\n?/g, '');
      return `<testcase${attrs}>\n<skipped message="${xmlEscape(k.reason)}"/>${rest.startsWith('\n') ? '' : '\n'}${rest}</testcase>`;
    });
    if (!here) return body;
    turned.failures += counts.failures.length;
    turned.errors += counts.errors.length;
    const failures = Math.max(0, Number(attr(open, 'failures') ?? 0) - counts.failures.length);
    const errors = Math.max(0, Number(attr(open, 'errors') ?? 0) - counts.errors.length);
    const skipped = Number(attr(open, 'skipped') ?? 0) + here;
    return body.replace(open, setAttr(setAttr(setAttr(open, 'failures', failures), 'errors', errors), 'skipped', skipped));
  });
  const rootMatch = /<testsuites\b[^>]*>/.exec(suites);
  if (!rootMatch) return suites;
  const root = rootMatch[0];
  const gateFailed = report.gate.result !== 'pass' ? 1 : 0;
  let newRoot = setAttr(root, 'tests', Number(attr(root, 'tests') ?? 0) + 1);
  newRoot = setAttr(newRoot, 'failures', Math.max(0, Number(attr(root, 'failures') ?? 0) - turned.failures) + gateFailed);
  newRoot = setAttr(newRoot, 'errors', Math.max(0, Number(attr(root, 'errors') ?? 0) - turned.errors));
  newRoot = setAttr(newRoot, 'skipped', Number(attr(root, 'skipped') ?? 0) + turned.failures + turned.errors);
  const withRoot = suites.replace(root, newRoot);
  return withRoot.replace(/<\/testsuites>\s*$/, `${gateSuite(report, line)}</testsuites>\n`);
}
