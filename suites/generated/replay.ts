/**
 * Replay tokens and curl reproductions of generated failures. A token names the check, the
 * case class, the seed and fast-check's path to the shrunk case; `CONFORMANCE_REPLAY=<token>`
 * makes the generated phase run just that case. The curl line writes the key as `$API_KEY`,
 * never the key. Pure.
 */

/** What a replay token holds. */
export interface ReplayToken {
  /** `coverage` (one coverage case, named by `cls`), `cases` (a request class), `stateful` (a sequence) or `concurrency`. */
  check: 'coverage' | 'cases' | 'stateful' | 'concurrency';
  /** The operation id, for `cases`. */
  op?: string;
  /** The class name, for `cases`. */
  cls?: string;
  seed: number;
  /** fast-check's counterexample path, e.g. `3:1:0`. */
  path?: string;
  /** fast-check's `replayPath` of a command sequence. */
  replayPath?: string;
}

const PREFIX = 'gen1.';

/** `gen1.<base64url JSON>`: opaque, copy-pasteable, no shell metacharacters. */
export function encodeToken(token: ReplayToken): string {
  return PREFIX + Buffer.from(JSON.stringify(token)).toString('base64url');
}

/** Parses a token; throws with a readable message when it is not one. */
export function decodeToken(text: string): ReplayToken {
  const t = text.trim();
  if (!t.startsWith(PREFIX)) throw new Error(`CONFORMANCE_REPLAY: not a replay token (expected "${PREFIX}…")`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(t.slice(PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    throw new Error('CONFORMANCE_REPLAY: the token is damaged (not base64url JSON)');
  }
  const p = parsed as Partial<ReplayToken>;
  if (!p || !['coverage', 'cases', 'stateful', 'concurrency'].includes(p.check as string) || typeof p.seed !== 'number') {
    throw new Error('CONFORMANCE_REPLAY: the token lacks its check or seed');
  }
  return p as ReplayToken;
}

/** Quotes a string for a POSIX shell: single quotes, `'` written as `'\''`. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Escapes a body for `printf` (octal for every byte outside printable ASCII, `%` and `\` doubled). */
function printfEscape(body: string | Buffer): string {
  let out = '';
  for (const byte of typeof body === 'string' ? Buffer.from(body, 'utf8') : body) {
    const c = String.fromCharCode(byte);
    if (c === '%') out += '%%';
    else if (c === '\\') out += '\\\\';
    else if (c === "'") out += `'\\''`;
    else if (byte >= 0x20 && byte < 0x7f) out += c;
    else out += `\\${byte.toString(8).padStart(3, '0')}`;
  }
  return out;
}

export interface CurlInput {
  method: string;
  /** Full URL (no key in it). */
  url: string;
  headers: Record<string, string>;
  /** Authorization scheme; undefined: no Authorization header (unless `authTemplate`). */
  scheme?: string;
  /** Authorization value with `{key}` for the key (written `$API_KEY`); wins over `scheme`. */
  authTemplate?: string;
  /** Content-Type to send; null/undefined: none. */
  contentType?: string | null;
  /** The body; a Buffer is sent byte for byte. */
  body?: string | Buffer;
}

/**
 * A curl command that sends the same request, with the key written as `$API_KEY`. Bodies with
 * bytes outside printable ASCII go through `printf` so that NUL and control bytes survive.
 */
export function curlCommand(c: CurlInput): string {
  const parts = ['curl', '-sS', '-i', '--path-as-is', '-X', c.method, shellQuote(c.url)];
  const template = c.authTemplate ?? (c.scheme !== undefined ? `${c.scheme} {key}` : undefined);
  if (template !== undefined)
    parts.push(
      '-H',
      `"Authorization: ${template
        .replace(/["\\$`]/g, '\\$&')
        .split('{key}')
        .join('$API_KEY')}"`,
    );
  for (const [k, v] of Object.entries(c.headers)) parts.push('-H', shellQuote(v === '' ? `${k};` : `${k}: ${v}`));
  if (c.contentType !== undefined && c.contentType !== null)
    parts.push('-H', shellQuote(c.contentType === '' ? 'Content-Type;' : `Content-Type: ${c.contentType}`));
  else if (c.body !== undefined) parts.push('-H', shellQuote('Content-Type:'));
  if (c.body === undefined) return parts.join(' ');
  if (typeof c.body === 'string' && /^[\x20-\x7e]*$/.test(c.body) && c.body.length <= 2000)
    return [...parts, '--data-binary', shellQuote(c.body)].join(' ');
  return `printf '${printfEscape(c.body)}' | ${[...parts, '--data-binary', '@-'].join(' ')}`;
}
