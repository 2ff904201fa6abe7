/**
 * Redaction: every text the suite writes (annotations, error messages, evidence) passes through
 * here so that no key reaches a report, replaced by its placeholder (`<API_KEY>`). Pure functions.
 * The secrets are the harness's one `Secret` type (certify/secrets.ts: `secretsOf`).
 */
import { placeholderOf, type Secret } from '../../certify/secrets.ts';

export type { Secret } from '../../certify/secrets.ts';

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The forms in which a secret may appear in text: raw (any case), base64, URL-encoded. */
export function secretForms(value: string): string[] {
  const forms = new Set<string>([value, encodeURIComponent(value)]);
  const b64 = Buffer.from(value, 'utf8').toString('base64');
  forms.add(b64.replace(/=+$/, ''));
  // base64 of the value at the three byte offsets, as it appears inside a longer encoded text.
  for (const prefix of ['', 'x', 'xx']) {
    const enc = Buffer.from(prefix + value, 'utf8').toString('base64');
    const skip = Math.ceil((prefix.length * 4) / 3);
    const usable = enc.slice(skip, Math.floor(((prefix.length + value.length) * 4) / 3));
    if (usable.length >= 8) forms.add(usable);
  }
  return [...forms].filter((f) => f.length >= 4).sort((a, b) => b.length - a.length);
}

/**
 * Replaces every occurrence of each secret (case-insensitively, so a case-changed key is hidden
 * too; also base64 and URL-encoded) by its placeholder. Secrets shorter than 4 characters are
 * ignored (they would redact ordinary text). A secret is replaced by `placeholderOf(name)`, e.g. `<API_KEY>`.
 */
export function redact(text: string, secrets: readonly Secret[]): string {
  let out = text;
  for (const s of secrets) {
    if (!s.value || s.value.length < 4) continue;
    for (const form of secretForms(s.value)) {
      out = out.replace(new RegExp(escapeRegExp(form), 'gi'), placeholderOf(s.name));
    }
  }
  return out;
}

/** True if any form of any secret occurs in `text`. */
export function containsSecret(text: string, secrets: readonly Secret[]): boolean {
  return redact(text, secrets) !== text;
}
