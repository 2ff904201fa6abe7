/**
 * The certificate's gate sections, apart from the page's layout (html.ts calls them): the pets the
 * run left changed, and, when the run was gated on a previous certificate, what changed since.
 * Pure; every value is escaped.
 */
import { footprintLine } from '../footprint.ts';
import type { RequirementChange } from './diff.ts';
import type { Certificate } from './types.ts';

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** "Target left changed": each pet the run could not restore (its original and current count, what to do), and the messages it posted. */
export function leftChangedHtml(cert: Certificate): string {
  const left = cert.results.problems.filter((p) => p.kind === 'target-left-changed');
  const pets = left.flatMap((p) => p.pets ?? []);
  // Named without a reading of each pet (a run stopped before it put back what it changed).
  const named = left.filter((p) => !p.pets?.length);
  const j = cert.results.journal;
  const messages = j ? [...j.repair.messages, ...j.end.messages] : [];
  const out: string[] = [];
  if (pets.length) {
    const rows = pets
      .map(
        (p) =>
          `<tr><td><code>${esc(p.petId)}</code></td><td>${esc(p.created ? 'not listed (created by the run)' : p.original)}</td><td>${esc(p.current ?? 'missing from the list')}</td><td>${esc(p.action ?? 'set its quantity back by hand')}</td></tr>`,
      )
      .join('');
    out.push(
      '<p>The run could not restore these pets; they need restoring by hand. This fails the gate, whatever the requirements say.</p>',
      `<table><thead><tr><th>Pet</th><th>Original quantity</th><th>Current quantity</th><th>What to do</th></tr></thead><tbody>${rows}</tbody></table>`,
    );
  }
  if (named.length) out.push(`<ul class="tight">${named.map((p) => `<li>${esc(p.reason)}</li>`).join('')}</ul>`);
  if (messages.length) {
    const items = messages.map((m) => `<li>${esc(`${m.address}/messages at ${m.at} (${m.by})`)}</li>`).join('');
    out.push(
      `<p>Messages posted (${messages.length}): the API cannot take a message back; delete them by hand if the service allows. This does not fail the gate.</p><ul class="tight">${items}</ul>`,
    );
  }
  const footprint = footprintLine(cert.results.footprint?.messages);
  if (footprint) out.push(`<p>${esc(footprint)}</p>`);
  if (!out.length) return '';
  return `<section id="left-changed"><h2>Target left changed (${pets.length + named.length + messages.length})</h2>${out.join('')}</section>`;
}

/** "Repaired first": what an earlier run left open in the journal and this run put back before it sent anything else, and journals of other targets left alone. */
export function repairedHtml(cert: Certificate): string {
  const r = cert.results.journal?.repair;
  if (!r || (!r.restored.length && !r.otherTargets.length)) return '';
  const restored = r.restored
    .map(
      (p) =>
        `<li>${esc(`pet ${p.petId}: ${p.how === 'absent' ? 'not created' : `quantity ${p.original}`} (${p.how}; journaled by ${p.by})`)}</li>`,
    )
    .join('');
  const others = r.otherTargets
    .map((o) => `<li>${esc(`${o.file}: ${o.open} open entr${o.open === 1 ? 'y' : 'ies'} for ${o.target}, left alone`)}</li>`)
    .join('');
  return (
    `<section id="repaired"><h2>Repaired first (${r.restored.length})</h2>` +
    '<p>An earlier run did not finish: before this run sent anything else, it put back what the journal showed changed and verified it through the list.</p>' +
    `<ul class="tight">${restored}${others}</ul></section>`
  );
}

function changeList(title: string, changes: RequirementChange[]): string {
  if (!changes.length) return '';
  const items = changes
    .map(
      (c) =>
        `<li><a href="#req-${esc(c.id)}"><b>${esc(c.id)}</b></a> (${esc(c.level)}) ${esc(c.before ?? '—')} → ${esc(c.now ?? '—')}</li>`,
    )
    .join('');
  return `<h3>${esc(title)} (${changes.length})</h3><ul class="tight">${items}</ul>`;
}

/** "Compared with": the certificate the gate compared this run with, and the requirement-level difference. */
export function comparedWithHtml(cert: Certificate): string {
  const g = cert.results.gate.comparedWith;
  const d = cert.results.comparison;
  if (!g || !d) return '';
  const around = [
    ...d.digests.map((x) => `${x.name} changed`),
    ...(d.target ? ['target changed'] : []),
    ...(d.profile ? [`profile ${d.profile.before} → ${d.profile.now}`] : []),
  ];
  const none = !d.regressed.length && !d.fixed.length && !d.added.length && !d.removed.length;
  return (
    `<section id="compared-with"><h2>Compared with <span class="muted">(${esc(g.file)}, ${esc(g.generatedAt)})</span></h2>` +
    `<p>The gate passes only if nothing that passed in that certificate fails now. Its digest: <code>${esc(g.certificate.slice(0, 16))}…</code>.</p>` +
    (d.mustRegressions.length ? `<p><b>Must-level regressions: ${esc(d.mustRegressions.join(', '))}</b></p>` : '') +
    changeList('Regressed', d.regressed) +
    changeList('Fixed', d.fixed) +
    changeList('New requirements', d.added) +
    changeList('Removed requirements', d.removed) +
    (none ? '<p>No requirement changed status.</p>' : '') +
    (around.length ? `<p class="muted">Also: ${esc(around.join('; '))}.</p>` : '') +
    '</section>'
  );
}
