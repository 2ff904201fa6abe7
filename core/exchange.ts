/**
 * One HTTP exchange as recorded (`RecordedExchange`, core/results.ts; the transport's recording
 * hook writes it already redacted): a failure's curl reproduction (`curlOf`) writes each
 * placeholder as its shell variable (`$API_KEY`), and `parseExchange` reads the annotation back. Pure.
 */

import { ANNOTATION, type RecordedExchange } from './results.ts';

export type { RecordedExchange, RecordedHeader } from './results.ts';
export { MAX_RECORDED_BODY } from './results.ts';

/** Placeholders a redacted text may hold (core/secrets.ts `placeholderOf`), and the variable each becomes in a shell. */
const PLACEHOLDERS = ['API_KEY', 'RATE_LIMIT_KEY', 'LOAD_KEY'] as const;

/** `'…'` with single quotes escaped: safe in any POSIX shell. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A shell word for `text` in which every `<API_KEY>` placeholder becomes `$API_KEY` (double quotes, the rest escaped). */
export function shellWord(text: string): string {
  if (!PLACEHOLDERS.some((p) => text.includes(`<${p}>`))) return shellQuote(text);
  let out = text.replace(/[\\"$`]/g, (c) => `\\${c}`);
  for (const p of PLACEHOLDERS) out = out.split(`<${p}>`).join(`$${p}`);
  return `"${out}"`;
}

/** Headers curl sets itself or that would mislead a reproduction. */
const LEFT_TO_CURL = new Set(['content-length', 'host', 'connection', 'transfer-encoding']);

/**
 * A curl command that sends the recorded request to the same URL, with each key written as its
 * shell variable (`"Authorization: Bearer $API_KEY"`): run it after `export API_KEY=…`.
 */
export function curlOf(ex: Pick<RecordedExchange, 'request'>): string {
  const r = ex.request;
  const parts = ['curl', '-sS', '-i', '--path-as-is', '-X', r.method, shellWord(r.url)];
  for (const h of r.headers) {
    if (LEFT_TO_CURL.has(h.name.toLowerCase())) continue;
    parts.push('-H', shellWord(`${h.name}: ${h.value}`));
  }
  if (r.body !== undefined) parts.push('--data-binary', shellWord(r.body));
  return parts.join(' ');
}

/** The `exchange` annotation that carries `ex` (already redacted) to the reports: the one encoder of `parseExchange`. */
export function exchangeAnnotation(ex: RecordedExchange): { type: typeof ANNOTATION.exchange; description: string } {
  return { type: ANNOTATION.exchange, description: JSON.stringify(ex) };
}

/** Parses an `exchange` annotation; undefined when it is not one. */
export function parseExchange(description: string | undefined): RecordedExchange | undefined {
  if (!description) return undefined;
  try {
    const v = JSON.parse(description) as RecordedExchange;
    return v && typeof v.request?.url === 'string' && typeof v.response?.status === 'number' ? v : undefined;
  } catch {
    return undefined;
  }
}
