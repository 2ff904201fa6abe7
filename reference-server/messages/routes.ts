/**
 * The quickstart message operation.
 *
 * Spec: [Send message (quickstart)](spec/inventory-service.md#3-send-message-quickstart)
 * and [States and transitions](spec/inventory-service.md#states-and-transitions) —
 * `POST {api_url}/messages` with `Content-Type: application/json` and `{"message": <string>}`;
 * 400 for invalid JSON, a missing `message` or a missing content type; 401 without a valid key.
 * Success is 201 (the spec names no code) with `{id, message, status: "queued", createdAt}`:
 * `id` a UUID string, `createdAt` ISO 8601 in UTC with `Z`. Messages are not delivered anywhere;
 * nothing is kept. A non-string `message` and a non-JSON content type are 400 too; an empty string
 * is a string and is accepted.
 */
import { randomUUID } from 'node:crypto';
import { ApiError, ErrorCode } from '../errors/api-error.ts';
import type { Exchange } from '../http/exchange.ts';
import { checkContentType, readJson } from '../http/json-body.ts';
import { send } from '../http/response.ts';

export const MESSAGE_QUEUED = 'queued';

export interface MessageResponse {
  id: string;
  message: string;
  status: typeof MESSAGE_QUEUED;
  createdAt: string;
}

/** `POST /quickstart/messages`. */
export function sendMessage(x: Exchange): void {
  checkContentType(x, 'required-400');
  readJson(x, answerMessage);
}

/** The message once its body is parsed. */
function answerMessage(x: Exchange, body: unknown): void {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ApiError(400, ErrorCode.invalidBody, 'The body must be a JSON object: {"message": <string>}.');
  }
  const message = (body as { message?: unknown }).message;
  if (message === undefined) throw new ApiError(400, ErrorCode.invalidBody, 'message is required.');
  if (typeof message !== 'string') throw new ApiError(400, ErrorCode.invalidBody, 'message must be a string.');
  const response: MessageResponse = { id: randomUUID(), message, status: MESSAGE_QUEUED, createdAt: new Date().toISOString() };
  send(x.res, 201, JSON.stringify(response), x.decision);
}
