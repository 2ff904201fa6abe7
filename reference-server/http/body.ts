/**
 * Reading a request body with a size limit and a deadline.
 *
 * Spec: [Errors](../shared/spec/inventory-service.md#errors) — malformed input gets a 4xx Error
 * body, never a 5xx or a hang: a body over `maxBodyBytes` gets 413 (reading stops at once; a
 * declared `Content-Length` over the limit is refused before reading), a body that has not arrived
 * within `bodyTimeoutMs` gets 408. Both close the connection.
 *
 * One `BodyReader` per server. Every body shares one deadline length, so the bodies being read
 * expire in arrival order and one timer, armed for the oldest, serves them all; the listeners are
 * module functions. A request costs no timer, closure or Promise of its own.
 */
import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { ApiError, ErrorCode } from '../errors/api-error.ts';
import type { Exchange } from './exchange.ts';

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
  readonly onBody: (body: Buffer) => void;
  /** Monotonic ms (`performance.now()`) after which the body is late. */
  readonly deadline: number;
  chunks: Buffer[] | undefined;
  first: Buffer | undefined;
  size: number;
  done: boolean;
}

type Reading = IncomingMessage & { [PENDING]: Pending };

export class BodyReader {
  private readonly waiting = new Set<Pending>();
  private timer: NodeJS.Timeout | undefined;

  constructor(readonly limits: BodyLimits) {}

  /**
   * Reads the body of `x.req`, then calls `onBody` with it. A body too large, late or broken is
   * answered through `x.app.fail` (413, 408, 400), as is anything `onBody` throws.
   */
  read(x: Exchange, onBody: (body: Buffer) => void): void {
    const { maxBodyBytes, bodyTimeoutMs } = this.limits;
    const req = x.req as Reading;
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > maxBodyBytes) return x.app.fail(x, tooLarge(maxBodyBytes));
    const pending: Pending = { reader: this, x, onBody, deadline: performance.now() + bodyTimeoutMs, chunks: undefined, first: undefined, size: 0, done: false };
    req[PENDING] = pending;
    this.waiting.add(pending);
    if (this.timer === undefined) this.arm(bodyTimeoutMs);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onBroken);
    req.on('aborted', onBroken);
  }

  /** Ends `pending` with its body, or with `error` (listeners removed, reading stopped). */
  finish(pending: Pending, error?: ApiError): void {
    if (pending.done) return;
    pending.done = true;
    this.waiting.delete(pending);
    const { x } = pending;
    if (error !== undefined) {
      x.req.off('data', onData).off('end', onEnd).off('error', onBroken).off('aborted', onBroken);
      x.app.fail(x, error);
      return;
    }
    const body = pending.chunks !== undefined ? Buffer.concat(pending.chunks, pending.size) : pending.first ?? Buffer.alloc(0);
    try {
      pending.onBody(body);
    } catch (thrown) {
      x.app.fail(x, thrown);
    }
  }

  private arm(ms: number): void {
    this.timer = setTimeout(this.expire, ms);
    this.timer.unref();
  }

  /** 408 for every body past its deadline (the oldest first), then re-arms for the next one. */
  private readonly expire = (): void => {
    this.timer = undefined;
    const now = performance.now();
    for (const pending of this.waiting) {
      if (pending.deadline > now) return this.arm(pending.deadline - now);
      const ms = this.limits.bodyTimeoutMs;
      this.finish(pending, new ApiError(408, ErrorCode.requestTimeout, `The request body did not arrive within ${ms} ms.`, CLOSE));
    }
  };
}

function onData(this: Reading, chunk: Buffer): void {
  const pending = this[PENDING];
  if (pending.done) return;
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
  pending.reader.finish(pending, new ApiError(400, ErrorCode.invalidRequest, 'The request body could not be read.', CLOSE));
}

function tooLarge(maxBodyBytes: number): ApiError {
  return new ApiError(413, ErrorCode.payloadTooLarge, `The request body is larger than ${maxBodyBytes} bytes.`, CLOSE);
}
