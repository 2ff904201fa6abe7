/**
 * Writing responses. Every response, success or error, goes through `send()` and so carries the
 * rate-limit headers.
 *
 * Spec: [Limits](spec/inventory-service.md#limits) rules 1–2 — "Every API response
 * carries the headers `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`";
 * Reset is a Unix timestamp in seconds. `Date` is added by node (RFC 9110 §6.6.1).
 */
import type { ServerResponse } from 'node:http';
import type { RateDecision } from '../rate-limit/policy.ts';

export const JSON_TYPE = 'application/json';
export const H_LIMIT = 'X-RateLimit-Limit';
export const H_REMAINING = 'X-RateLimit-Remaining';
export const H_RESET = 'X-RateLimit-Reset';

/**
 * Sends a JSON body with the rate-limit headers of `decision` and the `extra` headers (a flat
 * name, value, … list). Written with one `writeHead` of a flat array: no header object is built.
 */
export function send(res: ServerResponse, status: number, body: Buffer | string, decision: RateDecision, extra?: readonly string[]): void {
  const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  const headers: string[] = [
    'Content-Type',
    JSON_TYPE,
    'Content-Length',
    String(length),
    H_LIMIT,
    String(decision.limit),
    H_REMAINING,
    String(decision.remaining),
    H_RESET,
    String(decision.resetSeconds),
  ];
  const fields = decision.fields;
  if (fields !== undefined) for (let i = 0; i < fields.length; i++) headers.push(fields[i]);
  if (extra !== undefined) for (let i = 0; i < extra.length; i++) headers.push(extra[i]);
  res.writeHead(status, headers);
  res.end(body);
}
