/**
 * The conformance run's environment as the suites see it (docs/architecture.md, "From a variable
 * to a request"). A view of `settings/` (the one home of every variable and its rule): pure, reads
 * the record it is given.
 */
import { readSettings, problemsOf } from '../../settings/index.ts';
import { RUN_SETTINGS } from '../../settings/run.ts';
import type { Plan } from '../../core/plans.ts';

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
  /** The capacity load's key (`LOAD_KEY`): the suites only redact it. */
  loadKey?: string;
  profile: Profile;
  missingPetId?: string;
  /** Longest wait for `Retry-After` or a window reset (`MAX_RETRY_AFTER_S`, default 120). */
  maxRetryAfterS: number;
  /** Most requests the 429 checks send to drive a key to its limit (`MAX_EXHAUST_REQUESTS`, default 2000). */
  maxExhaustRequests: number;
  /** Per-request deadline, wall clock from sending to the last byte (`REQUEST_TIMEOUT_MS`, default 15000). */
  requestTimeoutMs: number;
  /** The user's explicit opt-in (`INSECURE_TLS`) to an unverified TLS certificate; otherwise every request verifies it. */
  insecureTls: boolean;
  /** Parallel workers (`WORKERS`, default 2): the pacer keeps this many requests (+1) in reserve. */
  workers: number;
  /** Problems with the run's variables themselves (bad plan name, bad profile, bad number). */
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

const RUN_NAMES = RUN_SETTINGS.settings.map((s) => s.name);

/** The suites' view of the run's settings (`settings/run.ts`), read from `env`. Never throws. */
export function readEnv(env: Record<string, string | undefined> = process.env): ConformanceEnv {
  const { values: v, problems } = readSettings(env);
  return {
    baseUrl: v.BASE_URL,
    apiUrl: v.API_URL,
    apiKey: v.API_KEY,
    apiPlan: v.API_PLAN as Plan | undefined,
    rateLimitKey: v.RATE_LIMIT_KEY,
    rateLimitPlan: v.RATE_LIMIT_PLAN as Plan | undefined,
    loadKey: v.LOAD_KEY,
    profile: v.CONFORMANCE_PROFILE as Profile,
    missingPetId: v.MISSING_PET_ID,
    maxRetryAfterS: v.MAX_RETRY_AFTER_S,
    maxExhaustRequests: v.MAX_EXHAUST_REQUESTS,
    requestTimeoutMs: v.REQUEST_TIMEOUT_MS,
    insecureTls: v.INSECURE_TLS === true,
    workers: v.WORKERS,
    problems: problemsOf(problems, RUN_NAMES),
  };
}
