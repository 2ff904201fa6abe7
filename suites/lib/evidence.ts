/**
 * One-line, redacted description of an exchange for the `evidence` annotation:
 * `GET /v1/inventory → 200, X-RateLimit-Limit: 60, X-RateLimit-Remaining: 57, X-RateLimit-Reset: …,
 * Authorization: Bearer <API_KEY>`. Pure functions.
 */
import { getHeader, type HeaderSource } from './headers.ts';
import { redact, type Secret } from '../../core/secrets.ts';

export interface ExchangeSummary {
  method: string;
  path: string;
  status: number | 'network error';
  headers: HeaderSource;
  /** The Authorization header as sent, or undefined when none was sent. */
  authorization?: string;
  durationMs?: number;
}

const SHOWN = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After'];

export function formatEvidence(ex: ExchangeSummary, secrets: readonly Secret[]): string {
  const parts = [`${ex.method} ${ex.path} → ${ex.status}`];
  for (const name of SHOWN) {
    const value = getHeader(ex.headers, name);
    if (value !== undefined) parts.push(`${name}: ${value}`);
  }
  parts.push(`Authorization: ${ex.authorization === undefined ? '(none)' : describeAuthorization(ex.authorization, secrets)}`);
  return redact(parts.join(', '), secrets);
}

/** The Authorization value with every key replaced by its placeholder; long foreign tokens shortened. */
export function describeAuthorization(value: string, secrets: readonly Secret[]): string {
  const shown = redact(value, secrets);
  if (shown === '') return '(empty)';
  return shown.length > 80 ? `${shown.slice(0, 80)}…` : shown;
}
