/**
 * Settings of the load checks, read from the environment (README documents every one).
 * The public variables (`BASE_URL`, `API_KEY`, `RATE_LIMIT_KEY`, `LOAD_KEY`, `CONFORMANCE_PROFILE`,
 * `REPORTS_DIR`) are the conformance run's contract (docs/architecture.md); the `LOAD_*` ones and
 * `MAX_RETRY_AFTER_S` tune the load phase. Defaults are safe for a staging deployment.
 */

/** Defaults, as documented in the README. */
export const LOAD_DEFAULTS = {
  /** Seconds of sustained load per capacity run. */
  LOAD_DURATION_S: 5,
  /** Concurrent connections of a capacity run. */
  LOAD_CONNECTIONS: 10,
  /** Threshold: p99 latency of a capacity run must stay below this (ms); also the other key's latency during a burst. */
  LOAD_P99_MS: 1000,
  /** Threshold: share of failed requests (non-2xx, socket errors, timeouts) of a capacity run must stay at or below this. */
  LOAD_MAX_ERROR_RATE: 0.01,
  /** Hard cap on the requests of one capacity run. */
  LOAD_MAX_REQUESTS: 200_000,
  /** Seconds before a load request counts as a timeout. */
  LOAD_TIMEOUT_S: 10,
  /** Hard cap on the requests of the overload burst (the burst is max(3 × X-RateLimit-Limit, 500), capped here). */
  LOAD_BURST_MAX: 3000,
  /** Concurrent connections of the overload burst (at most the burst size). */
  LOAD_BURST_CONNECTIONS: 500,
  /** Longest wait (s) for a window reset or a Retry-After before the check fails instead of waiting. */
  MAX_RETRY_AFTER_S: 120,
} as const;

export type LoadSettingName = keyof typeof LOAD_DEFAULTS;

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

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

function numberSetting(
  env: NodeJS.ProcessEnv,
  name: LoadSettingName,
  problems: string[],
  check: (n: number) => boolean,
  rule: string,
): number {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return LOAD_DEFAULTS[name];
  const n = Number(raw.trim());
  if (!Number.isFinite(n) || !check(n)) {
    problems.push(`${name}="${raw}" is not ${rule}; using the default ${LOAD_DEFAULTS[name]}`);
    return LOAD_DEFAULTS[name];
  }
  return n;
}

/** Reads the load settings from `env` (default `process.env`). Never throws. */
export function loadSettings(env: NodeJS.ProcessEnv = process.env): LoadSettings {
  const problems: string[] = [];
  const positiveInt = (n: number) => Number.isInteger(n) && n >= 1;
  return {
    baseUrl: nonEmpty(env.BASE_URL),
    apiKey: nonEmpty(env.API_KEY),
    rateLimitKey: nonEmpty(env.RATE_LIMIT_KEY),
    loadKey: nonEmpty(env.LOAD_KEY),
    profile: nonEmpty(env.CONFORMANCE_PROFILE) ?? 'full',
    reportsDir: nonEmpty(env.REPORTS_DIR) ?? 'reports',
    durationS: numberSetting(env, 'LOAD_DURATION_S', problems, (n) => n > 0 && n <= 3600, 'a number of seconds in (0, 3600]'),
    connections: numberSetting(env, 'LOAD_CONNECTIONS', problems, (n) => positiveInt(n) && n <= 1000, 'an integer in [1, 1000]'),
    p99Ms: numberSetting(env, 'LOAD_P99_MS', problems, (n) => n > 0, 'a positive number of milliseconds'),
    maxErrorRate: numberSetting(env, 'LOAD_MAX_ERROR_RATE', problems, (n) => n >= 0 && n <= 1, 'a rate in [0, 1]'),
    maxRequests: numberSetting(env, 'LOAD_MAX_REQUESTS', problems, positiveInt, 'a positive integer'),
    timeoutS: numberSetting(env, 'LOAD_TIMEOUT_S', problems, (n) => positiveInt(n) && n <= 120, 'an integer in [1, 120]'),
    burstMax: numberSetting(env, 'LOAD_BURST_MAX', problems, positiveInt, 'a positive integer'),
    burstConnections: numberSetting(env, 'LOAD_BURST_CONNECTIONS', problems, (n) => positiveInt(n) && n <= 2000, 'an integer in [1, 2000]'),
    maxRetryAfterS: numberSetting(env, 'MAX_RETRY_AFTER_S', problems, (n) => n >= 0, 'a non-negative number of seconds'),
    problems,
  };
}

/** Placeholders used in every message instead of a key. */
export const KEY_PLACEHOLDERS = {
  apiKey: '<API_KEY>',
  rateLimitKey: '<RATE_LIMIT_KEY>',
  loadKey: '<LOAD_KEY>',
} as const;
