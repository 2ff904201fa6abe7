/**
 * The API keys this server accepts.
 *
 * Spec: [Authentication](spec/inventory-service.md#authentication) — "The API key is
 * passed in the `Authorization` header as `Bearer <API_KEY>`". Keys are stored only as SHA-256
 * digests: a presented token is hashed and the digest looked up, so the time taken does not depend
 * on how much of a real key the token matches (a constant-time comparison), and no raw key is kept
 * in memory past start-up, logged or used as a rate-limit identity.
 */
import { createHash } from 'node:crypto';
import type { Plan } from '../rate-limit/plans.ts';
import type { RatePolicy } from '../rate-limit/policy.ts';

/** An accepted key, as the rest of the server sees it (without the key itself). */
export interface ApiKeyRecord {
  /** Name from `fixtures/keys.yaml` (`free`, `pro`, …, `load`). */
  readonly name: string;
  readonly plan: Plan;
  /** Rate-limit identity: `key:<name>`. */
  readonly identity: string;
  readonly policy: RatePolicy;
}

function digest(token: string): string {
  return createHash('sha256').update(token).digest('base64');
}

/** Looks keys up by the digest of the presented token. */
export class KeyRing {
  private readonly byDigest = new Map<string, ApiKeyRecord>();

  constructor(entries: Iterable<{ key: string; record: ApiKeyRecord }>) {
    for (const { key, record } of entries) this.byDigest.set(digest(key), record);
  }

  /** The record of `token`, or undefined for an unknown token. */
  lookup(token: string): ApiKeyRecord | undefined {
    return this.byDigest.get(digest(token));
  }
}
