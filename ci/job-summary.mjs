#!/usr/bin/env node
// The action's job summary (action.yml, step "job summary"): reads reports/certificate.json of the
// folder it runs in and appends to $GITHUB_STEP_SUMMARY, in Markdown and in the certificate's order:
// the verdict and the gate's reasons; the failed requirements, each with expected, observed and
// curl; what was not certified and why; warnings; then the rest, counted (out of scope, messages
// posted). Short: the certificate holds the full lists. Node alone, no dependency: it runs beside
// the installed harness, from the action's own checkout.
// Usage: node ci/job-summary.mjs [certificate.json]   (CERTIFY_EXIT: certify's exit code, if any)
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';

const LABEL = { pass: 'PASS', fail: 'FAIL', 'not-certified': 'NOT CERTIFIED', harness: 'HARNESS TROUBLE', interrupted: 'INTERRUPTED' };

/** A table cell: one line, `|` and `<` escaped. */
const cell = (s) =>
  String(s ?? '')
    .replace(/\s+/g, ' ')
    .replace(/\|/g, '\\|')
    .replace(/</g, '&lt;');

/** Inline code: one line, backticks kept out. */
const code = (s) =>
  `\`${String(s ?? '')
    .replace(/\s+/g, ' ')
    .replace(/`/g, "'")}\``;

/** The first failed finding of a requirement's evidence: what, expected, observed, curl. */
function firstFailure(q) {
  for (const e of Array.isArray(q.evidence) ? q.evidence : []) {
    if (!['failed', 'flaky', 'interrupted'].includes(e.outcome)) continue;
    const f = (e.findings ?? []).find((x) => x.level === 'fail' || x.level === 'gate');
    if (f) return { what: f.message, expected: f.expected, observed: f.observed, curl: f.curl ?? e.curl };
    return { what: String(e.errors?.[0] ?? 'failed').split('\n')[0], curl: e.curl };
  }
  return undefined;
}

/** At most `max` items of a list, then how many more. */
function some(items, max) {
  return items.length > max ? [...items.slice(0, max), `… and ${items.length - max} more in the certificate`] : items;
}

/** The summary's Markdown for a certificate (undefined: none was written). */
export function jobSummary(c, certifyExit) {
  if (!c?.results?.gate)
    return [
      '## Inventory Service conformance: no certificate',
      '',
      `certify exit ${certifyExit || 'unknown'}: no certificate was written; the step log says why.`,
      '',
    ].join('\n');
  const g = { reasons: [], ...c.results.gate };
  const s = { pass: 0, warn: 0, fail: 0, skipped: 0, ...c.results.summary };
  const requirements = Array.isArray(c.results.requirements) ? c.results.requirements : [];
  const notCertified = Array.isArray(c.results.notCertified) ? c.results.notCertified : [];
  const failed = requirements.filter((q) => q.status === 'fail');
  const warned = requirements.filter((q) => q.status === 'warn');
  const outOfScope = requirements.filter((q) => q.status === 'skipped' && q.excluded).length;
  const j = c.results.journal;
  const messages = j ? [...(j.repair?.messages ?? []), ...(j.end?.messages ?? [])] : [];
  const target = c.target?.kind === 'external' ? `\`${cell(c.target.baseUrl)}\`` : 'the bundled reference server';
  // Ten at most, each in at most four lines: the certificate has the rest.
  const failedLines = failed.slice(0, 10).flatMap((q) => {
    const f = firstFailure(q);
    const head = `- **${cell(q.id)}** (${cell(q.level)})${q.knownFailure ? ` known failure${q.knownFailure.reason ? `: ${cell(q.knownFailure.reason)}` : ''}` : ''}: ${cell(f?.what ?? q.reason ?? q.quote)}`;
    if (!f) return [head];
    return [
      head,
      ...(f.expected !== undefined ? [`  - expected: ${cell(f.expected)}`] : []),
      ...(f.observed !== undefined ? [`  - observed: ${cell(f.observed)}`] : []),
      ...(f.curl ? [`  - reproduce: ${code(f.curl)}`] : []),
    ];
  });
  const byReason = new Map();
  for (const n of notCertified) byReason.set(n.reason, [...(byReason.get(n.reason) ?? []), n.id]);
  const rest = [
    `${outOfScope} out of scope (the ledger's exclusions, each with its reason in the certificate)`,
    ...(messages.length ? [`${messages.length} message(s) posted to the target by design (the API cannot take one back)`] : []),
    `${c.results.requests ?? 0} requests sent`,
  ];
  return [
    `## Inventory Service conformance: ${LABEL[g.result] ?? String(g.result).toUpperCase()}`,
    '',
    `Target ${target}, profile ${cell(c.profile)}${g.strict ? ' (strict)' : ''}, exit ${g.exitCode}: ${s.pass} passed, ${s.warn} warned, ${s.fail} failed, ${notCertified.length} not certified.${c.validUntil ? ` The certificate is valid until ${cell(c.validUntil)}.` : ''}`,
    '',
    ...g.reasons.map((r) => `- ${cell(r)}`),
    ...(g.reasons.length ? [''] : []),
    ...(failed.length
      ? [
          `### Failed requirements (${failed.length})`,
          '',
          ...failedLines,
          ...(failed.length > 10 ? [`- … and ${failed.length - 10} more in the certificate`] : []),
          '',
        ]
      : []),
    ...(byReason.size
      ? [
          `### Not certified (${notCertified.length})`,
          '',
          ...some(
            [...byReason].map(([reason, ids]) => `- ${cell(ids.join(', '))}: ${cell(reason)}`),
            8,
          ),
          '',
        ]
      : []),
    ...(warned.length ? [`### Warnings (${warned.length})`, '', cell(warned.map((q) => q.id).join(', ')), ''] : []),
    `Also: ${rest.join('; ')}. The certificate (\`certificate.html\`, in the uploaded artifact) has every requirement.`,
    '',
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const file = process.argv[2] ?? 'reports/certificate.json';
  let certificate;
  try {
    certificate = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    certificate = undefined;
  }
  const target = process.env.GITHUB_STEP_SUMMARY;
  let text;
  try {
    text = jobSummary(certificate, process.env.CERTIFY_EXIT);
  } catch (error) {
    // The summary never fails the job: the gate step does that, with certify's exit code.
    text = `## Inventory Service conformance\n\nThe certificate could not be summarised (${cell(error?.message)}); see the uploaded artifact.\n`;
  }
  if (target) fs.appendFileSync(target, text);
  else process.stdout.write(text);
}
