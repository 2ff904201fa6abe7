/**
 * The conformance run's environment (docs/architecture.md, "The conformance run"). Pure: reads
 * the record it is given.
 */
import { isPlan, type Plan } from './rate-limit.ts';

export type Profile = 'full' | 'readonly';

export interface ConformanceEnv {
  /** Inventory base address, ends in `/v1` (`BASE_URL`). */
  baseUrl?: string;
  /** Quickstart base address (`API_URL`): the suite posts to `${API_URL}/messages`. */
  apiUrl?: string;
  apiKey?: string;
  apiPlan?: Plan;
  rateLimitKey?: string;
  rateLimitPlan?: Plan;
  profile: Profile;
  missingPetId?: string;
  /** Longest wait for `Retry-After` or a window reset (`MAX_RETRY_AFTER_S`, default 120). */
  maxRetryAfterS: number;
  /** Most requests the 429 checks send to drive a key to its limit (`MAX_EXHAUST_REQUESTS`, default 2000). */
  maxExhaustRequests: number;
  /** Per-request timeout (`REQUEST_TIMEOUT_MS`, default 15000). */
  requestTimeoutMs: number;
  /** Parallel workers (`WORKERS`, default 2): the pacer keeps this many requests (+1) in reserve. */
  workers: number;
  /** Problems with the variables themselves (bad plan name, bad profile, bad number). */
  problems: string[];
}

/** Why each variable is needed, for "prerequisite missing" messages. */
export const VARIABLE_PURPOSE: Record<string, string> = {
  BASE_URL: 'the inventory base address, ending in /v1',
  API_URL: 'the quickstart base address; the suite posts to ${API_URL}/messages',
  API_KEY: 'a valid API key for the target',
  RATE_LIMIT_KEY: 'a key the 429 checks may exhaust',
  API_PLAN: 'the plan of API_KEY (free, pro, business or enterprise)',
};

function positiveNumber(env: Record<string, string | undefined>, name: string, fallback: number, problems: string[]): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) {
    problems.push(`${name}="${raw}" is not a positive number; using ${fallback}`);
    return fallback;
  }
  return n;
}

function plan(env: Record<string, string | undefined>, name: string, problems: string[]): Plan | undefined {
  const raw = env[name]?.trim().toLowerCase();
  if (!raw) return undefined;
  if (isPlan(raw)) return raw;
  problems.push(`${name}="${env[name]}" is not one of free, pro, business, enterprise`);
  return undefined;
}

const nonEmpty = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : v.trim());

export function readEnv(env: Record<string, string | undefined> = process.env): ConformanceEnv {
  const problems: string[] = [];
  const rawProfile = (env.CONFORMANCE_PROFILE ?? '').trim().toLowerCase() || 'full';
  let profile: Profile = 'full';
  if (rawProfile === 'readonly' || rawProfile === 'full') profile = rawProfile;
  else problems.push(`CONFORMANCE_PROFILE="${env.CONFORMANCE_PROFILE}" is neither full nor readonly`);
  return {
    baseUrl: nonEmpty(env.BASE_URL)?.replace(/\/+$/, ''),
    apiUrl: nonEmpty(env.API_URL)?.replace(/\/+$/, ''),
    apiKey: nonEmpty(env.API_KEY),
    apiPlan: plan(env, 'API_PLAN', problems),
    rateLimitKey: nonEmpty(env.RATE_LIMIT_KEY),
    rateLimitPlan: plan(env, 'RATE_LIMIT_PLAN', problems),
    profile,
    missingPetId: nonEmpty(env.MISSING_PET_ID),
    maxRetryAfterS: positiveNumber(env, 'MAX_RETRY_AFTER_S', 120, problems),
    maxExhaustRequests: positiveNumber(env, 'MAX_EXHAUST_REQUESTS', 2000, problems),
    requestTimeoutMs: positiveNumber(env, 'REQUEST_TIMEOUT_MS', 15_000, problems),
    workers: Math.floor(positiveNumber(env, 'WORKERS', 2, problems)),
    problems,
  };
}

/** The message of a must-level check whose prerequisite is missing. */
export function missingPrerequisite(variable: string, requirementId?: string): string {
  const purpose = VARIABLE_PURPOSE[variable] ? ` (${VARIABLE_PURPOSE[variable]})` : '';
  return `${requirementId ? `${requirementId}: ` : ''}prerequisite missing: set ${variable}${purpose}; this check cannot run without it`;
}
