/**
 * The keys of a run, their one normal form, and the one redaction engine: every recorded text, printed line and
 * report file, and the after-run scan, go through here; a key is found in every encoding (docs/run-costs.md). Never prints a key.
 */

/** Environment variables that hold keys: the settings of kind `secret` (tests/certify/settings.test.ts keeps them equal). */
export const SECRET_VARIABLES = ['API_KEY', 'RATE_LIMIT_KEY', 'LOAD_KEY'] as const;
export type SecretVariable = (typeof SECRET_VARIABLES)[number];

/**
 * A key of the run: the one `Secret` type of the harness. Its variable name is the only thing any
 * output ever shows of it. `value` is always in normal form (`normaliseKey`).
 */
export interface Secret {
  /** The variable that holds it, e.g. `API_KEY`: the only name a report ever uses. */
  name: string;
  value: string;
}

/** The one placeholder written instead of a key, everywhere: `<API_KEY>`. */
export function placeholderOf(name: string): string {
  return `<${name}>`;
}

/** The rule a key must meet, in words (settings quote it in their usage error). */
export const KEY_RULE = 'visible ASCII without spaces (it is sent as "Authorization: Bearer <key>")';

/**
 * The one normal form of a key: surrounding whitespace trimmed (a pasted CI secret often ends in a
 * newline); a key that still holds a control character, a space or a non-ASCII character is
 * refused (RFC 6750 §2.1: a bearer token is visible ASCII). Every consumer uses the normal form:
 * the client, redaction, the reporter and the scan.
 */
export function normaliseKey(raw: string): { ok: true; value: string } | { ok: false } {
  const value = raw.trim();
  return /^[\x21-\x7e]+$/.test(value) ? { ok: true, value } : { ok: false };
}

const FIELD_OF: Record<SecretVariable, 'apiKey' | 'rateLimitKey' | 'loadKey'> = {
  API_KEY: 'apiKey',
  RATE_LIMIT_KEY: 'rateLimitKey',
  LOAD_KEY: 'loadKey',
};

/**
 * The one `secretsOf`: the keys of a run, from an environment (`API_KEY`, …) or from a settings
 * object (`apiKey`, `rateLimitKey`, `loadKey`), trimmed. Empty values are left out; a value given
 * twice (e.g. RATE_LIMIT_KEY equal to API_KEY) is kept once, under its first name. A value that is
 * not a valid key is still kept (trimmed) so that whatever of it reaches a text is redacted.
 */
export function secretsOf(
  source: Partial<Record<SecretVariable, string | undefined>> | Partial<Record<(typeof FIELD_OF)[SecretVariable], string>>,
): Secret[] {
  const out: Secret[] = [];
  const read = source as Partial<Record<string, string | undefined>>;
  for (const name of SECRET_VARIABLES) {
    const value = (read[name] ?? read[FIELD_OF[name]])?.trim();
    if (value && !out.some((s) => s.value === value)) out.push({ name, value });
  }
  return out;
}

/** The secrets of a run, from an environment: every non-empty `API_KEY`, `RATE_LIMIT_KEY`, `LOAD_KEY`. */
export function secretsFromEnv(env: Record<string, string | undefined>): Secret[] {
  return secretsOf(env);
}

/** Keys shorter than this are still scanned, but the scan warns that hits may be coincidences. */
export const MIN_SAFE_SECRET_LENGTH = 8;

/** What to look for of one secret: a pattern (character-wise encodings) or an exact base64 needle. */
export interface SecretNeedle {
  /** Variable name, e.g. `API_KEY`. */
  name: string;
  /** How the value is encoded: `base64` or `base64url`, or `text` for the character-wise pattern. */
  encoding: 'text' | 'base64' | 'base64url';
  /** The exact needle (base64 forms). */
  needle?: string;
  /** The character-wise pattern (global, case-insensitive). */
  pattern?: RegExp;
  /** Names the form a match of `pattern` took (`raw`, `JSON-escaped`, …). */
  describe?: (match: string) => string;
  /**
   * The value in lower case, for a value of ASCII characters: a text without `escapes` can hold it
   * only as itself, in some letter case (`mayHoldPattern`).
   */
  plainLower?: string;
  /** What a text holds wherever a character of the value stands escaped in it (`escapeProbe`). */
  escapes?: RegExp;
}

const NAMED_ENTITIES: Record<string, string> = { '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot', "'": 'apos' };

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** Every way one character of a key can stand in a report: raw, JSON `\u`/`\/`-escaped, percent-encoded, HTML reference (either letter case). */
function charPattern(c: string): string {
  const alternatives = [escapeRegExp(c)];
  for (const variant of new Set([c, c.toLowerCase(), c.toUpperCase()])) {
    const code = variant.charCodeAt(0);
    const hex = code.toString(16).padStart(2, '0');
    alternatives.push(`\\\\+u0{0,2}${hex}`, `%${hex}`, `&#0*${code};`, `&#x0*${hex};`);
  }
  if (c === '/' || c === '"' || c === '\\') alternatives.push(`\\\\+${escapeRegExp(c)}`);
  if (NAMED_ENTITIES[c]) alternatives.push(`&${NAMED_ENTITIES[c]};`);
  return `(?:${alternatives.join('|')})`;
}

/**
 * What every escaped form of a character of `value` (`charPattern`) holds, in either letter case:
 * a JSON `\u` (after one or more backslashes), a percent sign and two hex digits, an HTML `&#`;
 * for its `/`, `"` and `\` the backslash before it, for its `&<>"'` their named reference. A text
 * that holds none of these can hold the key only raw.
 */
export function escapeProbe(value: string): RegExp {
  const forms = ['\\\\u', '%[0-9a-f]{2}', '&#'];
  for (const c of new Set(value)) {
    if (c === '/' || c === '"' || c === '\\') forms.push(`\\\\${escapeRegExp(c)}`);
    if (NAMED_ENTITIES[c]) forms.push(`&${NAMED_ENTITIES[c]};`);
  }
  return new RegExp(forms.join('|'), 'i');
}

/** The character-wise pattern of a key: raw in any case, JSON-, URL- or HTML-escaped, in any mix. */
export function secretPattern(value: string): RegExp {
  return new RegExp([...value].map(charPattern).join(''), 'gi');
}

/**
 * The base64 forms of a text as a substring of a longer byte sequence: for each of the three
 * alignments, the characters that depend solely on the text's own bytes.
 */
export function base64Variants(text: string): string[] {
  const bytes = Buffer.from(text, 'utf8');
  const out: string[] = [];
  for (let shift = 0; shift < 3; shift++) {
    const padded = Buffer.concat([Buffer.alloc(shift), bytes]);
    const encoded = padded.toString('base64').replace(/=+$/, '');
    const skipFront = shift === 0 ? 0 : shift === 1 ? 2 : 3;
    const dropBack = padded.length % 3 === 0 ? 0 : 1;
    const core = encoded.slice(skipFront, encoded.length - dropBack);
    if (core.length >= 4) out.push(core);
  }
  return out;
}

/** Everything to look for of every secret: one pattern each, then its base64 and base64url needles. */
export function secretNeedles(secrets: readonly Secret[]): SecretNeedle[] {
  const out: SecretNeedle[] = [];
  for (const { name, value } of secrets) {
    if (!value) continue;
    out.push({
      name,
      encoding: 'text',
      pattern: secretPattern(value),
      describe: (match) => describeMatch(match, value),
      ...(/^[\x00-\x7f]*$/.test(value) ? { plainLower: value.toLowerCase(), escapes: escapeProbe(value) } : {}),
    });
    const seen = new Set<string>();
    for (const v of base64Variants(value)) {
      for (const [encoding, needle] of [
        ['base64', v],
        ['base64url', v.replace(/\+/g, '-').replace(/\//g, '_')],
      ] as const) {
        if (seen.has(needle)) continue;
        seen.add(needle);
        out.push({ name, encoding, needle });
      }
    }
  }
  return out;
}

/** Names the form a character-wise match took, e.g. `raw`, `JSON-escaped`, `URL-encoded`. */
export function describeMatch(match: string, value: string): string {
  if (match === value) return 'raw';
  const forms: string[] = [];
  if (match.includes('\\')) forms.push('JSON-escaped');
  if (match.includes('%')) forms.push('URL-encoded');
  if (match.includes('&')) forms.push('HTML-escaped');
  return forms.length ? forms.join(', ') : 'raw, letter case changed';
}

/** Where one needle occurs in a text: the encodings found (empty when none). */
export function findNeedle(text: string, n: SecretNeedle): string[] {
  if (n.needle !== undefined) return text.includes(n.needle) ? [n.encoding] : [];
  if (!mayHoldPattern(text, n)) return [];
  const found = new Set<string>();
  for (const m of text.matchAll(n.pattern!)) found.add(n.describe ? n.describe(m[0]) : n.encoding);
  return [...found];
}

/** The characters every escaped form of a key's character begins with: JSON `\`, percent `%`, HTML `&` (`charPattern`). */
const ESCAPE_STARTS = /[\\%&]/;

/**
 * Whether `text` may hold a match of a character-wise needle: false only when it cannot. Each
 * character of a match is the key's own character (any letter case) or one of its escaped forms,
 * and each escaped form holds a match of the needle's `escapes` (without it, of ESCAPE_STARTS); so
 * a text with none holds a match only as the key itself, in some letter case, and an ASCII key's
 * letters match only ASCII letters (the pattern has no `u` flag). Lower-casing the text can add
 * ASCII letters, never remove one, so the check only ever says "may" too often. It spares
 * compiling and running the pattern on nearly every text a run redacts: a JSON text's `\"` and
 * `\n` and a `50%` are no escaped form of a key's letter or digit.
 */
export function mayHoldPattern(text: string, n: SecretNeedle, lower = () => text.toLowerCase()): boolean {
  if (n.plainLower === undefined || (n.escapes ?? ESCAPE_STARTS).test(text)) return true;
  return lower().includes(n.plainLower);
}

/** Replaces every form of every secret in `text` by its placeholder; returns the text and the count. */
export function redactText(text: string, needles: readonly SecretNeedle[]): { text: string; count: number } {
  let count = 0;
  let out = text;
  // The text in lower case, for every key's prefilter: made once, again only after a replacement.
  let lowered: string | undefined;
  const lower = () => (lowered ??= out.toLowerCase());
  for (const n of needles) {
    const mark = placeholderOf(n.name);
    if (n.needle !== undefined) {
      if (!out.includes(n.needle)) continue;
      const parts = out.split(n.needle);
      count += parts.length - 1;
      out = parts.join(mark);
      lowered = undefined;
      continue;
    }
    if (!mayHoldPattern(out, n, lower)) continue;
    lowered = undefined;
    out = out.replace(n.pattern!, () => {
      count++;
      return mark;
    });
  }
  return { text: out, count };
}

/** A redactor for a fixed set of secrets (its needles are built once). */
export function redactorFor(secrets: readonly Secret[]): (text: string) => string {
  return redactorWith(secretNeedles(secrets));
}

function redactorWith(needles: readonly SecretNeedle[]): (text: string) => string {
  if (needles.length === 0) return (text) => text;
  return (text) => redactText(text, needles).text;
}

/**
 * Replaces every form of every secret by its placeholder, e.g. `<API_KEY>`. Secrets shorter than
 * 4 characters are left alone here (they would redact ordinary words); the scan still looks for them.
 */
export function redact(text: string, secrets: readonly Secret[]): string {
  return redactorOf(secrets)(text);
}

/**
 * The needles and redactors of the last few secret sets, by their names and values: a run
 * redacts every line and record, and asks which key a header carries, with the same keys; building
 * a key's pattern (and the regular expression engine compiling it on first use) costs far more
 * than matching it. Bounded, so a process that sees many key sets (the project's tests) keeps only
 * the newest.
 */
const recentSets = new Map<string, { needles: SecretNeedle[]; redactor?: (text: string) => string }>();
const RECENT_SETS = 8;

function compiledSet(secrets: readonly Secret[]): { needles: SecretNeedle[]; redactor?: (text: string) => string } {
  const id = JSON.stringify(secrets.map((s) => [s.name, s.value]));
  let set = recentSets.get(id);
  if (!set) {
    set = { needles: secretNeedles(secrets) };
    if (recentSets.size >= RECENT_SETS) recentSets.delete(recentSets.keys().next().value!);
    recentSets.set(id, set);
  }
  return set;
}

/** The needles of `secrets` (`secretNeedles`), built once per set and shared by every caller. */
export function needlesOf(secrets: readonly Secret[]): readonly SecretNeedle[] {
  return compiledSet(secrets).needles;
}

/** The redactor of `secrets` (those of 4 characters or more), built once per set and shared by every caller. */
export function redactorOf(secrets: readonly Secret[]): (text: string) => string {
  const set = compiledSet(secrets.filter((s) => s.value.length >= 4));
  set.redactor ??= redactorWith(set.needles);
  return set.redactor;
}

/** True if any form of any secret occurs in `text`. */
export function containsSecret(text: string, secrets: readonly Secret[]): boolean {
  return redact(text, secrets) !== text;
}
