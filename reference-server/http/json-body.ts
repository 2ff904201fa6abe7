/**
 * JSON request bodies.
 *
 * Spec: [Endpoints](spec/inventory-service.md#endpoints) — "Bodies are
 * `application/json`"; invalid JSON is a 400 ([Errors](spec/inventory-service.md#errors)).
 * `Content-Type` rules differ per operation, so each route states its own (see `ContentTypeRule`).
 */
import { ApiError, ErrorCode } from '../errors/api-error.ts';
import type { Exchange } from './exchange.ts';
import { isJsonMediaType, mediaType } from './headers.ts';
import { JSON_TYPE } from './response.ts';

/**
 * - `required-400`: the quickstart: a missing or non-JSON `Content-Type` is a 400 (the spec says so).
 * - `optional-415`: updateInventory: the spec does not require the header, so a missing one is
 *   accepted and the body read as JSON; a non-JSON one is 415 with `Accept-Patch` (RFC 5789 §2.2).
 */
export type ContentTypeRule = 'required-400' | 'optional-415';

export function checkContentType(exchange: Exchange, rule: ContentTypeRule): void {
  const raw = exchange.req.rawHeaders;
  let value: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    if (name.length !== 12 || !(name === 'Content-Type' || name === 'content-type' || name.toLowerCase() === 'content-type')) continue;
    if (value !== undefined) throw new ApiError(400, ErrorCode.invalidContentType, 'Send exactly one Content-Type header.');
    value = raw[i + 1];
  }
  if (value === undefined) {
    if (rule === 'required-400') {
      throw new ApiError(400, ErrorCode.invalidContentType, 'Content-Type: application/json is required.');
    }
    return;
  }
  if (value === JSON_TYPE || isJsonMediaType(mediaType(value))) return;
  if (rule === 'required-400') {
    throw new ApiError(400, ErrorCode.invalidContentType, 'Content-Type must be application/json.');
  }
  throw new ApiError(415, ErrorCode.unsupportedMediaType, 'Content-Type must be application/json.', {
    'Accept-Patch': JSON_TYPE,
  });
}

/**
 * Reads the body (size and time limits apply, see `BodyReader`), parses it as UTF-8 JSON and calls
 * `onJson` with the value; invalid JSON is a 400. Anything `onJson` throws is answered as an error.
 */
export function readJson(exchange: Exchange, onJson: (x: Exchange, value: unknown) => void): void {
  exchange.app.body.read(exchange, withJson, onJson);
}

function withJson(x: Exchange, body: Buffer, onJson: (x: Exchange, value: unknown) => void): void {
  onJson(x, parseJson(body));
}

/** A body as JSON, or a 400 `invalid_json`. */
export function parseJson(body: Buffer): unknown {
  const text = body.toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    if (text.trim() === '') throw new ApiError(400, ErrorCode.invalidJson, 'The request body is empty; a JSON body is required.');
    throw new ApiError(400, ErrorCode.invalidJson, 'The request body is not valid JSON.');
  }
}
