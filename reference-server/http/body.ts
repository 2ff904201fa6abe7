/**
 * Reading a request body with a size limit and a deadline.
 *
 * Spec: [Errors](spec/inventory-service.md#errors) — malformed input gets a 4xx Error
 * body, never a 5xx or a hang: a body over `maxBodyBytes` gets 413 (reading stops at once; a
 * declared `Content-Length` over the limit is refused before reading), a body that has not arrived
 * within `bodyTimeoutMs` gets 408, a body the client cut short gets 400 (and is let go at once).
 * All three close the connection.
 *
 * A body that arrived with its headers (the usual PATCH: one packet) is read at once: node's
 * parser emits the request before it pushes the body, so the reader looks again once the body of
 * that packet has been pushed (one `process.nextTick`); if the body is then complete (all the
 * bytes of its `Content-Length` are buffered — node marks the message complete only a moment
 * later — or `req.complete`), it takes it from the stream's buffer with one `read()`, without
 * flowing mode, listeners or a deadline. A body that is not complete then (split across packets,
 * chunked over several packets, cut short, a declared `Content-Length` larger than what arrives,
 * `Expect: 100-continue`) takes the listening path below, whatever part of it is already buffered.
 * A body read at once before node marks its message complete leaves the stream without an 'end'
 * event (nobody reads past the body's last byte); node's own `clearIncoming` listener then stays
 * on that request until the connection's next request or its close, which free it.
 *
 * One `BodyReader` per server. Every body it listens for shares one deadline length, so those
 * bodies expire in arrival order and one timer, armed for the oldest, serves them all; the
 * listeners are module functions and the caller passes a module function plus a context, so a
 * request costs no timer, closure or Promise of its own.
 *
 * What keeps every body answered (each rule has a test in tests/reference-server/body-reader.test.ts):
 * - a body whose stream has already ended or been destroyed when reading starts (its 'end' or
 *   'aborted' was emitted before anyone listened, as after an asynchronous rate-limit decision) is
 *   answered at once: a listener attached now would wait for an event that never comes again;
 * - the timer is re-armed for the next body before any late body is answered, and each answer is
 *   isolated, so one answer that throws never leaves the others without a deadline;
 * - a finished body leaves no listener on its request;
 * - a body read at once is over the size limit (a chunked body has no declared length) gets 413,
 *   and a request destroyed before the reader looked again gets 400, as on the listening path.
 */
import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { ApiError, ErrorCode } from '../errors/api-error.ts';
import { toApiError } from '../errors/handler.ts';
import type { BodyHandler, BodyReading, Exchange } from './exchange.ts';

export interface BodyLimits {
  maxBodyBytes: number;
  bodyTimeoutMs: number;
}

const CLOSE = { Connection: 'close' } as const;
const PENDING = Symbol('pendingBody');

/** A body being read. */
interface Pending {
  readonly reader: BodyReader;
  readonly x: Exchange;
  readonly onBody: BodyHandler<unknown>;
  readonly context: unknown;
  /** The declared `Content-Length`, or -1 (chunked). */
  readonly declared: number;
  /** Monotonic ms (`performance.now()`) after which the body is late (set when the reader listens). */
  deadline: number;
  first: Buffer | undefined;
  chunks: Buffer[] | undefined;
  size: number;
  /** The reader's listeners are on the request (the listening path). */
  listening: boolean;
  done: boolean;
}

type Reading = IncomingMessage & { [PENDING]: Pending };

export class BodyReader implements BodyReading {
  private readonly waiting = new Set<Pending>();
  private timer: NodeJS.Timeout | undefined;
  private listenedCount = 0;

  readonly limits: BodyLimits;
  constructor(limits: BodyLimits) {
    this.limits = limits;
  }

  /** Bodies being read now (for tests). */
  get pending(): number {
    return this.waiting.size;
  }

  /** Bodies read through listeners so far; every other body was read at once (for tests). */
  get listened(): number {
    return this.listenedCount;
  }

  /**
   * Reads the body of `x.req`, then calls `onBody(x, body, context)`. A body too large, late, cut
   * short or already gone is answered through `x.app.fail` (413, 408, 400), as is anything
   * `onBody` throws.
   */
  read<C>(x: Exchange, onBody: BodyHandler<C>, context: C): void {
    const req = x.req as Reading;
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > this.limits.maxBodyBytes) return x.app.fail(x, tooLarge(this.limits.maxBodyBytes));
    if (req.readableEnded || req.destroyed) return x.app.fail(x, unreadable());
    const pending: Pending = {
      reader: this,
      x,
      onBody: onBody as BodyHandler<unknown>,
      context,
      declared: declared === undefined ? -1 : Number(declared),
      deadline: 0,
      first: undefined,
      chunks: undefined,
      size: 0,
      listening: false,
      done: false,
    };
    if (req.complete) return this.readBuffered(pending);
    process.nextTick(lookAgain, pending);
  }

  /**
   * Once the packet that carried the headers has been parsed: the whole body at once if it is
   * complete, else the listening path (a request destroyed meanwhile gets 400, as in `read`).
   */
  lookAgain(pending: Pending): void {
    const req = pending.x.req as Reading;
    if (req.destroyed) return this.finish(pending, unreadable());
    if (req.complete || (pending.declared >= 0 && req.readableLength >= pending.declared)) return this.readBuffered(pending);
    this.listen(pending);
  }

  /** A complete body, straight from the stream's buffer (node pushes every byte of it before it marks the message complete). */
  private readBuffered(pending: Pending): void {
    const req = pending.x.req;
    for (let chunk: Buffer | null = req.read(); chunk !== null; chunk = req.read()) {
      pending.size += chunk.length;
      if (pending.first === undefined) pending.first = chunk;
      else (pending.chunks ??= [pending.first]).push(chunk);
      if (req.readableLength === 0) break;
    }
    const { maxBodyBytes } = this.limits;
    this.finish(pending, pending.size > maxBodyBytes ? tooLarge(maxBodyBytes) : undefined);
  }

  /** The listening path: chunks as they come, the body at 'end', 400 at 'aborted', 408 at the deadline. */
  private listen(pending: Pending): void {
    const { bodyTimeoutMs } = this.limits;
    const req = pending.x.req as Reading;
    pending.deadline = performance.now() + bodyTimeoutMs;
    pending.listening = true;
    this.listenedCount++;
    req[PENDING] = pending;
    this.waiting.add(pending);
    if (this.timer === undefined) this.arm(bodyTimeoutMs);
    req.on('data', onData);
    req.on('end', onEnd);
    // A body cut short always emits 'aborted' (node emits a request's 'error' only after it, and
    // only to listeners), so this one listener sees every broken body.
    req.on('aborted', onBroken);
  }

  /** Ends `pending` with its body, or with `error` (listeners removed, reading stopped). */
  finish(pending: Pending, error?: ApiError): void {
    if (pending.done) return;
    pending.done = true;
    const { x } = pending;
    if (pending.listening) {
      this.waiting.delete(pending);
      x.req.off('data', onData).off('end', onEnd).off('aborted', onBroken);
    }
    if (error !== undefined) return x.app.fail(x, error);
    const body = pending.chunks !== undefined ? Buffer.concat(pending.chunks, pending.size) : (pending.first ?? EMPTY);
    try {
      pending.onBody(x, body, pending.context);
    } catch (thrown) {
      x.app.fail(x, thrown);
    }
  }

  private arm(ms: number): void {
    this.timer = setTimeout(this.expire, ms);
    this.timer.unref();
  }

  /**
   * 408 for every body past its deadline (the oldest first). The timer is re-armed for the next
   * body before any of them is answered, and an answer that throws is reported and passed over.
   */
  private readonly expire = (): void => {
    this.timer = undefined;
    const now = performance.now();
    const late: Pending[] = [];
    for (const pending of this.waiting) {
      if (pending.deadline > now) {
        this.arm(pending.deadline - now);
        break;
      }
      late.push(pending);
    }
    const ms = this.limits.bodyTimeoutMs;
    for (const pending of late) {
      try {
        this.finish(pending, new ApiError(408, ErrorCode.requestTimeout, `The request body did not arrive within ${ms} ms.`, CLOSE));
      } catch (error) {
        toApiError(error);
      }
    }
  };
}

const EMPTY = Buffer.alloc(0);

function lookAgain(pending: Pending): void {
  pending.reader.lookAgain(pending);
}

/** How many of the reader's listeners are on `req` (none once its body is answered; node's own are not counted). */
export function readerListenerCount(req: IncomingMessage): number {
  let count = 0;
  for (const [event, listener] of [
    ['data', onData],
    ['end', onEnd],
    ['aborted', onBroken],
  ] as const) {
    count += req.listeners(event).filter((l) => l === listener).length;
  }
  return count;
}

function onData(this: Reading, chunk: Buffer): void {
  const pending = this[PENDING];
  pending.size += chunk.length;
  const { maxBodyBytes } = pending.reader.limits;
  if (pending.size > maxBodyBytes) {
    this.pause();
    pending.reader.finish(pending, tooLarge(maxBodyBytes));
  } else if (pending.first === undefined) {
    pending.first = chunk;
  } else {
    (pending.chunks ??= [pending.first]).push(chunk);
  }
}

function onEnd(this: Reading): void {
  const pending = this[PENDING];
  pending.reader.finish(pending);
}

function onBroken(this: Reading): void {
  const pending = this[PENDING];
  pending.reader.finish(pending, unreadable());
}

function unreadable(): ApiError {
  return new ApiError(400, ErrorCode.invalidRequest, 'The request body could not be read.', CLOSE);
}

function tooLarge(maxBodyBytes: number): ApiError {
  return new ApiError(413, ErrorCode.payloadTooLarge, `The request body is larger than ${maxBodyBytes} bytes.`, CLOSE);
}
