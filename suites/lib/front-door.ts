/**
 * Which requests the spec judges and which HTTP judges (the HTTP rules, Front doors). A request is
 * either an operation of the spec sent as valid HTTP, or outside the API: a method the spec does
 * not define on the path, a request target or header field that is not valid HTTP or past the
 * sizes HTTP asks every recipient to take, a body past the sizes front doors commonly refuse. An
 * intermediary (RFC 9110 §3.7) may answer the second kind itself, in its own format: a 4xx without
 * an Error body or the X-RateLimit headers is then HTTP's (§15.5.1, §15.5.6), a warning that names
 * who answered; a 5xx, a hang or a lost connection still fails. Pure.
 */
import { getHeader, type HeaderSource } from './headers.ts';

/** A request as it goes on the wire, as far as its scope depends on it. */
export interface WireRequest {
  method: string;
  /** The request target: path and query, exactly as sent. */
  target: string;
  /** Header fields sent, besides a credential built from the key. */
  headers: Readonly<Record<string, string>>;
  /** Bytes of the body (0 without one). */
  bodyBytes: number;
}

export type Scope = { kind: 'operation' } | { kind: 'outside'; why: string };

/** Request-line length every recipient should support (RFC 9112 §3: at least 8,000 octets); a field line as long is past nginx's and Apache's defaults. */
export const LINE_LIMIT = 8_000;
/** Bodies past 64 KiB: the spec shows no limit, front doors and WAFs commonly set one (RFC 9110 §15.5.14). */
export const BODY_LIMIT = 64 * 1024;

/** `%` not followed by two hex digits (RFC 3986 §2.1). */
const BROKEN_ESCAPE = /%(?![0-9A-Fa-f]{2})/;

/**
 * The scope of `req`. `documented`: the methods the spec defines on its path (HEAD goes with GET,
 * RFC 9110 §9.3.2).
 */
export function scopeOf(req: WireRequest, documented: readonly string[]): Scope {
  const method = req.method.toUpperCase();
  const defined = documented.map((m) => m.toUpperCase());
  if (!defined.includes(method) && !(method === 'HEAD' && defined.includes('GET')))
    return outside(`the spec defines no ${method} on this path: a front door may refuse the method itself (RFC 9110 §15.5.6)`);
  if (BROKEN_ESCAPE.test(req.target))
    return outside(
      'the request target is not valid HTTP: "%" not followed by two hex digits (RFC 3986 §2.1), which a front door may refuse with 400 (RFC 9110 §15.5.1)',
    );
  if (/%00/.test(req.target))
    return outside('the request target encodes a NUL byte (%00), which intermediaries reject (RFC 3986 §7.3; RFC 9110 §15.5.1)');
  if (`${method} ${req.target} HTTP/1.1`.length > LINE_LIMIT)
    return outside(
      `the request line is over ${LINE_LIMIT} octets, past what HTTP asks every recipient to take (RFC 9112 §3; 414, RFC 9110 §15.5.15)`,
    );
  const long = Object.entries(req.headers).find(([k, v]) => `${k}: ${v}`.length >= LINE_LIMIT);
  if (long)
    return outside(
      `the ${long[0]} field line is ${LINE_LIMIT} octets or more, which a front door may refuse (RFC 9110 §5.4; 431, RFC 6585 §5)`,
    );
  if (req.bodyBytes > BODY_LIMIT)
    return outside(`the body is over ${BODY_LIMIT} bytes, which a front door may refuse with 413 (RFC 9110 §15.5.14)`);
  return { kind: 'operation' };
}

const outside = (why: string): Scope => ({ kind: 'outside', why });

/** What an answer shows of who sent it: its header fields and, when it was read, its body. */
export interface AnswerLike {
  headers: HeaderSource;
  text?: string;
}

const header = (a: AnswerLike, name: string): string | undefined => getHeader(a.headers, name);

/** The body's shape: `an HTML body`, `a JSON body`, `a text body`, `an empty body`, `a body of type <type>`; unread and untyped: `a body without Content-Type`. */
export function bodyShape(a: AnswerLike): string {
  const type = (header(a, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  const text = a.text?.trim();
  if (text === '') return 'an empty body';
  if (type === 'text/html' || type === 'application/xhtml+xml' || /^<(!doctype html|html|head|body)\b/i.test(text ?? ''))
    return 'an HTML body';
  if (/^application\/([\w.+-]*\+)?json$/.test(type)) return 'a JSON body';
  if (!type && text === undefined) return 'a body without Content-Type';
  if (type.startsWith('text/') || !type) return 'a text body';
  return `a body of type ${type}`;
}

/** Who answered, as far as the answer says: `nginx/1.22.1 (Server header), an HTML body`. */
export function answeredBy(a: AnswerLike): string {
  const server = header(a, 'server');
  return `${server ? `${server} (Server header)` : 'an answerer without a Server header'}, ${bodyShape(a)}`;
}
