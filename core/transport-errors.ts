/**
 * What the outbound client (core/transport.ts) says of an exchange that failed, and how it reads
 * headers: the types and classifications, apart from the sockets. Pure.
 */
import { stallVoidsDeadline } from './stall.ts';

/** Why a request got no complete answer. */
export type FailureKind = 'timeout' | 'tls' | 'socket' | 'too-large' | 'aborted';

/** A request without a complete answer; `code` is Node's or OpenSSL's error code when there is one. */
export class TransportError extends Error {
  readonly kind: FailureKind;
  readonly code: string | undefined;
  readonly sentAt: number;
  readonly latencyMs: number;
  /** The request went on a kept-alive connection that an earlier exchange had used. */
  readonly reusedConnection: boolean;
  /** Some of the answer (its status line) had arrived when the request failed. */
  readonly answerStarted: boolean;
  /** With `watchStalls`: the longest time this process was held from running while it waited. */
  readonly stalledMs: number;

  constructor(
    kind: FailureKind,
    message: string,
    code: string | undefined,
    sentAt: number,
    latencyMs: number,
    reusedConnection = false,
    answerStarted = false,
    stalledMs = 0,
  ) {
    super(message);
    this.name = 'TransportError';
    this.kind = kind;
    this.code = code;
    this.sentAt = sentAt;
    this.latencyMs = latencyMs;
    this.reusedConnection = reusedConnection;
    this.answerStarted = answerStarted;
    this.stalledMs = stalledMs;
  }
}

/**
 * How long this process was held from running while a request that timed out waited, when that
 * leaves the timeout unjudgeable (`stallVoidsDeadline`): the run cannot tell a slow or silent server
 * from its own delay. Undefined for any other failure, and for a timeout the process kept.
 */
export function voidingStall(error: unknown, deadlineMs: number): number | undefined {
  return isTimeout(error) && stallVoidsDeadline(error.stalledMs, deadlineMs) ? error.stalledMs : undefined;
}

/** The request got no complete answer within its deadline: a hang, or a server too slow to tell from one. */
export function isTimeout(error: unknown): error is TransportError {
  return error instanceof TransportError && error.kind === 'timeout';
}

/**
 * True when `error` is a kept-alive connection that the peer closed as it was reused, before any
 * byte of an answer. A server closing an idle connection (its keep-alive timeout) may meet a
 * request already on its way: RFC 9112 §9.3.1 expects clients to recover from such a close, and
 * RFC 9110 §9.2.2 lets them send an idempotent request again. It says nothing of how the server
 * answers the request, so it is never evidence against the server.
 */
export function isStaleConnection(error: unknown): boolean {
  return (
    error instanceof TransportError &&
    error.kind === 'socket' &&
    error.reusedConnection &&
    !error.answerStarted &&
    /^(ECONNRESET|EPIPE|ECONNABORTED)$/.test(error.code ?? '')
  );
}

/** Bodies beyond this are refused: no answer of this API comes near it. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** How long a kept-alive connection may sit idle before the client closes it. */
export const FREE_SOCKET_IDLE_MS = 2000;

/**
 * Error codes of a handshake that did not establish a verified peer: a certificate refused
 * (`CERT_*`, `UNABLE_TO_*`, self-signed, wrong name, untrusted) or the TLS protocol failing
 * (`ERR_SSL_*`, `ERR_TLS_*`, `EPROTO`).
 */
const TLS_CODES =
  /^(CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|HOSTNAME_MISMATCH|ERR_TLS_|ERR_SSL_|EPROTO$)|CERT|SELF_SIGNED|UNTRUSTED|ALTNAME/;

/** The one classification: true when `error` is a TLS handshake that did not establish a verified peer. */
export function isTlsFailure(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | undefined;
  return TLS_CODES.test(String(e?.code ?? '')) || /certificate/i.test(String(e?.message ?? ''));
}

/** Fields node:http keeps only the first of (`IncomingMessage` `_addHeaderLine`). */
const FIRST_ONLY = new Set(
  'age authorization content-length content-type etag expires from host if-modified-since if-unmodified-since last-modified location max-forwards proxy-authorization referer retry-after server user-agent'.split(
    ' ',
  ),
);

/** Raw header pairs as node:http's `headers` reads them, values joined into one string. */
export function headersOf(raw: readonly (Buffer | string)[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) addHeader(out, raw[i]!.toString('latin1').toLowerCase(), raw[i + 1]!.toString('latin1'));
  return out;
}

/** Adds one field (`name` lowercased) to `out` as node:http joins a repeated one (`headersOf`). */
export function addHeader(out: Record<string, string>, name: string, value: string): void {
  const seen = out[name];
  if (seen === undefined) out[name] = value;
  else if (!FIRST_ONLY.has(name)) out[name] = `${seen}${name === 'cookie' ? '; ' : ', '}${value}`;
}
