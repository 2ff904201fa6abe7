/**
 * Reading a request body with a size limit and a deadline.
 *
 * Spec: [Errors](spec/inventory-service.md#errors) — malformed input gets a 4xx Error
 * body, never a 5xx or a hang: a body over `maxBodyBytes` gets 413 (reading stops at once; a
 * declared `Content-Length` over the limit is refused before reading), a body that has not arrived
 * within `bodyTimeoutMs` gets 408. Both close the connection.
 */
import type { IncomingMessage } from 'node:http';
import { ApiError, ErrorCode } from '../errors/api-error.ts';

export interface BodyLimits {
  maxBodyBytes: number;
  bodyTimeoutMs: number;
}

const CLOSE = { Connection: 'close' } as const;

export function readBody(req: IncomingMessage, limits: BodyLimits): Promise<Buffer> {
  const { maxBodyBytes, bodyTimeoutMs } = limits;
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBodyBytes) {
    return Promise.reject(tooLarge(maxBodyBytes));
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (error?: ApiError): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      if (error) reject(error);
      else resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBodyBytes) {
        req.pause();
        finish(tooLarge(maxBodyBytes));
      } else {
        chunks.push(chunk);
      }
    };
    const onEnd = (): void => finish();
    const onError = (): void => finish(new ApiError(400, ErrorCode.invalidRequest, 'The request body could not be read.', CLOSE));
    const onAborted = onError;
    const timer = setTimeout(
      () => finish(new ApiError(408, ErrorCode.requestTimeout, `The request body did not arrive within ${bodyTimeoutMs} ms.`, CLOSE)),
      bodyTimeoutMs,
    );
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}

function tooLarge(maxBodyBytes: number): ApiError {
  return new ApiError(413, ErrorCode.payloadTooLarge, `The request body is larger than ${maxBodyBytes} bytes.`, CLOSE);
}
