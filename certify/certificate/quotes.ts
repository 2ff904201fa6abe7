/**
 * Quotes as a person reads them. A ledger quote is verbatim, so a statement taken from a table of
 * the spec is a table row (`status | integer | yes | The HTTP status code`); the certificate shows
 * it as a row under its table's header, and one-line summaries as a sentence
 * (`Field: status; Type: integer; Required: yes; Meaning: The HTTP status code`). Pure.
 */

/** The cells of a quote that is a table row, or undefined for a sentence. */
export function rowCells(quote: string): string[] | undefined {
  if (!/\s\|\s/.test(quote) && !/^\s*\|.*\|\s*$/.test(quote)) return undefined;
  const cells = quote
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split('|')
    .map((c) => c.trim());
  return cells.length > 1 ? cells : undefined;
}

function splitRow(line: string): string[] {
  return line
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split('|')
    .map((c) => c.trim());
}

const normalise = (s: string) => s.replace(/\s+/g, ' ').trim();

/**
 * The header cells of the markdown table in `documents` that holds the row `quote`, or undefined
 * (not a row, or no table holds it).
 */
export function tableHeaderOf(quote: string, documents: readonly string[]): string[] | undefined {
  const cells = rowCells(quote);
  if (!cells) return undefined;
  const wanted = normalise(cells.join(' | '));
  for (const doc of documents) {
    const lines = doc.split(/\r?\n/);
    const at = lines.findIndex((l) => l.trim().startsWith('|') && normalise(splitRow(l).join(' | ')).includes(wanted));
    if (at < 0) continue;
    let top = at;
    while (top > 0 && lines[top - 1]!.trim().startsWith('|')) top--;
    const header = splitRow(lines[top]!);
    if (top + 1 < lines.length && /^\s*\|?\s*:?-{3,}/.test(lines[top + 1]!) && top !== at) return header;
  }
  return undefined;
}

/**
 * The quote as one readable sentence: a table row with its header as `Header: cell; …` (a
 * two-column `Item | Value` table as `item: value`), a row without one as its cells joined by
 * dashes, a sentence as it is.
 */
export function quoteSentence(quote: string, header?: readonly string[]): string {
  const cells = rowCells(quote);
  if (!cells) return normalise(quote);
  if (header && header.length === cells.length) {
    if (cells.length === 2 && /^item$/i.test(header[0]!)) return `${cells[0]}: ${cells[1]}`;
    return cells.map((c, i) => `${header[i]}: ${c}`).join('; ');
  }
  return cells.join(' — ');
}
