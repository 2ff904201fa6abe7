/**
 * The plans of the spec's Limits table (spec, Limits): requests per minute and per day. Enterprise
 * limits are custom (spec: "Enterprise limit values: not shown"), so they have no entry here.
 */

export type Plan = 'free' | 'pro' | 'business' | 'enterprise';

export const PLANS: readonly Plan[] = ['free', 'pro', 'business', 'enterprise'];

export const PLAN_LIMITS: Record<Exclude<Plan, 'enterprise'>, { minute: number; day: number }> = {
  free: { minute: 60, day: 1000 },
  pro: { minute: 300, day: 10000 },
  business: { minute: 1000, day: 100000 },
};

export function isPlan(value: string | undefined): value is Plan {
  return (PLANS as readonly (string | undefined)[]).includes(value);
}

/** The per-minute figure of `plan` (spec, Limits); undefined for enterprise (not shown) or no known plan. */
export function minuteLimitOf(plan: string | undefined): number | undefined {
  return isPlan(plan) && plan !== 'enterprise' ? PLAN_LIMITS[plan].minute : undefined;
}
