/**
 * The one outbound HTTP client: every request to the target leaves here (`send`; `poolFor` for load), under one
 * policy for deadline, TLS, body cap, content coding, redirects and recording (docs/architecture.md, "One way out").
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { connect as netConnect, isIP, type OnReadOpts } from 'node:net';
import {
  type ConnectionOptions,
  createSecureContext,
  rootCertificates,
  type SecureContext,
  connect as tlsConnect,
  type TLSSocket,
} from 'node:tls';
import { type ConnectionPool, type Connector, FramedPool } from './http1-pool.ts';
import { MAX_RECORDED_BODY, type RecordedExchange, type RecordedHeader } from './results.ts';
import { redactorOf, type Secret } from './secrets.ts';
import { watchStalls } from './stall.ts';
import { type FailureKind, FREE_SOCKET_IDLE_MS, isTlsFailure, MAX_BODY_BYTES, TransportError } from './transport-errors.ts';

export {
  type ConnectionPool,
  type PooledCallback,
  PooledError,
  type PooledRequest,
  type PooledResponse,
  type PooledSendOptions,
} from './http1-pool.ts';

export {
  FREE_SOCKET_IDLE_MS,
  type FailureKind,
  headersOf,
  isStaleConnection,
  isTimeout,
  isTlsFailure,
  MAX_BODY_BYTES,
  TransportError,
  voidingStall,
} from './transport-errors.ts';

/** TLS of an https target. Verification is on unless `insecure` (the user's explicit opt-in). */
export interface TlsOptions {
  /** Extra trusted CA certificates (PEM), added to Node's roots and `NODE_EXTRA_CA_CERTS`. */
  ca?: string | Buffer | Array<string | Buffer>;
  /** Do not verify the peer's certificate (`INSECURE_TLS=1`). */
  insecure?: boolean;
}

/** One request, sent exactly as given. */
export interface OutboundRequest {
  url: URL;
  method: string;
  /** Sent as given: the transport adds none (no `Accept-Encoding`, no `Content-Type`). */
  headers: Record<string, string>;
  body?: string | Buffer;
}

/** The hook through which an exchange is recorded; the record reaches it redacted. */
export interface ExchangeRecorder {
  /** The keys of the run: each, in every encoding, becomes its placeholder in the record. */
  secrets: readonly Secret[];
  onExchange(exchange: RecordedExchange): void;
}

export interface SendOptions {
  /** Wall-clock deadline of the whole exchange, to the last byte of the answer. */
  deadlineMs: number;
  /** The setting that sets the deadline, named in the timeout's message (e.g. `REQUEST_TIMEOUT_MS`). */
  deadlineName?: string;
  /** TLS of a request sent without `agent` (an agent carries its own, from `agentFor`). */
  tls?: TlsOptions;
  /** A pool from `agentFor` (keep-alive), `false` for a connection of this request alone; default: Node's global agent. */
  agent?: http.Agent | false;
  /** Most body bytes read (default `MAX_BODY_BYTES`). */
  maxBodyBytes?: number;
  /** A body beyond the cap: `fail` the request (default) or `truncate` it and answer with what was read. */
  overflow?: 'fail' | 'truncate';
  /** Stops the request at once (kind `aborted`). */
  signal?: AbortSignal;
  record?: ExchangeRecorder;
  /**
   * Watch how long this process is held from running while the request waits (`core/stall.ts`);
   * a timeout then carries it (`TransportError.stalledMs`), and so does an answer
   * (`OutboundResponse.stalledMs`).
   */
  watchStalls?: boolean;
}

/** A complete answer. */
export interface OutboundResponse {
  status: number;
  /** Name/value pairs as received (names as the server wrote them). */
  rawHeaders: string[];
  /** Node's parse of the headers: names lowercased. */
  headers: http.IncomingHttpHeaders;
  /** The body as sent (no content coding decoded), read as UTF-8. */
  body: string;
  /** The body was cut at the cap (`overflow: 'truncate'`). */
  truncated: boolean;
  /** `Date.now()` when the request was handed to the socket. */
  sentAt: number;
  /** `Date.now()` when the answer was complete. */
  receivedAt: number;
  /** Milliseconds from sending to the last byte (monotonic clock). */
  latencyMs: number;
  /** The request opened a new connection (a kept-alive one was not reused). */
  newConnection: boolean;
  /**
   * With `watchStalls`: the longest time this process was held from running while it waited; the
   * latency may be up to that much longer than the server took.
   */
  stalledMs?: number;
}

/**
 * A `ca` option replaces Node's trusted roots: keep them beside it, with the file of
 * `NODE_EXTRA_CA_CERTS` (which Node adds to its defaults only).
 */
function withDefaultRoots(ca: NonNullable<TlsOptions['ca']>): Array<string | Buffer> {
  const extra: string[] = [];
  const file = process.env.NODE_EXTRA_CA_CERTS;
  if (file) {
    try {
      extra.push(readFileSync(file, 'utf8'));
    } catch {
      // Node itself warns about an unreadable NODE_EXTRA_CA_CERTS.
    }
  }
  return [...rootCertificates, ...extra, ...(Array.isArray(ca) ? ca : [ca])];
}

/**
 * One secure context per `ca` given: built from some 150 roots, a context made for each connection
 * (what `ca` alone does) costs tens of milliseconds of CPU a handshake.
 */
const contexts = new Map<unknown, SecureContext>();
function contextOf(ca: NonNullable<TlsOptions['ca']>): SecureContext {
  let context = contexts.get(ca);
  if (context === undefined) contexts.set(ca, (context = createSecureContext({ ca: withDefaultRoots(ca) })));
  return context;
}

/**
 * The TLS options every https connection is made with: verification set explicitly; a `ca` (kept
 * for the agent's pooling key) with its context.
 */
function tlsOf(tls: TlsOptions = {}): { rejectUnauthorized: boolean; ca?: Array<string | Buffer>; secureContext?: SecureContext } {
  return {
    rejectUnauthorized: tls.insecure !== true,
    ...(tls.ca !== undefined ? { ca: withDefaultRoots(tls.ca), secureContext: contextOf(tls.ca) } : {}),
  };
}

/**
 * A pool of kept-alive connections to one origin, TLS verified unless the user opted out, never
 * queueing. Its TLS settings govern every request sent through it (Node lets an agent's options
 * override a request's).
 */
export function agentFor(url: string, tls: TlsOptions = {}): http.Agent {
  // A kept-alive connection must not be reused just as the server closes it while idle (RFC 9112
  // §9.6; `isStaleConnection`): the most recently used one is reused first (LIFO), and one idle for
  // FREE_SOCKET_IDLE_MS is closed by the client (servers commonly wait 5 s or more).
  const common = { keepAlive: true, maxSockets: Infinity, scheduling: 'lifo' as const, timeout: FREE_SOCKET_IDLE_MS };
  if (new URL(url).protocol !== 'https:') return new http.Agent(common);
  return new https.Agent({ ...common, ...tlsOf(tls) });
}

/** The record of a complete exchange, every text redacted, the body cut at MAX_RECORDED_BODY. */
export function recordOf(request: OutboundRequest, response: OutboundResponse, secrets: readonly Secret[]): RecordedExchange {
  const clean = redactorOf(secrets);
  const pairs: RecordedHeader[] = [];
  const raw = response.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) pairs.push({ name: raw[i]!, value: clean(raw[i + 1]!) });
  const text = clean(response.body);
  const cut = text.length > MAX_RECORDED_BODY;
  const body = request.body === undefined ? undefined : typeof request.body === 'string' ? request.body : request.body.toString('latin1');
  return {
    startedDateTime: new Date(response.sentAt).toISOString(),
    timeMs: Math.max(0, response.receivedAt - response.sentAt),
    request: {
      method: request.method.toUpperCase(),
      url: clean(request.url.href),
      headers: Object.entries(request.headers).map(([name, value]) => ({ name, value: clean(value) })),
      ...(body !== undefined ? { body: clean(body) } : {}),
    },
    response: {
      status: response.status,
      statusText: http.STATUS_CODES[response.status] ?? '',
      headers: pairs,
      body: cut ? text.slice(0, MAX_RECORDED_BODY) : text,
      ...(cut ? { bodyTruncated: true } : {}),
    },
  };
}

/** The message of a deadline that passed. */
function deadlineMessage(options: SendOptions): string {
  return `no complete response within ${options.deadlineMs} ms${options.deadlineName ? ` (${options.deadlineName})` : ''}`;
}

/**
 * Sends one request and reads the whole answer. Rejects with a `TransportError` (kind `timeout`,
 * `tls`, `socket`, `too-large` or `aborted`) when no complete answer arrived within the deadline;
 * never follows a redirect, never decodes a content coding.
 */
export function send(request: OutboundRequest, options: SendOptions): Promise<OutboundResponse> {
  const { url } = request;
  const secure = url.protocol === 'https:';
  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const sentAt = Date.now();
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 100) / 100;
  const stalls = options.watchStalls ? watchStalls() : undefined;
  return new Promise((resolve, reject) => {
    let settled = false;
    let newConnection = false;
    let answerStarted = false;
    const fail = (kind: FailureKind, message: string, code?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      req.destroy();
      const stalledMs = stalls?.longestSince(started) ?? 0;
      stalls?.end();
      reject(new TransportError(kind, message, code, sentAt, elapsed(), req.reusedSocket === true, answerStarted, stalledMs));
    };
    const failWith = (error: NodeJS.ErrnoException) => fail(secure && isTlsFailure(error) ? 'tls' : 'socket', error.message, error.code);
    const finish = (res: http.IncomingMessage, chunks: Buffer[], truncated: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const stalledMs = stalls?.longestSince(started);
      stalls?.end();
      options.signal?.removeEventListener('abort', onAbort);
      if (truncated) req.destroy();
      const response: OutboundResponse = {
        status: res.statusCode ?? 0,
        rawHeaders: res.rawHeaders,
        headers: res.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        truncated,
        sentAt,
        receivedAt: Date.now(),
        latencyMs: elapsed(),
        newConnection,
        ...(stalledMs !== undefined ? { stalledMs } : {}),
      };
      try {
        if (options.record) options.record.onExchange(recordOf(request, response, options.record.secrets));
      } catch (error) {
        return reject(error);
      }
      resolve(response);
    };
    const req = (secure ? https : http).request(
      {
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: request.method,
        headers: request.headers,
        agent: options.agent,
        // Set on every request (an http one ignores them): one object shape for Node's agent.
        rejectUnauthorized: options.tls?.insecure !== true,
        ca: secure && options.tls?.ca !== undefined ? withDefaultRoots(options.tls.ca) : undefined,
        ...({ secureContext: secure && options.tls?.ca !== undefined ? contextOf(options.tls.ca) : undefined } as object),
      },
      (res) => {
        answerStarted = true;
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          if (settled) return;
          size += c.length;
          if (size <= maxBodyBytes) chunks.push(c);
          else if (options.overflow === 'truncate') {
            chunks.push(c.subarray(0, c.length - (size - maxBodyBytes)));
            finish(res, chunks, true);
          } else fail('too-large', `response body larger than ${maxBodyBytes} bytes; reading stopped`, 'ERR_BODY_TOO_LARGE');
        });
        res.on('end', () => finish(res, chunks, false));
        res.on('error', failWith);
      },
    );
    // Node runs due timers before it reads sockets: after a stall, the deadline would fire ahead of
    // an answer already received. One turn of the event loop reads it first, so the deadline judges
    // when the answer arrived, not when a busy process got to it.
    const timer = setTimeout(() => setImmediate(() => fail('timeout', deadlineMessage(options), 'ETIMEDOUT')), options.deadlineMs);
    const onAbort = () => fail('aborted', 'stopped by a signal', 'ABORTED');
    req.on('socket', (socket) => {
      // A socket that has not connected yet is a new connection (a kept-alive one is reused).
      newConnection = (socket as { connecting?: boolean }).connecting === true;
    });
    req.on('error', failWith);
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    req.end(request.body);
  });
}

// ---------------------------------------------------------------------------------------------
// Pools for load

/**
 * A pool of kept-alive connections to the origin of `url` (core/http1-pool.ts frames the exchanges)
 * with the policy of `send`: TLS verified explicitly unless `tls.insecure` (and a socket whose peer
 * was not verified never carries a byte of a request), extra CAs beside Node's roots (one secure
 * context per `ca`), one wall-clock deadline per exchange, a body cap, no redirect, no decoding,
 * idle connections closed after FREE_SOCKET_IDLE_MS, never retried.
 */
export function poolFor(url: string, tls: TlsOptions = {}, connections?: number): ConnectionPool {
  const target = new URL(url);
  const secure = target.protocol === 'https:';
  const host = target.hostname.replace(/^\[|\]$/g, '');
  const port = Number(target.port || (secure ? 443 : 80));
  const policy = tlsOf(tls);
  const servername = isIP(host) ? undefined : host;
  const connector: Connector = secure
    ? {
        secure,
        readyEvent: 'secureConnect',
        connect: (onread) => {
          // tls.connect takes `onread` as net.connect does (Node's documentation; @types/node lacks it).
          const options: ConnectionOptions & { onread: OnReadOpts } = {
            host,
            port,
            onread,
            servername,
            ALPNProtocols: ['http/1.1'],
            rejectUnauthorized: policy.rejectUnauthorized,
            ...(policy.secureContext ? { secureContext: policy.secureContext } : {}),
          };
          return tlsConnect(options);
        },
        refuse: (socket) =>
          policy.rejectUnauthorized && !(socket as TLSSocket).authorized
            ? Object.assign(new Error(`certificate not verified: ${(socket as TLSSocket).authorizationError ?? 'unknown'}`), {
                code: 'ERR_TLS_CERT_NOT_VERIFIED',
              })
            : undefined,
      }
    : { secure, readyEvent: 'connect', connect: (onread) => netConnect({ host, port, onread }), refuse: () => undefined };
  return new FramedPool(target.host, connector, connections ?? Number.POSITIVE_INFINITY);
}
