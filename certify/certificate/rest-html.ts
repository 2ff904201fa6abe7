/**
 * The certificate's later sections, below what a reader acts on (html.ts lays out the page): what
 * the run left on the target by design (the messages it posted, counted by check, the full list
 * behind one click) and the requirements the ledger excludes (out of scope, each with its reason,
 * behind one click). Pure; every value is escaped.
 */
import { countByRequirement, footprintLine, messageAddresses, messagesCountedText } from '../footprint.ts';
import { quoteSentence } from './quotes.ts';
import type { Certificate, CertifiedRequirement } from './types.ts';

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A requirement the ledger excludes from certification. */
export function isOutOfScope(r: Pick<CertifiedRequirement, 'status' | 'excluded'>): boolean {
  return r.status === 'skipped' && !!r.excluded;
}

/** "Left on the target": the messages posted, counted by the check that posted them; each message behind one click. */
export function footprintHtml(cert: Certificate): string {
  const j = cert.results.journal;
  const messages = j ? [...j.repair.messages, ...j.end.messages] : [];
  const counted = messagesCountedText(messages, 8);
  const footprint = footprintLine(cert.results.footprint?.messages);
  if (!counted && !footprint) return '';
  if (!counted) return `<section id="left-on-target"><h2>Left on the target, by design</h2><p>${esc(footprint!)}</p></section>`;
  const byCheck = countByRequirement(messages)
    .map(([id, n]) => `${esc(id)} ${n}`)
    .join(', ');
  const each = messages.map((m) => `${m.address}/messages at ${m.at} (${m.by})`).join('\n');
  return (
    `<section id="left-on-target"><h2>Left on the target, by design</h2>` +
    `<p>${esc(counted)} (to ${messageAddresses(messages)
      .map((a) => `<code>${esc(a)}</code>`)
      .join(', ')}). The API cannot take a message back: delete them by hand if the service allows. This does not fail the gate.</p>` +
    (footprint ? `<p>${esc(footprint)}</p>` : '') +
    `<details><summary>Every message (${messages.length}), by check: ${byCheck}</summary><pre>${esc(each)}</pre></details></section>`
  );
}

/** "Out of scope": the ledger's exclusions, each with its reason, behind one click. */
export function outOfScopeHtml(cert: Certificate): string {
  const excluded = cert.results.requirements.filter(isOutOfScope);
  if (!excluded.length) return '';
  const items = excluded
    .map(
      (r) =>
        `<li><a href="#req-${esc(r.id)}"><b>${esc(r.id)}</b></a> (${esc(r.level)}) ${esc(cut(quoteSentence(r.quote, r.quoteHeader), 140))} — ${esc(r.excluded ?? '')}</li>`,
    )
    .join('');
  return (
    `<section id="out-of-scope"><h2>Out of scope (${excluded.length})</h2>` +
    `<details><summary>The ledger excludes these from certification: they cannot be observed from outside, or the spec does not show them. Each with its reason.</summary><ul class="tight">${items}</ul></details></section>`
  );
}
