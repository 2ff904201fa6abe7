#!/usr/bin/env node
// The action's job summary (action.yml, step "job summary"): reads reports/certificate.json of the
// folder it runs in and appends to $GITHUB_STEP_SUMMARY, in Markdown, the verdict, the gate's
// reasons, the failed requirements and what was not certified, each with its reason. Node alone,
// no dependency: it runs beside the installed harness, from the action's own checkout.
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

function table(header, rows) {
  if (!rows.length) return ['None.'];
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`)];
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
  const why = (q) => (q.knownFailure ? `known failure${q.knownFailure.reason ? `: ${q.knownFailure.reason}` : ''}` : q.reason || q.quote);
  const target = c.target?.kind === 'external' ? `\`${cell(c.target.baseUrl)}\`` : 'the bundled reference server';
  return [
    `## Inventory Service conformance: ${LABEL[g.result] ?? String(g.result).toUpperCase()}`,
    '',
    `Target ${target}, profile ${cell(c.profile)}${g.strict ? ' (strict)' : ''}, exit ${g.exitCode}: ${s.pass} passed, ${s.warn} warned, ${s.fail} failed, ${s.skipped} skipped, ${notCertified.length} not certified.${c.validUntil ? ` The certificate is valid until ${cell(c.validUntil)}.` : ''}`,
    '',
    ...g.reasons.map((r) => `- ${cell(r)}`),
    ...(g.reasons.length ? [''] : []),
    `### Failed requirements (${failed.length})`,
    '',
    ...table(
      ['requirement', 'level', 'why'],
      failed.map((q) => [q.id, q.level, why(q)]),
    ),
    '',
    `### Not certified (${notCertified.length})`,
    '',
    ...table(
      ['requirement', 'level', 'reason'],
      notCertified.map((n) => [n.id, n.level, n.reason]),
    ),
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
