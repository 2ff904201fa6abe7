/**
 * The secrets of a conformance run and every form in which they could end up in a file:
 * raw, URL-encoded, JSON- or HTML-escaped, and base64 (standard and URL-safe, at every byte
 * alignment, so a key inside a larger base64 blob is still found), each of the key alone and of
 * the whole header value `Bearer <key>`.
 *
 * Used by the secret scan (`secret-scan.ts`), the redacting reporter and the parent's log filter.
 * Nothing here ever prints a key: findings and redactions name the variable and the encoding.
 */

/** Environment variables that hold keys: the settings of kind `secret` (tests/certify/settings.test.ts keeps them equal). */
export const SECRET_VARIABLES = ['API_KEY', 'RATE_LIMIT_KEY', 'LOAD_KEY'] as const;
export type SecretVariable = (typeof SECRET_VARIABLES)[number];

/**
 * A key of the run: the one `Secret` type of the harness (certify, the suites' redaction, the
 * load checks). Its variable name is the only thing any output ever shows of it.
 */
export interface Secret {
  /** The variable that holds it, e.g. `API_KEY`: the only name a report ever uses. */
  name: string;
  value: string;
}

/** The placeholder the suites write instead of a key, e.g. `<API_KEY>`. */
export function placeholderOf(name: string): string {
  return `<${name}>`;
}

const FIELD_OF: Record<SecretVariable, 'apiKey' | 'rateLimitKey' | 'loadKey'> = { API_KEY: 'apiKey', RATE_LIMIT_KEY: 'rateLimitKey', LOAD_KEY: 'loadKey' };

/**
 * The one `secretsOf`: the keys of a run, from an environment (`API_KEY`, …) or from a settings
 * object (`apiKey`, `rateLimitKey`, `loadKey`). Empty values are left out; a value given twice
 * (e.g. RATE_LIMIT_KEY equal to API_KEY) is kept once, under its first name.
 */
export function secretsOf(
  source: Partial<Record<SecretVariable, string | undefined>> | Partial<Record<(typeof FIELD_OF)[SecretVariable], string>>,
): Secret[] {
  const out: Secret[] = [];
  const read = source as Partial<Record<string, string | undefined>>;
  for (const name of SECRET_VARIABLES) {
    const value = read[name] ?? read[FIELD_OF[name]];
    if (value && value.trim() !== '' && !out.some((s) => s.value === value)) out.push({ name, value });
  }
  return out;
}

export interface SecretNeedle {
  /** Variable name, e.g. `API_KEY`. */
  name: string;
  /** How the value is encoded, e.g. `raw`, `url-encoded`, `base64 of "Bearer <key>"`. */
  encoding: string;
  needle: string;
  /** Match regardless of letter case (the raw key with its case changed, e.g. in a token-case check). */
  caseInsensitive?: boolean;
}

/** Keys shorter than this are still scanned, but the scan warns that hits may be coincidences. */
export const MIN_SAFE_SECRET_LENGTH = 8;

/** The secrets of a run, from an environment: every non-empty `API_KEY`, `RATE_LIMIT_KEY`, `LOAD_KEY`. */
export function secretsFromEnv(env: Record<string, string | undefined>): Secret[] {
  return secretsOf(env);
}

function base64Variants(text: string): string[] {
  // A substring of a longer byte sequence appears in its base64 form at one of three alignments.
  // For each alignment, encode with 0..2 filler bytes in front and keep only the characters that
  // depend solely on the text's own bytes.
  const bytes = Buffer.from(text, 'utf8');
  const out: string[] = [];
  for (let shift = 0; shift < 3; shift++) {
    const padded = Buffer.concat([Buffer.alloc(shift), bytes]);
    const encoded = padded.toString('base64').replace(/=+$/, '');
    // Leading characters influenced by filler bytes: shift 1 → first 2 chars, shift 2 → first 3.
    const skipFront = shift === 0 ? 0 : shift === 1 ? 2 : 3;
    // Trailing characters of an incomplete final group depend on the following (unknown) bytes.
    const totalBytes = padded.length;
    const rem = totalBytes % 3;
    const dropBack = rem === 0 ? 0 : 1;
    const core = encoded.slice(skipFront, encoded.length - dropBack);
    if (core.length >= 4) out.push(core);
  }
  return out;
}

function htmlEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** Every encoded form of every secret, deduplicated per secret, longest first. */
export function secretNeedles(secrets: Secret[]): SecretNeedle[] {
  const out: SecretNeedle[] = [];
  for (const { name, value } of secrets) {
    const seen = new Set<string>();
    const add = (encoding: string, needle: string) => {
      if (!needle || seen.has(needle)) return;
      seen.add(needle);
      out.push({ name, encoding, needle });
    };
    const bearer = `Bearer ${value}`;
    add('raw', value);
    if (value.toLowerCase() !== value.toUpperCase()) {
      out.push({ name, encoding: 'raw, letter case changed', needle: value.toLowerCase(), caseInsensitive: true });
    }
    add('url-encoded', encodeURIComponent(value));
    add('url-encoded', encodeURIComponent(value).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()));
    add('url-encoded', encodeURI(value));
    add('form-encoded', encodeURIComponent(value).replace(/%20/g, '+'));
    add('JSON-escaped', JSON.stringify(value).slice(1, -1));
    add('JSON-escaped', JSON.stringify(value).slice(1, -1).replace(/\//g, '\\/'));
    add('HTML-escaped', htmlEscape(value));
    for (const v of base64Variants(value)) {
      add('base64', v);
      add('base64url', v.replace(/\+/g, '-').replace(/\//g, '_'));
    }
    add('url-encoded "Bearer <key>"', encodeURIComponent(bearer));
    add('form-encoded "Bearer <key>"', encodeURIComponent(bearer).replace(/%20/g, '+'));
    for (const v of base64Variants(bearer)) {
      add('base64 of "Bearer <key>"', v);
      add('base64url of "Bearer <key>"', v.replace(/\+/g, '-').replace(/\//g, '_'));
    }
  }
  // Longest first; among equal lengths, exact needles before case-insensitive ones.
  return out.sort((a, b) => b.needle.length - a.needle.length || Number(!!a.caseInsensitive) - Number(!!b.caseInsensitive));
}

/** Placeholder written instead of a secret. */
export function redactionMark(name: string): string {
  return `[redacted ${name}]`;
}

/**
 * Replaces every encoded form of every secret in `text`. Returns the text and how many
 * replacements were made. Longest needles go first so that `Bearer <key>` forms win.
 */
export function redactText(text: string, needles: SecretNeedle[]): { text: string; count: number } {
  let count = 0;
  let out = text;
  for (const { name, needle, caseInsensitive } of needles) {
    if (caseInsensitive) {
      const re = new RegExp(needle.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gi');
      out = out.replace(re, () => {
        count++;
        return redactionMark(name);
      });
      continue;
    }
    if (!out.includes(needle)) continue;
    const parts = out.split(needle);
    count += parts.length - 1;
    out = parts.join(redactionMark(name));
  }
  return { text: out, count };
}

/** Convenience: redact with the secrets of an environment. */
export function redactorFor(secrets: Secret[]): (text: string) => string {
  const needles = secretNeedles(secrets);
  if (needles.length === 0) return (text) => text;
  return (text) => redactText(text, needles).text;
}
