/**
 * A minimal HTTP/1.1 response parser for the load pools (core/http1-pool.ts): the status line, the
 * header fields, and the body framed as RFC 9112 §6.3 says (no body for 1xx, 204, 304 and HEAD;
 * chunked; Content-Length; else to the close). Interim 1xx answers are skipped (§15.2 RFC 9110).
 * Pure: bytes in, one complete response out at a time. Header values as node:http joins them.
 * The bytes given to `feed` may be reused once it returns: what it keeps past the call is copied.
 */
import { addHeader } from './transport-errors.ts';

/** One complete response. */
export interface ParsedResponse {
  status: number;
  /** Names lowercased; repeated fields joined (`headersOf`). */
  headers: Record<string, string>;
  /** The body's parts: those of the last chunk fed are views of it, valid until that chunk is reused. */
  body: Buffer[];
  /** The connection cannot carry another exchange (`Connection: close`, HTTP/1.0, body to the close). */
  closes: boolean;
}

/** What the parser found wrong, as a message; the exchange fails as a socket error. */
export class ParseError extends Error {}

const CRLF2 = Buffer.from('\r\n\r\n');
const MAX_HEAD_BYTES = 64 * 1024;
const CHUNK_EXTENSION = /^\s*(;.*)?$/;
type Phase = 'head' | 'length' | 'chunk-size' | 'chunk-data' | 'chunk-crlf' | 'trailers' | 'close';

/** Where the CRLF ending the line at `from` starts, or -1. */
function lineEnd(data: Buffer, from: number, to: number): number {
  for (let i = from; i + 1 < to; i++) if (data[i] === 13 && data[i + 1] === 10) return i;
  return -1;
}

/** The value of a hexadecimal digit's byte, or -1. */
function hexValue(byte: number): number {
  if (byte >= 48 && byte <= 57) return byte - 48;
  const lower = byte | 0x20;
  return lower >= 97 && lower <= 102 ? lower - 87 : -1;
}

/** The status of an HTTP/1.x status line (`HTTP/1.[01] [1-9]dd` then a space or its end), or 0. */
function statusOf(text: string, end: number): number {
  if (end < 12 || !text.startsWith('HTTP/1.') || (text[7] !== '0' && text[7] !== '1') || text[8] !== ' ') return 0;
  if (end > 12 && text[12] !== ' ') return 0;
  const a = text.charCodeAt(9) - 48;
  const b = text.charCodeAt(10) - 48;
  const c = text.charCodeAt(11) - 48;
  if (!(a >= 1 && a <= 9 && b >= 0 && b <= 9 && c >= 0 && c <= 9)) return 0;
  return a * 100 + b * 10 + c;
}

/** How many lines of a head the parser remembers the field names of. */
const NAMES_KEPT = 64;

/** One header field into `headers` (its name lowercased, `headersOf`); a Content-Length value also into `lengths`. */
function field(headers: Record<string, string>, lengths: string[], lower: string, value: string): void {
  addHeader(headers, lower, value);
  if (lower === 'content-length') lengths.push(value);
}

/** Parses the answers of one connection, one exchange at a time (no pipelining). */
export class ResponseParser {
  private pending: Buffer | undefined;
  private phase: Phase = 'head';
  private remaining = 0;
  private size = 0;
  private response: ParsedResponse | undefined;
  private bodyless = false;
  /** How many of the body's parts are copies (the rest are views of the chunk being fed). */
  private owned = 0;
  /** The previous head's field names by line, as received and lowercased: a server repeats them. */
  private readonly names: string[] = [];
  private readonly lowerNames: string[] = [];
  /** Beyond this many body bytes `feed` throws a RangeError. */
  private readonly maxBodyBytes: number;
  constructor(maxBodyBytes: number) {
    this.maxBodyBytes = maxBodyBytes;
  }

  /** Starts the next exchange (`bodyless`: the request was HEAD). */
  reset(bodyless = false): void {
    this.pending = undefined;
    this.phase = 'head';
    this.response = undefined;
    this.size = 0;
    this.owned = 0;
    this.bodyless = bodyless;
  }

  /** Whether the status line of the current answer has arrived. */
  get started(): boolean {
    return this.response !== undefined;
  }

  /**
   * Feeds the first `length` bytes of `chunk`; returns the response once complete (the rest of the
   * chunk is ignored), else undefined, having copied what it keeps.
   */
  feed(chunk: Buffer, length = chunk.length): ParsedResponse | undefined {
    let data = chunk;
    let end = length;
    if (this.pending !== undefined) {
      data = Buffer.concat([this.pending, chunk.subarray(0, length)]);
      end = data.length;
      this.pending = undefined;
    }
    const done = this.parse(data, end);
    if (done === undefined) this.keep(data === chunk);
    return done;
  }

  /** The connection ended: a body read to the close is then complete. */
  end(): ParsedResponse | undefined {
    return this.phase === 'close' ? this.response : undefined;
  }

  /** Copies the body's parts that are views of the chunk fed (`views`: the chunk is the caller's). */
  private keep(views: boolean): void {
    const body = this.response?.body;
    if (body === undefined) return;
    if (views) for (let i = this.owned; i < body.length; i++) body[i] = Buffer.from(body[i]!);
    this.owned = body.length;
  }

  /** Keeps the bytes from `at` for the next feed (a partial head or chunk line). */
  private wait(data: Buffer, at: number, end: number): undefined {
    this.pending = Buffer.from(data.subarray(at, end));
    return undefined;
  }

  private parse(data: Buffer, end: number): ParsedResponse | undefined {
    let at = 0;
    while (at < end || this.phase === 'length') {
      if (this.phase === 'head') {
        // Bytes past `end` are stale (a reused buffer): a head ending there has not arrived.
        const stop = data.indexOf(CRLF2, at);
        if (stop < 0 || stop + 4 > end) {
          if (end - at > MAX_HEAD_BYTES) throw new ParseError(`response head longer than ${MAX_HEAD_BYTES} bytes`);
          return this.wait(data, at, end);
        }
        this.head(data.toString('latin1', at, stop)); // an interim 1xx answer leaves the phase at `head`
        at = stop + 4;
        continue;
      }
      if (this.phase === 'length') {
        if (this.remaining === 0) return this.response;
        const take = Math.min(this.remaining, end - at);
        if (take === 0) return undefined;
        this.body(data, at, at + take);
        this.remaining -= take;
        at += take;
        if (this.remaining === 0) return this.response;
        continue;
      }
      if (this.phase === 'close') {
        this.body(data, at, end);
        return undefined;
      }
      const next = this.chunked(data, at, end);
      if (next === true) return this.response;
      if (next === false) return undefined;
      at = next;
    }
    return undefined;
  }

  private body(data: Buffer, from: number, to: number): void {
    this.size += to - from;
    if (this.size > this.maxBodyBytes) throw new RangeError(`response body larger than ${this.maxBodyBytes} bytes; reading stopped`);
    this.response!.body.push(data.subarray(from, to));
  }

  /** Reads a head; an interim answer is skipped. Sets the body's phase (RFC 9112 §6.3). */
  private head(text: string): void {
    let eol = text.indexOf('\r\n');
    if (eol < 0) eol = text.length;
    const status = statusOf(text, eol);
    if (status === 0) throw new ParseError('not an HTTP/1.x status line');
    const headers: Record<string, string> = {};
    const lengths: string[] = [];
    let name: string | undefined;
    let value = '';
    for (let start = eol + 2, line = 0; start < text.length; start = eol + 2, line++) {
      eol = text.indexOf('\r\n', start);
      if (eol < 0) eol = text.length;
      const first = text[start];
      if (first === ' ' || first === '\t') {
        // Obsolete line folding (RFC 9112 §5.2): a client may replace it with a space.
        if (name === undefined) throw new ParseError('a folded line before any field');
        value += ` ${text.slice(start, eol).trim()}`;
        continue;
      }
      if (name !== undefined) field(headers, lengths, name, value);
      const known = this.names[line];
      let colon: number;
      if (known !== undefined && text.startsWith(known, start) && text.charCodeAt(start + known.length) === 58) {
        // The name the previous head had on this line (it holds no colon and no line end).
        colon = start + known.length;
        name = this.lowerNames[line]!;
      } else {
        colon = text.indexOf(':', start);
        if (colon <= start || colon >= eol) throw new ParseError('a header line without a name');
        const raw = text.slice(start, colon);
        name = raw.toLowerCase();
        if (line < NAMES_KEPT) {
          this.names[line] = raw;
          this.lowerNames[line] = name;
        }
      }
      value = text.slice(colon + 1, eol).trim();
    }
    if (name !== undefined) field(headers, lengths, name, value);
    if (status < 200) {
      if (status === 101) throw new ParseError('101 Switching Protocols was not asked for');
      return;
    }
    const connection = (headers.connection ?? '').toLowerCase();
    const closes = connection.includes('close') || (text[7] === '0' && !connection.includes('keep-alive'));
    this.response = { status, headers, body: [], closes };
    this.owned = 0;
    this.framing(lengths, status);
  }

  private framing(lengths: readonly string[], status: number): void {
    const response = this.response!;
    if (this.bodyless || status === 204 || status === 304) {
      this.phase = 'length';
      this.remaining = 0;
      return;
    }
    const coding = response.headers['transfer-encoding'];
    if (coding !== undefined) {
      this.phase = coding === 'chunked' || /(^|,)\s*chunked\s*$/i.test(coding) ? 'chunk-size' : 'close';
      if (this.phase === 'close') response.closes = true;
      return;
    }
    if (lengths.length === 0) {
      this.phase = 'close';
      response.closes = true;
      return;
    }
    // Content-Length as received (headersOf keeps only the first): every one must agree (§6.3).
    const length = lengths.length === 1 && /^\d{1,15}$/.test(lengths[0]!) ? lengths[0]! : agreedLength(lengths);
    this.phase = 'length';
    this.remaining = Number(length);
    if (this.remaining > this.maxBodyBytes) throw new RangeError(`response body larger than ${this.maxBodyBytes} bytes; reading stopped`);
  }

  /** Reads chunked framing from `at`: true when the last chunk and trailers are in, false for more bytes, else where to go on. */
  private chunked(data: Buffer, at: number, end: number): number | boolean {
    if (this.phase === 'chunk-data') {
      const take = Math.min(this.remaining, end - at);
      this.body(data, at, at + take);
      this.remaining -= take;
      if (this.remaining > 0) return false;
      this.phase = 'chunk-crlf';
      return at + take;
    }
    const eol = lineEnd(data, at, end);
    if (eol < 0) {
      if (end - at > MAX_HEAD_BYTES) throw new ParseError('a chunk line too long');
      return this.wait(data, at, end) ?? false;
    }
    if (this.phase === 'chunk-crlf') {
      if (eol !== at) throw new ParseError('chunk data longer than its size');
      this.phase = 'chunk-size';
      return eol + 2;
    }
    if (this.phase === 'trailers') return eol === at ? true : eol + 2;
    let size = 0;
    let i = at;
    for (; i < eol && i - at < 12; i++) {
      const digit = hexValue(data[i]!);
      if (digit < 0) break;
      size = size * 16 + digit;
    }
    if (i === at || (i < eol && !CHUNK_EXTENSION.test(data.toString('latin1', i, eol)))) throw new ParseError('an invalid chunk size');
    this.remaining = size;
    this.phase = size === 0 ? 'trailers' : 'chunk-data';
    return eol + 2;
  }
}

/** The one Content-Length every field and list member agrees on (RFC 9112 §6.3), else a ParseError. */
function agreedLength(values: readonly string[]): string {
  const lengths = new Set<string>();
  for (const value of values) for (const v of value.split(',')) lengths.add(v.trim());
  const [length] = lengths;
  if (lengths.size > 1 || !/^\d{1,15}$/.test(length!)) throw new ParseError('an invalid Content-Length');
  return length!;
}
