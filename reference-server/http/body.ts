/**
 * Reading a request body with a size limit and a deadline.
 *
 * Spec: [Errors](spec/inventory-service.md#errors) — malformed input gets a 4xx Error
 * body, never a 5xx or a hang: a body over `maxBodyBytes` gets 413 (reading stops at once; a
 * declared `Content-Length` over the limit is refused before reading), a body that has not arrived
 * within `bodyTimeoutMs` gets 408, a body the client cut short gets 400 (and is let go at once).
 * All three close the connection.
 *
 * One `BodyReader` per server. Every body shares one deadline length, so the bodies being read
 * expire in arrival order and one timer, armed for the oldest, serves them all; the listeners are
 * module functions and the caller passes a module function plus a context, so a request costs no
 * timer, closure or Promise of its own.
 *
 * What keeps every body answered (each rule has a test in tests/reference-server/body-reader.test.ts):
 * - a body whose stream has already ended or been destroyed when reading starts (its 'end' or
 *   'aborted' was emitted before anyone listened, as after an asynchronous rate-limit decision) is
 *   answered at once: a listener attached now would wait for an event that never comes again;
 * - the timer is re-armed for the next body before any late body is answered, and each answer is
 *   isolated, so one answer that throws never leaves the others without a deadline;
 * - a finished body leaves no listener on its request.
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
  /** Monotonic ms (`performance.now()`) after which the body is late. */
  readonly deadline: number;
  first: Buffer | undefined;
  chunks: Buffer[] | undefined;
  size: number;
  done: boolean;
}

type Reading = IncomingMessage & { [PENDING]: Pending };

export class BodyReader implements BodyReading {
  private readonly waiting = new Set<Pending>();
  private timer: NodeJS.Timeout | undefined;

  constructor(readonly limits: BodyLimits) {}

  /** Bodies being read now (for tests). */
  get pending(): number {
    return this.waiting.size;
  }

  /**
   * Reads the body of `x.req`, then calls `onBody(x, body, context)`. A body too large, late, cut
   * short or already gone is answered through `x.app.fail` (413, 408, 400), as is anything
   * `onBody` throws.
   */
  read<C>(x: Exchange, onBody: BodyHandler<C>, context: C): void {
    const { maxBodyBytes, bodyTimeoutMs } = this.limits;
    const req = x.req as Reading;
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > maxBodyBytes) return x.app.fail(x, tooLarge(maxBodyBytes));
    if (req.readableEnded || req.destroyed) return x.app.fail(x, unreadable());
    const pending: Pending = {
      reader: this, x, onBody: onBody as BodyHandler<unknown>, context, deadline: performance.now() + bodyTimeoutMs,
      first: undefined, chunks: undefined, size: 0, done: false,
    };
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
    this.waiting.delete(pending);
    const { x } = pending;
    x.req.off('data', onData).off('end', onEnd).off('aborted', onBroken);
    if (error !== undefined) return x.app.fail(x, error);
    const body = pending.chunks !== undefined ? Buffer.concat(pending.chunks, pending.size) : pending.first ?? EMPTY;
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
