/**
 * Settings of the load checks: a view of `settings/` (the one home of every variable, its rule
 * and its default; `settings/load.ts` defines the `LOAD_*` ones). Kept as the load checks' import
 * until they read `settings/` directly.
 */
import { readSettings, problemsOf } from '../../settings/index.ts';
import { LOAD_SETTINGS } from '../../settings/load.ts';

/** Defaults, from `settings/` (documented in the README tables generated from it). */
export const LOAD_DEFAULTS = Object.fromEntries(
  [...LOAD_SETTINGS.settings.map((s) => [s.name, s.default]), ['MAX_RETRY_AFTER_S', readSettings({}).values.MAX_RETRY_AFTER_S]],
) as Record<LoadSettingName, number>;

export type LoadSettingName = (typeof LOAD_SETTINGS.settings)[number]['name'] | 'MAX_RETRY_AFTER_S';

export interface LoadSettings {
  baseUrl?: string;
  apiKey?: string;
  rateLimitKey?: string;
  loadKey?: string;
  profile: string;
  reportsDir: string;
  durationS: number;
  connections: number;
  p99Ms: number;
  maxErrorRate: number;
  maxRequests: number;
  timeoutS: number;
  burstMax: number;
  burstConnections: number;
  maxRetryAfterS: number;
  /** Problems with the values given (a malformed number); a check reports them as failures. */
  problems: string[];
}

const NAMES: readonly string[] = [...LOAD_SETTINGS.settings.map((s) => s.name), 'MAX_RETRY_AFTER_S'];

/** Reads the load settings from `env` (default `process.env`). Never throws. */
export function loadSettings(env: NodeJS.ProcessEnv = process.env): LoadSettings {
  const { values: v, problems } = readSettings(env);
  return {
    baseUrl: v.BASE_URL,
    apiKey: v.API_KEY,
    rateLimitKey: v.RATE_LIMIT_KEY,
    loadKey: v.LOAD_KEY,
    profile: v.CONFORMANCE_PROFILE,
    reportsDir: v.REPORTS_DIR,
    durationS: v.LOAD_DURATION_S,
    connections: v.LOAD_CONNECTIONS,
    p99Ms: v.LOAD_P99_MS,
    maxErrorRate: v.LOAD_MAX_ERROR_RATE,
    maxRequests: v.LOAD_MAX_REQUESTS,
    timeoutS: v.LOAD_TIMEOUT_S,
    burstMax: v.LOAD_BURST_MAX,
    burstConnections: v.LOAD_BURST_CONNECTIONS,
    maxRetryAfterS: v.MAX_RETRY_AFTER_S,
    problems: problemsOf(problems, NAMES),
  };
}

/** Placeholders used in every message instead of a key. */
export const KEY_PLACEHOLDERS = {
  apiKey: '<API_KEY>',
  rateLimitKey: '<RATE_LIMIT_KEY>',
  loadKey: '<LOAD_KEY>',
} as const;
