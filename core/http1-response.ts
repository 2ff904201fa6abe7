/**
 * A minimal HTTP/1.1 response parser for the load pools (core/http1-pool.ts): the status line, the
 * header fields, and the body framed as RFC 9112 §6.3 says (no body for 1xx, 204, 304 and HEAD;
 * chunked; Content-Length; else to the close). Interim 1xx answers are skipped (§15.2 RFC 9110).
 * Pure: bytes in, one complete response out at a time. Header values as node:http joins them.
 */
import { headersOf } from './transport-errors.ts';

/** One complete response. */
export interface ParsedResponse {
  status: number;
  /** Names lowercased; repeated fields joined (`headersOf`). */
  headers: Record<string, string>;
  body: Buffer[];
  /** The connection cannot carry another exchange (`Connection: close`, HTTP/1.0, body to the close). */
  closes: boolean;
}

/** What the parser found wrong, as a message; the exchange fails as a socket error. */
export class ParseError extends Error {}

const CRLF2 = Buffer.from('\r\n\r\n');
const MAX_HEAD_BYTES = 64 * 1024;
type Phase = 'head' | 'length' | 'chunk-size' | 'chunk-data' | 'chunk-crlf' | 'trailers' | 'close';

/** Parses the answers of one connection, one exchange at a time (no pipelining). */
export class ResponseParser {
  private pending: Buffer | undefined;
  private phase: Phase = 'head';
  private remaining = 0;
  private size = 0;
  private response: ParsedResponse | undefined;
  private bodyless = false;
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
    this.bodyless = bodyless;
  }

  /** Whether the status line of the current answer has arrived. */
  get started(): boolean {
    return this.response !== undefined;
  }

  /** Feeds bytes; returns the response once complete (the rest of the chunk is ignored), else undefined. */
  feed(chunk: Buffer): ParsedResponse | undefined {
    let data = this.pending === undefined ? chunk : Buffer.concat([this.pending, chunk]);
    this.pending = undefined;
    while (data.length > 0 || this.phase === 'length') {
      if (this.phase === 'head') {
        const end = data.indexOf(CRLF2);
        if (end < 0) {
          if (data.length > MAX_HEAD_BYTES) throw new ParseError(`response head longer than ${MAX_HEAD_BYTES} bytes`);
          this.pending = data;
          return undefined;
        }
        this.head(data.toString('latin1', 0, end)); // an interim 1xx answer leaves the phase at `head`
        data = data.subarray(end + 4);
        continue;
      }
      if (this.phase === 'length') {
        if (this.remaining === 0) return this.response;
        const take = Math.min(this.remaining, data.length);
        if (take === 0) return undefined;
        this.body(data.subarray(0, take));
        this.remaining -= take;
        data = data.subarray(take);
        if (this.remaining === 0) return this.response;
        continue;
      }
      if (this.phase === 'close') {
        this.body(data);
        return undefined;
      }
      const done = this.chunked(data);
      if (done === true) return this.response;
      if (done === false) return undefined;
      data = done;
    }
    return undefined;
  }

  /** The connection ended: a body read to the close is then complete. */
  end(): ParsedResponse | undefined {
    return this.phase === 'close' ? this.response : undefined;
  }

  private body(part: Buffer): void {
    this.size += part.length;
    if (this.size > this.maxBodyBytes) throw new RangeError(`response body larger than ${this.maxBodyBytes} bytes; reading stopped`);
    this.response!.body.push(part);
  }

  /** Reads a head; undefined for an interim answer. Sets the body's phase (RFC 9112 §6.3). */
  private head(text: string): ParsedResponse | undefined {
    const lines = text.split('\r\n');
    const statusLine = lines[0]!;
    const match = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: |$)/.exec(statusLine);
    if (!match) throw new ParseError('not an HTTP/1.x status line');
    const status = Number(match[2]);
    const raw: string[] = [];
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      if (line[0] === ' ' || line[0] === '\t') {
        // Obsolete line folding (RFC 9112 §5.2): a client may replace it with a space.
        if (raw.length === 0) throw new ParseError('a folded line before any field');
        raw[raw.length - 1] += ` ${line.trim()}`;
        continue;
      }
      const colon = line.indexOf(':');
      if (colon <= 0) throw new ParseError('a header line without a name');
      raw.push(line.slice(0, colon), line.slice(colon + 1).trim());
    }
    if (status < 200) {
      if (status === 101) throw new ParseError('101 Switching Protocols was not asked for');
      return undefined;
    }
    const headers = headersOf(raw);
    const connection = (headers.connection ?? '').toLowerCase();
    const closes = connection.includes('close') || (match[1] === '0' && !connection.includes('keep-alive'));
    this.response = { status, headers, body: [], closes };
    this.framing(raw, status);
    return this.response;
  }

  private framing(raw: string[], status: number): void {
    const response = this.response!;
    if (this.bodyless || status === 204 || status === 304) {
      this.phase = 'length';
      this.remaining = 0;
      return;
    }
    const coding = response.headers['transfer-encoding'];
    if (coding !== undefined) {
      this.phase = /(^|,)\s*chunked\s*$/i.test(coding) ? 'chunk-size' : 'close';
      if (this.phase === 'close') response.closes = true;
      return;
    }
    // Content-Length as received (headersOf keeps only the first): every one must agree (§6.3).
    const lengths = new Set<string>();
    for (let i = 0; i < raw.length; i += 2)
      if (raw[i]!.toLowerCase() === 'content-length') for (const v of raw[i + 1]!.split(',')) lengths.add(v.trim());
    if (lengths.size === 0) {
      this.phase = 'close';
      response.closes = true;
      return;
    }
    const [length] = lengths;
    if (lengths.size > 1 || !/^\d{1,15}$/.test(length!)) throw new ParseError('an invalid Content-Length');
    this.phase = 'length';
    this.remaining = Number(length);
    if (this.remaining > this.maxBodyBytes) throw new RangeError(`response body larger than ${this.maxBodyBytes} bytes; reading stopped`);
  }

  /** Reads chunked framing: true when the last chunk and trailers are in, false for more bytes, else what is left. */
  private chunked(data: Buffer): Buffer | boolean {
    if (this.phase === 'chunk-data') {
      const take = Math.min(this.remaining, data.length);
      this.body(data.subarray(0, take));
      this.remaining -= take;
      if (this.remaining > 0) return false;
      this.phase = 'chunk-crlf';
      return data.subarray(take);
    }
    const eol = data.indexOf('\r\n');
    if (eol < 0) {
      if (data.length > MAX_HEAD_BYTES) throw new ParseError('a chunk line too long');
      this.pending = data;
      return false;
    }
    const line = data.toString('latin1', 0, eol);
    const rest = data.subarray(eol + 2);
    if (this.phase === 'chunk-crlf') {
      if (line !== '') throw new ParseError('chunk data longer than its size');
      this.phase = 'chunk-size';
      return rest;
    }
    if (this.phase === 'trailers') {
      if (line === '') return true;
      return rest;
    }
    const size = /^([0-9a-fA-F]{1,12})\s*(;.*)?$/.exec(line);
    if (!size) throw new ParseError('an invalid chunk size');
    this.remaining = Number.parseInt(size[1]!, 16);
    this.phase = this.remaining === 0 ? 'trailers' : 'chunk-data';
    return rest;
  }
}
