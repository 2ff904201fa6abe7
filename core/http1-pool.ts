/**
 * Kept-alive HTTP/1.1 connections for load (core/transport.ts `poolFor` opens them and owns their
 * TLS policy; this module only frames exchanges on the sockets it is given). Each connection carries
 * one exchange at a time: a request serialised once per pool and written whole, its answer read by
 * `ResponseParser`. One wall-clock deadline per exchange, to the last byte, swept by one timer; a
 * connection idle for FREE_SOCKET_IDLE_MS is closed; nothing is ever retried.
 */
import type { OnReadOpts, Socket } from 'node:net';
import { ParseError, type ParsedResponse, ResponseParser } from './http1-response.ts';
import { type StallWatch, watchStalls } from './stall.ts';
import { type FailureKind, FREE_SOCKET_IDLE_MS, isTlsFailure, MAX_BODY_BYTES, TransportError } from './transport-errors.ts';

/** One request of a pool: a path on its origin; headers and body go out as given (plus `host`). */
export interface PooledRequest {
  method: string;
  /** Path and query on the pool's origin, e.g. `/v1/inventory`. */
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface PooledSendOptions {
  /** Wall-clock deadline of the whole exchange, to the last byte of the answer. */
  deadlineMs: number;
  /** Watch how long this process is held from running while the request waits (`core/stall.ts`). */
  watchStalls?: boolean;
}

/** A complete answer from a pool. */
export interface PooledResponse {
  status: number;
  /** Names lowercased; repeated fields joined as node:http joins them (`headersOf`). */
  headers: Record<string, string>;
  /** The body as sent (no content coding decoded), read as UTF-8. */
  body: string;
  /** `Date.now()` when the request was handed to the pool. */
  sentAt: number;
  /** `performance.now()` when the request was written to its socket. */
  writtenAt: number;
  /** `Date.now()` when the answer was complete. */
  receivedAt: number;
  /** Milliseconds from handing the request to the pool to the last byte (monotonic clock). */
  latencyMs: number;
  /** With `watchStalls`: the longest time this process was held from running while it waited. */
  stalledMs?: number;
}

/** A failure from a pool: a `TransportError` with the moment the request was written, if it was. */
export class PooledError extends TransportError {
  /** `performance.now()` when the request was written to its socket (undefined: never written). */
  writtenAt?: number;
}

/** Called once per request: with an error, or with the answer. */
export type PooledCallback = (error: PooledError | undefined, response: PooledResponse | undefined) => void;

/** Kept-alive connections to one origin; `close()` ends them all (nothing pending is answered then). */
export interface ConnectionPool {
  send(request: PooledRequest, options: PooledSendOptions, done: PooledCallback): void;
  /** Connections opened so far. */
  readonly connectionsOpened: number;
  close(): void;
}

/** How the pool gets a connection: a socket and the event after which it may carry a request. */
export interface Connector {
  /** A socket whose bytes go to `onread` (a buffer reused for every read: no stream, no allocation per read). */
  connect(onread: OnReadOpts): Socket;
  readyEvent: 'connect' | 'secureConnect';
  /** Why a socket that is ready must still not carry a request (a TLS peer not verified), if it must not. */
  refuse(socket: Socket): Error | undefined;
  secure: boolean;
}

/** One request waiting for, or carried by, a connection. */
interface Exchange {
  bytes: Buffer;
  bodyless: boolean;
  done: PooledCallback;
  sentAt: number;
  started: number;
  deadlineAt: number;
  deadlineMs: number;
  writtenAt: number | undefined;
}

/** How often the pool looks for exchanges past their deadline and connections idle too long. */
const SWEEP_MS = 20;
/** The one read buffer of a pool's sockets: each read is parsed (what is kept, copied) before the next. */
const READ_BUFFER_BYTES = 64 * 1024;

/** The bytes of `request` on `host`: written once per pool, whole, for every exchange of it. */
function serialise(request: PooledRequest, host: string): Buffer {
  let head = `${request.method} ${request.path} HTTP/1.1\r\nhost: ${host}\r\n`;
  for (const [name, value] of Object.entries(request.headers)) {
    if (/[\r\n]/.test(name + value)) throw new TypeError('a header with a line break cannot be sent');
    head += `${name}: ${value}\r\n`;
  }
  return Buffer.concat([Buffer.from(`${head}\r\n`, 'latin1'), Buffer.from(request.body ?? '', 'utf8')]);
}

class Connection {
  readonly parser = new ResponseParser(MAX_BODY_BYTES);
  ready = false;
  used = false;
  idleSince = performance.now();
  exchange: Exchange | undefined;
  socket!: Socket;
}

export class FramedPool implements ConnectionPool {
  private readonly idle: Connection[] = [];
  private readonly all = new Set<Connection>();
  private readonly waiting: Exchange[] = [];
  private readonly prepared = new Map<PooledRequest, Buffer>();
  private readonly readBuffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  private readonly timer: NodeJS.Timeout;
  private stalls: StallWatch | undefined;
  private closed = false;
  private opened = 0;
  private readonly host: string;
  private readonly connector: Connector;
  private readonly max: number;

  constructor(host: string, connector: Connector, max: number) {
    this.host = host;
    this.connector = connector;
    this.max = max;
    this.timer = setInterval(() => setImmediate(() => this.sweep()), SWEEP_MS);
  }

  get connectionsOpened(): number {
    return this.opened;
  }

  send(request: PooledRequest, options: PooledSendOptions, done: PooledCallback): void {
    let bytes = this.prepared.get(request);
    if (bytes === undefined) this.prepared.set(request, (bytes = serialise(request, this.host)));
    if (options.watchStalls) this.stalls ??= watchStalls();
    const started = performance.now();
    const exchange: Exchange = {
      bytes,
      bodyless: request.method === 'HEAD',
      done,
      sentAt: Date.now(),
      started,
      deadlineAt: started + options.deadlineMs,
      deadlineMs: options.deadlineMs,
      writtenAt: undefined,
    };
    const connection = this.idle.pop() ?? (this.all.size < this.max ? this.open() : undefined);
    if (connection === undefined) this.waiting.push(exchange);
    else this.start(connection, exchange);
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    this.stalls?.end();
    for (const c of this.all) c.socket.destroy();
    this.all.clear();
    this.idle.length = 0;
    this.waiting.length = 0;
  }

  private open(): Connection {
    const connection = new Connection();
    const onread: OnReadOpts = {
      buffer: this.readBuffer,
      callback: (length) => {
        this.read(connection, length);
        return true;
      },
    };
    const socket = this.connector.connect(onread);
    connection.socket = socket;
    this.opened++;
    this.all.add(connection);
    socket.setNoDelay(true);
    socket.once(this.connector.readyEvent, () => {
      const refused = this.connector.refuse(socket);
      if (refused) return this.lose(connection, refused);
      connection.ready = true;
      if (connection.exchange) this.write(connection);
    });
    socket.on('error', (error) => this.lose(connection, error));
    socket.on('close', () => {
      const last = connection.exchange ? connection.parser.end() : undefined;
      if (last) this.complete(connection, last);
      this.lose(connection, Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    });
    return connection;
  }

  private start(connection: Connection, exchange: Exchange): void {
    connection.exchange = exchange;
    connection.parser.reset(exchange.bodyless);
    if (connection.ready) this.write(connection);
  }

  private write(connection: Connection): void {
    const exchange = connection.exchange!;
    exchange.writtenAt = performance.now();
    connection.socket.write(exchange.bytes);
  }

  /** The first `length` bytes of the read buffer came on `connection`. */
  private read(connection: Connection, length: number): void {
    if (connection.exchange === undefined) return this.lose(connection, new ParseError('bytes from the server with no request pending'));
    let response: ParsedResponse | undefined;
    try {
      response = connection.parser.feed(this.readBuffer, length);
    } catch (error) {
      if (error instanceof RangeError) return this.fail(connection, 'too-large', error.message, 'ERR_BODY_TOO_LARGE');
      return this.fail(connection, 'socket', `an invalid response: ${(error as Error).message}`, 'HPE_INVALID');
    }
    if (response) this.complete(connection, response);
  }

  /** An answer is complete: the connection is free (or closed) before the caller hears of it. */
  private complete(connection: Connection, response: ParsedResponse): void {
    const now = performance.now();
    // Read before anything else can reuse the read buffer the body's parts may be views of.
    const body = response.body.length === 1 ? response.body[0]!.toString('utf8') : Buffer.concat(response.body).toString('utf8');
    const exchange = connection.exchange!;
    connection.exchange = undefined;
    connection.used = true;
    if (response.closes) this.drop(connection);
    else this.release(connection);
    const stalledMs = this.stalls?.longestSince(exchange.started);
    const answer: PooledResponse = {
      status: response.status,
      headers: response.headers,
      body,
      sentAt: exchange.sentAt,
      writtenAt: exchange.writtenAt ?? exchange.started,
      receivedAt: Date.now(),
      latencyMs: Math.round((now - exchange.started) * 100) / 100,
    };
    if (stalledMs !== undefined) answer.stalledMs = stalledMs;
    exchange.done(undefined, answer);
  }

  /** A free connection takes the next waiting exchange, or waits idle. */
  private release(connection: Connection): void {
    if (this.closed) return;
    const next = this.waiting.shift();
    if (next) return this.start(connection, next);
    connection.idleSince = performance.now();
    this.idle.push(connection);
  }

  private drop(connection: Connection): void {
    this.all.delete(connection);
    const at = this.idle.indexOf(connection);
    if (at >= 0) this.idle.splice(at, 1);
    connection.socket.destroy();
    // A waiting exchange gets a connection of its own in place of the one closed.
    if (!this.closed && this.waiting.length > 0 && this.all.size < this.max) this.start(this.open(), this.waiting.shift()!);
  }

  /** The connection failed or closed: its exchange, if any, fails with `error`'s kind. */
  private lose(connection: Connection, error: NodeJS.ErrnoException): void {
    if (!this.all.has(connection)) return;
    if (connection.exchange === undefined) return this.drop(connection);
    const kind: FailureKind = this.connector.secure && isTlsFailure(error) ? 'tls' : 'socket';
    this.fail(connection, kind, error.message, error.code);
  }

  private fail(connection: Connection, kind: FailureKind, message: string, code: string | undefined): void {
    const exchange = connection.exchange!;
    connection.exchange = undefined;
    const answerStarted = connection.parser.started;
    this.drop(connection);
    this.report(exchange, kind, message, code, connection.used, answerStarted);
  }

  private report(
    exchange: Exchange,
    kind: FailureKind,
    message: string,
    code: string | undefined,
    reused: boolean,
    started: boolean,
  ): void {
    if (this.closed) return;
    const latencyMs = Math.round((performance.now() - exchange.started) * 100) / 100;
    const stalledMs = this.stalls?.longestSince(exchange.started) ?? 0;
    const error = new PooledError(kind, message, code, exchange.sentAt, latencyMs, reused, started, stalledMs);
    error.writtenAt = exchange.writtenAt;
    exchange.done(error, undefined);
  }

  /** Fails the exchanges past their deadline (never earlier than it) and closes long-idle connections. */
  private sweep(): void {
    if (this.closed) return;
    const now = performance.now();
    const late = (e: Exchange) => `no complete response within ${e.deadlineMs} ms`;
    for (const c of [...this.all]) {
      const e = c.exchange;
      if (e !== undefined && e.deadlineAt <= now) this.fail(c, 'timeout', late(e), 'ETIMEDOUT');
      else if (e === undefined && now - c.idleSince >= FREE_SOCKET_IDLE_MS) this.drop(c);
    }
    for (let i = this.waiting.length - 1; i >= 0; i--) {
      const e = this.waiting[i]!;
      if (e.deadlineAt > now) continue;
      this.waiting.splice(i, 1);
      this.report(e, 'timeout', late(e), 'ETIMEDOUT', false, false);
    }
  }
}
