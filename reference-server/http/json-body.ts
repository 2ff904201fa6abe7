/**
 * JSON request bodies.
 *
 * Spec: [Endpoints](spec/inventory-service.md#endpoints) — "Bodies are
 * `application/json`"; invalid JSON is a 400 ([Errors](spec/inventory-service.md#errors)).
 * `Content-Type` rules differ per operation, so each route states its own (see `ContentTypeRule`).
 */
import { ApiError, ErrorCode } from '../errors/api-error.ts';
import { readBody } from './body.ts';
import type { Exchange } from './exchange.ts';
import { headerValues, isJsonMediaType, mediaType } from './headers.ts';

/**
 * - `required-400`: the quickstart: a missing or non-JSON `Content-Type` is a 400 (the spec says so).
 * - `optional-415`: updateInventory: the spec does not require the header, so a missing one is
 *   accepted and the body read as JSON; a non-JSON one is 415 with `Accept-Patch` (RFC 5789 §2.2).
 */
export type ContentTypeRule = 'required-400' | 'optional-415';

export function checkContentType(exchange: Exchange, rule: ContentTypeRule): void {
  const values = headerValues(exchange.req.rawHeaders, 'content-type');
  if (values.length > 1) {
    throw new ApiError(400, ErrorCode.invalidContentType, 'Send exactly one Content-Type header.');
  }
  if (values.length === 0) {
    if (rule === 'required-400') {
      throw new ApiError(400, ErrorCode.invalidContentType, 'Content-Type: application/json is required.');
    }
    return;
  }
  if (isJsonMediaType(mediaType(values[0]))) return;
  if (rule === 'required-400') {
    throw new ApiError(400, ErrorCode.invalidContentType, 'Content-Type must be application/json.');
  }
  throw new ApiError(415, ErrorCode.unsupportedMediaType, 'Content-Type must be application/json.', {
    'Accept-Patch': 'application/json',
  });
}

/** Reads the body (size and time limits apply) and parses it as UTF-8 JSON; invalid JSON is a 400. */
export async function readJson(exchange: Exchange): Promise<unknown> {
  const body = await readBody(exchange.req, exchange.app.bodyLimits);
  const text = body.toString('utf8');
  if (text.trim() === '') throw new ApiError(400, ErrorCode.invalidJson, 'The request body is empty; a JSON body is required.');
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(400, ErrorCode.invalidJson, 'The request body is not valid JSON.');
  }
}
