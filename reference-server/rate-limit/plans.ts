/**
 * Plans and their limits.
 *
 * Spec: [Limits](spec/inventory-service.md#limits) — Free 60/min and 1,000/day,
 * Pro 300 and 10,000, Business 1,000 and 100,000, Enterprise "custom".
 */
export type Plan = 'free' | 'pro' | 'business' | 'enterprise';

export const PLANS: readonly Plan[] = ['free', 'pro', 'business', 'enterprise'];

/** Requests allowed per minute window and per day window. */
export interface Limits {
  minute: number;
  day: number;
}

/** The spec's table. Enterprise is "custom": per key (`limits` in `fixtures/keys.yaml`) or `enterpriseLimits`. */
export const PLAN_LIMITS: Readonly<Record<Exclude<Plan, 'enterprise'>, Limits>> = {
  free: { minute: 60, day: 1_000 },
  pro: { minute: 300, day: 10_000 },
  business: { minute: 1_000, day: 100_000 },
};

/** Default limits of an enterprise key without its own (`ENTERPRISE_LIMIT_MINUTE` / `_DAY`). The spec does not show them. */
export const DEFAULT_ENTERPRISE_LIMITS: Readonly<Limits> = { minute: 5_000, day: 1_000_000 };

/**
 * Limits of unauthenticated traffic (no valid key), counted per client address. Not in the spec:
 * it bounds key guessing while leaving room for a conformance run's many 401 checks from one host.
 */
export const DEFAULT_ANONYMOUS_LIMITS: Readonly<Limits> = { minute: 300, day: 10_000 };

export function isPlan(value: unknown): value is Plan {
  return typeof value === 'string' && (PLANS as readonly string[]).includes(value);
}
