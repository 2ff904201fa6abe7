/**
 * The central error handler: every failure of a request becomes the spec's Error body here.
 *
 * Spec: [Errors](spec/inventory-service.md#errors) — Error object `{code, message,
 * status}` with `status` equal to the HTTP status, content type `application/json`, and (rule 1 of
 * [Limits](spec/inventory-service.md#limits)) the rate-limit headers like any response.
 * Anything that is not an `ApiError` is a defect of this server: it is logged (the message and
 * stack only; never request headers, so never a key) and answered with 500.
 */
import type { ServerResponse } from 'node:http';
import type { RateDecision } from '../rate-limit/policy.ts';
import { send } from '../http/response.ts';
import { ApiError, ErrorCode } from './api-error.ts';

export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  console.error('reference-server: internal error:', error instanceof Error ? (error.stack ?? error.message) : String(error));
  return new ApiError(500, ErrorCode.internal, 'Internal server error.');
}

/** Writes `error` as an Error response (or destroys the socket if a response was already started). */
export function sendError(res: ServerResponse, decision: RateDecision, error: unknown, extra?: readonly string[]): void {
  const apiError = toApiError(error);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const headers: string[] = extra ? [...extra] : [];
  for (const name of Object.keys(apiError.headers)) headers.push(name, apiError.headers[name]);
  send(res, apiError.status, JSON.stringify(apiError.toBody()), decision, headers);
}
