/**
 * Requests node's parser rejects before a request object exists: a header section over 16 KiB
 * (431, which includes a very long request line), malformed syntax or conflicting framing headers
 * such as two different `Content-Length`s (400), headers that do not arrive in time (408). They
 * still get an Error body and the rate-limit headers (counted against the client address), then the
 * connection is closed.
 *
 * Spec: [Errors](spec/inventory-service.md#errors) and rule 1 of
 * [Limits](spec/inventory-service.md#limits).
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { ErrorCode, type ErrorBody } from '../errors/api-error.ts';
import type { RateDecision } from '../rate-limit/policy.ts';
import { H_LIMIT, H_REMAINING, H_RESET, JSON_TYPE } from './response.ts';

export function clientErrorBody(code: string | undefined): ErrorBody {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { code: ErrorCode.headersTooLarge, message: 'The request line and headers are larger than the server accepts.', status: 431 };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { code: ErrorCode.payloadTooLarge, message: 'Chunk extensions are too large.', status: 413 };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { code: ErrorCode.requestTimeout, message: 'The request did not arrive in time.', status: 408 };
    default:
      return { code: ErrorCode.invalidRequest, message: 'The request is not valid HTTP/1.1.', status: 400 };
  }
}

/** The raw HTTP/1.1 response for a parser error. */
export function rawErrorResponse(body: ErrorBody, decision: RateDecision, now = new Date()): string {
  const json = JSON.stringify(body);
  return (
    `HTTP/1.1 ${body.status} ${STATUS_CODES[body.status]}\r\n` +
    `Content-Type: ${JSON_TYPE}\r\n` +
    `Content-Length: ${Buffer.byteLength(json)}\r\n` +
    `Date: ${now.toUTCString()}\r\n` +
    `${H_LIMIT}: ${decision.limit}\r\n` +
    `${H_REMAINING}: ${decision.remaining}\r\n` +
    `${H_RESET}: ${decision.resetSeconds}\r\n` +
    fieldLines(decision.fields) +
    `Connection: close\r\n\r\n${json}`
  );
}

function fieldLines(fields: readonly string[] | undefined): string {
  let lines = '';
  if (fields !== undefined) for (let i = 0; i + 1 < fields.length; i += 2) lines += `${fields[i]}: ${fields[i + 1]}\r\n`;
  return lines;
}

/** Writes the response (unless one is already under way or the peer is gone) and closes. */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket, decide: () => RateDecision | Promise<RateDecision>): void {
  const inFlight = (socket as unknown as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const write = (decision: RateDecision): void => {
    if (socket.writable) socket.end(rawErrorResponse(clientErrorBody(error.code), decision));
    else socket.destroy();
  };
  try {
    const decision = decide();
    if (typeof (decision as { then?: unknown }).then === 'function')
      (decision as Promise<RateDecision>).then(write, () => socket.destroy());
    else write(decision as RateDecision);
  } catch {
    socket.destroy();
  }
}
