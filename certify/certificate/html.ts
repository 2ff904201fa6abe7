/**
 * `certificate.html`: the certificate a person reads. Self-contained (inline CSS and SVG, no script,
 * nothing fetched). In the order a reader acts on it: the verdict and the gate's reasons, the
 * failing requirements (expected, observed, curl), the pets left changed and run problems, what
 * was not certified and why, the baseline and the comparison, warnings; then the rest: what an
 * earlier run left and this one repaired, load charts, what the run left on the target (counted,
 * the list behind a click), the requirement matrix by spec section, what is out of scope (behind a
 * click), and the digests. Pure.
 */
import { sectionGroups, sectionOf } from '../markdown.ts';
import { quoteSentence, rowCells } from './quotes.ts';
import { failureTexts, type FailureText } from '../failure-text.ts';
import { esc, latencyChart, windowsChart } from './charts.ts';
import { comparedWithHtml, leftChangedHtml, repairedHtml } from './gate-html.ts';
import { footprintHtml, isOutOfScope, outOfScopeHtml } from './rest-html.ts';
import type { Certificate, CertifiedRequirement } from './types.ts';

const STATUS_LABEL: Record<string, string> = { pass: 'pass', fail: 'FAIL', warn: 'warn', skipped: 'not certified' };

/** A requirement's status in words: a skipped one is out of scope (the ledger's exclusion) or not certified. */
function statusLabel(r: CertifiedRequirement): string {
  return isOutOfScope(r) ? 'out of scope' : (STATUS_LABEL[r.status] ?? r.status);
}

/** Where a requirement comes from, in words. */
const SOURCE_LABEL: Record<string, string> = {
  spec: 'the spec',
  rfc: 'an HTTP RFC the spec relies on',
  rules: 'the HTTP rules this suite follows (spec/http-rules.md, drawn from the RFCs)',
  project: 'a rule of this project (e.g. the thresholds you set), not a statement of the spec',
};

const CSS = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1b1b1b;background:#fafafa}
main{max-width:1100px;margin:0 auto;padding:16px 20px 40px}
header.verdict{display:flex;gap:20px;align-items:center;padding:14px 18px;border-radius:8px;color:#fff}
header.pass{background:#1e7e34}header.known{background:#a86400}header.fail{background:#b02a37}header.not-certified{background:#b36b00}header.harness,header.unreachable{background:#5a5a5a}
.badge{font-size:30px;font-weight:800;letter-spacing:.5px;white-space:nowrap}
.meta{font-size:13px;display:grid;grid-template-columns:auto 1fr;gap:1px 10px}.meta b{font-weight:600}
.meta code{color:#fff;background:rgba(255,255,255,.15);padding:0 3px;border-radius:3px;word-break:break-all}
section{margin-top:16px;background:#fff;border:1px solid #e3e3e3;border-radius:8px;padding:10px 16px}
h2{font-size:17px;margin:4px 0 8px}h3{font-size:15px;margin:12px 0 6px}
ul.tight{margin:4px 0;padding-left:20px}
.failing li{margin:3px 0}.failing .id{font-weight:700;color:#b02a37}
.summary span{display:inline-block;margin-right:14px}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{border-bottom:1px solid #eee;padding:4px 6px;text-align:left;vertical-align:top}
td.status{white-space:nowrap;font-weight:600}.s-pass{color:#1e7e34}.s-fail{color:#b02a37}.s-warn{color:#b36b00}.s-skipped{color:#777}
details>summary{cursor:pointer}pre{white-space:pre-wrap;word-break:break-word;background:#f4f4f4;padding:6px;border-radius:4px;margin:4px 0;font-size:12px}
blockquote{margin:4px 0;padding:2px 10px;border-left:3px solid #bbb;color:#333}
table.quote{width:auto;margin:4px 0;border-left:3px solid #bbb}table.quote th{font-weight:600;color:#555;background:#f6f6f6}
pre.curl{background:#1f2430;color:#e8e8e8}.finding{margin:4px 0}.finding b{display:inline-block;min-width:70px}
.muted{color:#666}.known{color:#6f42c1;font-weight:600}
.charts{display:flex;flex-wrap:wrap;gap:18px}
footer{margin-top:18px;font-size:12px;color:#555}footer code{word-break:break-all}
`;

function headline(cert: Certificate): { cls: string; badge: string; line: string } {
  const g = cert.results.gate;
  const known = g.knownFailures?.length ?? 0; // the gate's: from the baseline or the compared certificate
  switch (g.result) {
    case 'pass':
      return {
        // Amber, not green: failing requirements were accepted by a baseline.
        cls: known ? 'known' : 'pass',
        badge: known ? 'PASS (with known failures)' : 'PASS',
        line: known
          ? `No new failure. ${known} known failure(s) accepted (by the baseline, or failing in the compared certificate too) are listed below.`
          : 'Every must-level requirement this run certifies passed.',
      };
    case 'fail':
      return { cls: 'fail', badge: 'FAIL', line: 'The target does not conform: the failing requirements are listed below.' };
    case 'not-certified':
      return {
        cls: 'not-certified',
        badge: 'NOT CERTIFIED',
        line: 'Strict mode: what ran passed, but part of the spec was not certified (see why below).',
      };
    case 'unreachable':
      return { cls: 'unreachable', badge: 'UNREACHABLE', line: 'The target did not answer; nothing was judged.' };
    case 'interrupted':
      return {
        cls: 'harness',
        badge: 'INTERRUPTED',
        line: 'A signal stopped the run: what ran is reported below; what did not end is not certified.',
      };
    default:
      return {
        cls: 'harness',
        badge: 'NO VERDICT (harness trouble)',
        line: 'The run itself had trouble; its results are incomplete. See the run problems.',
      };
  }
}

function targetText(target: unknown): string {
  const t = (target ?? {}) as Record<string, unknown>;
  const parts = [String(t.baseUrl ?? '?')];
  if (t.apiUrl) parts.push(`messages ${String(t.apiUrl)}`);
  return parts.join(', ') + (t.kind === 'reference' ? ' (bundled reference server)' : '');
}

function firstFailure(r: CertifiedRequirement): FailureText | undefined {
  return failureTexts(r.evidence)[0];
}

/** A failure as the certificate shows it: what was judged, expected, observed, and its curl. */
function failureHtml(f: FailureText): string {
  return [
    `<div class="finding">${esc(f.what)}</div>`,
    f.expected !== undefined ? `<div class="finding"><b>expected</b> ${esc(f.expected)}</div>` : '',
    f.observed !== undefined ? `<div class="finding"><b>observed</b> ${esc(f.observed)}</div>` : '',
    f.curl ? `<div class="muted">Reproduce (with <code>API_KEY</code> set):</div><pre class="curl">${esc(f.curl)}</pre>` : '',
  ].join('');
}

function evidenceHtml(r: CertifiedRequirement): string {
  if (!r.evidence.length) return '<p class="muted">No test evidences this requirement in this run.</p>';
  return r.evidence
    .map((e) => {
      const lines: string[] = [
        `<div><b>${esc(e.test)}</b> <span class="muted">[${esc(e.project)}]</span> → <span class="s-${e.outcome === 'passed' ? 'pass' : e.outcome === 'skipped' ? 'skipped' : 'fail'}">${esc(e.outcome)}</span>${e.requests ? ` <span class="muted">(${e.requests} requests)</span>` : ''}</div>`,
      ];
      for (const f of failureTexts([e], { warnings: true })) lines.push(failureHtml(f));
      for (const w of e.warnings ?? []) lines.push(`<div class="s-warn">⚠ ${esc(w)}</div>`);
      if (e.notCertified) lines.push(`<div class="muted">not certified: ${esc(e.notCertified)}</div>`);
      const ev = e.evidence ?? [];
      if (ev.length)
        lines.push(`<pre>${esc(ev.slice(0, 12).join('\n'))}${ev.length > 12 ? `\n… ${ev.length - 12} more in results.json` : ''}</pre>`);
      return lines.join('');
    })
    .join('');
}

/** Inline code spans of a verbatim quote (`like this`) as <code>; the rest escaped. */
function inline(text: string): string {
  return text
    .split(/(`[^`]+`)/)
    .map((part) => (/^`[^`]+`$/.test(part) ? `<code>${esc(part.slice(1, -1))}</code>` : esc(part)))
    .join('');
}

/** The quote as the spec shows it: a table row under its table's header, or a sentence. */
export function quoteHtml(r: Pick<CertifiedRequirement, 'quote' | 'quoteHeader'>): string {
  const cells = rowCells(r.quote);
  if (!cells) return `<blockquote>${inline(r.quote)}</blockquote>`;
  const head =
    r.quoteHeader && r.quoteHeader.length === cells.length
      ? `<thead><tr>${r.quoteHeader.map((h) => `<th>${inline(h)}</th>`).join('')}</tr></thead>`
      : '';
  return `<table class="quote">${head}<tbody><tr>${cells.map((c) => `<td>${inline(c)}</td>`).join('')}</tr></tbody></table>`;
}

/** The quote as one line of plain words, cut at `max` characters. */
function quoteLine(r: Pick<CertifiedRequirement, 'quote' | 'quoteHeader'>, max: number): string {
  const line = quoteSentence(r.quote, r.quoteHeader);
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function requirementDetails(r: CertifiedRequirement): string {
  return [
    quoteHtml(r),
    `<div class="muted">Source: ${esc(SOURCE_LABEL[r.source] ?? r.source)} — ${esc(r.section)} — level ${esc(r.level)}${r.experimental ? ' — experimental operation' : ''}</div>`,
    r.decision ? `<div><b>Recorded decision:</b> ${esc(r.decision)}</div>` : '',
    r.excluded ? `<div><b>Excluded:</b> ${esc(r.excluded)}</div>` : '',
    r.reason ? `<div><b>Why this status:</b> ${esc(r.reason)}</div>` : '',
    r.knownFailure
      ? `<div class="known">Known failure (baseline)${r.knownFailure.reason ? `: ${esc(r.knownFailure.reason)}` : ''}</div>`
      : '',
    evidenceHtml(r),
  ].join('');
}

/** The verdict's header: badge, headline, target, profile, date, suite and spec. */
function headerHtml(cert: Certificate, h: ReturnType<typeof headline>): string {
  const out: string[] = [];
  const res = cert.results;
  out.push(`<header class="verdict ${h.cls}" id="verdict"><div class="badge" data-testid="verdict">${esc(h.badge)}</div><div>`);
  out.push(
    `<div style="font-weight:600;margin-bottom:4px">Inventory Service conformance certificate. ${esc(h.line)}</div><div class="meta">`,
  );
  out.push(`<b>Target</b><span><code>${esc(targetText(cert.target))}</code></span>`);
  out.push(`<b>Profile</b><span>${esc(cert.profile)}${res.gate.strict ? ' (strict gate)' : ''}</span>`);
  out.push(`<b>Date</b><span>${esc(cert.generatedAt)}</span>`);
  out.push(
    `<b>Valid</b><span>issued ${esc(cert.issuedAt ?? '(not recorded)')}, valid until ${esc(cert.validUntil ?? '(not recorded)')}</span>`,
  );
  out.push(
    `<b>Suite</b><span>${esc(cert.suite.name)} ${esc(cert.suite.version)}${cert.suite.commit ? ` @ <code>${esc(cert.suite.commit.slice(0, 12))}</code>${cert.suite.modified ? ' (modified)' : ''}` : ''}</span>`,
  );
  out.push(`<b>Spec</b><span>${esc(cert.spec.title)}, SHA-256 <code>${esc(cert.digests.spec.slice(0, 16))}…</code></span>`);
  out.push('</div></div></header>');
  return out.join('');
}

/** The counts by status, not certified and requests, and the gate's reasons. */
function summaryHtml(res: Certificate['results']): string {
  const out: string[] = [];
  const s = res.summary;
  const outOfScope = res.requirements.filter(isOutOfScope).length;
  out.push('<section class="summary" id="summary">');
  out.push(`<span><b>${s.pass}</b> pass</span><span><b>${s.warn}</b> warn</span><span class="s-fail"><b>${s.fail}</b> fail</span>`);
  out.push(
    `<span><b>${res.notCertified.length}</b> not certified</span><span><a href="#out-of-scope"><b>${outOfScope}</b> out of scope</a></span><span><b>${res.requests}</b> requests sent</span>`,
  );
  if (res.gate.reasons.length) out.push(`<ul class="tight">${res.gate.reasons.map((r) => `<li>${esc(r)}</li>`).join('')}</ul>`);
  out.push('</section>');
  return out.join('');
}

/** The failing requirements not in the baseline, each with its first failure and a curl to reproduce it. */
function failingHtml(failing: readonly CertifiedRequirement[]): string {
  const out: string[] = [];
  if (failing.length) {
    out.push(`<section class="failing" id="failing"><h2>Failing requirements (${failing.length})</h2><ul class="tight">`);
    for (const r of failing)
      out.push(
        `<li data-testid="failing-requirement"><a href="#req-${esc(r.id)}" class="id">${esc(r.id)}</a> (${esc(r.level)}) ${esc(quoteLine(r, 160))}${firstFailure(r) ? failureHtml(firstFailure(r)!) : `<br><span class="muted">${esc(r.reason ?? '')}</span>`}</li>`,
      );
    out.push('</ul></section>');
  }
  return out.join('');
}

/** What this run did not certify, grouped by reason. */
function notCertifiedHtml(res: Certificate['results']): string {
  const out: string[] = [];
  if (res.notCertified.length) {
    out.push(`<section id="not-certified"><h2>Not certified by this run (${res.notCertified.length})</h2>`);
    out.push(
      '<p class="muted">These requirements were not judged, whatever the verdict says about the rest: the profile left them out, the harness reached one of its own limits, or the run could not tell what it saw. Each reason says which; give the missing key or choose the profile that runs them.</p>',
    );
    const byReason = new Map<string, string[]>();
    for (const n of res.notCertified) byReason.set(n.reason, [...(byReason.get(n.reason) ?? []), `${n.id}${n.partial ? ' (partly)' : ''}`]);
    out.push('<ul class="tight">');
    for (const [reason, ids] of byReason) out.push(`<li><b>${esc(ids.join(', '))}</b>: ${esc(reason)}</li>`);
    out.push('</ul></section>');
  }
  return out.join('');
}

/** The baseline's part: known failures, fixed ones, and the ones this run did not judge. */
function baselineHtml(res: Certificate['results'], known: readonly CertifiedRequirement[]): string {
  const out: string[] = [];
  const b = res.baseline;
  if (b) {
    out.push(`<section id="baseline"><h2>Baseline <span class="muted">(${esc(b.file)})</span></h2>`);
    out.push(`<p>${b.known.length} known failure(s), ${b.newFailures.length} new, ${b.fixed.length} fixed.</p>`);
    if (known.length)
      out.push(
        `<h3>Known failures (do not fail the gate)</h3><ul class="tight">${known.map((r) => `<li><a href="#req-${esc(r.id)}" class="known">${esc(r.id)}</a> ${esc(quoteLine(r, 140))}${r.knownFailure?.reason ? ` — <i>${esc(r.knownFailure.reason)}</i>` : ''}</li>`).join('')}</ul>`,
      );
    if (b.fixed.length)
      out.push(
        `<h3>Fixed: remove from the baseline</h3><ul class="tight">${b.fixed.map((f) => `<li><b>${esc(f.id)}</b> now ${esc(f.status)}</li>`).join('')}</ul>`,
      );
    if (b.unjudged.length)
      out.push(
        `<h3>Not judged by this run</h3><ul class="tight">${b.unjudged.map((u) => `<li><b>${esc(u.id)}</b>: ${esc(u.why)}</li>`).join('')}</ul>`,
      );
    out.push('</section>');
  }
  return out.join('');
}

/** Should-level findings and recorded decisions. */
function warningsHtml(warned: readonly CertifiedRequirement[]): string {
  const out: string[] = [];
  if (warned.length) {
    out.push(
      `<section id="warnings"><h2>Warnings and decisions (${warned.length})</h2><p class="muted">Should-level findings and choices the spec leaves open; they do not fail the gate.</p><ul class="tight">`,
    );
    for (const r of warned) {
      const ws = r.evidence.flatMap((e) => e.warnings ?? []);
      out.push(
        `<li><a href="#req-${esc(r.id)}"><b>${esc(r.id)}</b></a> (${esc(r.level)}) ${esc(ws[0] ?? r.reason ?? quoteLine(r, 160))}${r.decision ? `<br><span class="muted">Decision: ${esc(r.decision)}</span>` : ''}</li>`,
      );
    }
    out.push('</ul></section>');
  }
  return out.join('');
}

/** The load checks' latency and window charts, with their figures. */
function loadHtml(res: Certificate['results']): string {
  const out: string[] = [];
  const charts = res.load.filter((c) => c.latency.length || c.windows.length);
  if (charts.length) {
    out.push('<section id="load"><h2>Load and limiter figures</h2><div class="charts">');
    for (const c of charts) {
      out.push(`<div><h3>${esc(c.check)}${c.status ? ` — ${esc(c.status)}` : ''}</h3>${latencyChart(c)}${windowsChart(c)}`);
      if (c.evidence.length) out.push(`<details><summary>figures</summary><pre>${esc(c.evidence.join('\n'))}</pre></details>`);
      out.push('</div>');
    }
    out.push('</div></section>');
  }
  return out.join('');
}

/** Every requirement by spec section: clause, level, status, the quote, decision and evidence. */
function matrixHtml(res: Certificate['results']): string {
  const out: string[] = [];
  out.push('<section id="matrix"><h2>Requirements by spec section</h2>');
  for (const [section, list] of sectionGroups(res.requirements)) {
    out.push(
      `<h3>${esc(section)}</h3><table><thead><tr><th>Requirement</th><th>Level</th><th>Status</th><th>Statement, decision and evidence</th></tr></thead><tbody>`,
    );
    for (const r of list) {
      const [, clause] = sectionOf(r.section);
      const passed = r.evidence.filter((e) => e.outcome === 'passed').length;
      out.push(
        `<tr id="req-${esc(r.id)}"><td><b>${esc(r.id)}</b><br><span class="muted">${esc(clause)}</span></td><td>${esc(r.level)}</td>`,
      );
      out.push(
        `<td class="status s-${r.status}">${esc(statusLabel(r))}${r.knownFailure ? '<br><span class="known">known</span>' : ''}</td>`,
      );
      out.push(
        `<td><details${r.status === 'fail' ? ' open' : ''}><summary>${inline(quoteLine(r, 160))} <span class="muted">(${r.evidence.length ? `${passed}/${r.evidence.length} tests passed` : 'no test'})</span></summary>${requirementDetails(r)}</details></td></tr>`,
      );
    }
    out.push('</tbody></table>');
  }
  out.push('</section>');
  return out.join('');
}

/** The digests, the signature and where the run's other reports are. */
function footerHtml(cert: Certificate): string {
  const out: string[] = [];
  out.push('<footer><h2>Digests (SHA-256)</h2><ul class="tight">');
  for (const [k, v] of Object.entries(cert.digests)) out.push(`<li>${esc(k)}: <code>${esc(v)}</code></li>`);
  out.push('</ul>');
  out.push(
    `<p>${cert.signature ? `Signed with Ed25519, key fingerprint <code>${esc(cert.signature.publicKeyFingerprint)}</code>.` : 'Not signed.'} ` +
      'Check with <code>npx inventory-conformance verify certificate.json</code>: it recomputes every digest and fails on any change. ' +
      'Playwright’s report of the same run is in <code>html/index.html</code>; the machine-readable verdict in <code>conformance.json</code>; ' +
      'the exchanges behind each failing or warned requirement, and one passing exchange per requirement, in <code>evidence.har</code> (opens in any HAR viewer).</p>',
  );
  out.push('</footer></main></body></html>\n');
  return out.join('');
}

/** The certificate as one self-contained HTML page, section by section. */
export function renderCertificateHtml(cert: Certificate): string {
  const res = cert.results;
  const h = headline(cert);
  const failing = res.requirements.filter((r) => r.status === 'fail' && !r.knownFailure);
  const known = res.requirements.filter((r) => r.status === 'fail' && r.knownFailure);
  const warned = res.requirements.filter((r) => r.status === 'warn');
  const out: string[] = [];
  out.push('<!doctype html><html lang="en"><head><meta charset="utf-8">');
  out.push('<meta name="viewport" content="width=device-width,initial-scale=1">');
  out.push(
    `<title>Conformance certificate — ${esc(h.badge)} — ${esc(targetText(cert.target))}</title><style>${CSS}</style></head><body><main>`,
  );
  out.push(headerHtml(cert, h), summaryHtml(res), failingHtml(failing), leftChangedHtml(cert));
  const problems = res.problems.filter((p) => p.kind !== 'target-left-changed');
  if (problems.length) {
    out.push(
      `<section id="problems"><h2>Run problems (${problems.length})</h2><ul class="tight">${problems.map((p) => `<li>${esc(p.reason)}</li>`).join('')}</ul></section>`,
    );
  }
  out.push(notCertifiedHtml(res), baselineHtml(res, known), comparedWithHtml(cert), warningsHtml(warned));
  out.push(repairedHtml(cert), loadHtml(res), footprintHtml(cert), matrixHtml(res), outOfScopeHtml(cert), footerHtml(cert));
  return out.join('');
}
