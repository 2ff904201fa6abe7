/**
 * The environment of `npm run certify` (public contract of issue 3, documented in certify/README.md):
 * parsing and validation, pure. A usage error lists every problem at once and never prints a key.
 */

export const PLANS = ['free', 'pro', 'business', 'enterprise'] as const;
export type PlanName = (typeof PLANS)[number];
export const PROFILES = ['full', 'readonly'] as const;
export type Profile = (typeof PROFILES)[number];
export const PHASES = ['functional', 'rate-limit', 'load'] as const;
export type Phase = (typeof PHASES)[number];

/** Variables certify reads itself (beside the load variables it passes through, see LOAD_VARIABLES). */
export const VARIABLES: readonly { name: string; description: string }[] = [
  { name: 'BASE_URL', description: 'inventory base address, ends in /v1; unset: certify the bundled reference server' },
  { name: 'API_URL', description: 'quickstart base address (the suite posts to ${API_URL}/messages); without it the messages checks fail naming it' },
  { name: 'API_KEY', description: 'a valid key; required with BASE_URL' },
  { name: 'API_PLAN', description: 'free | pro | business | enterprise; when given, X-RateLimit-Limit must match the plan' },
  { name: 'RATE_LIMIT_KEY', description: 'a key the 429 and overload checks may exhaust; without it the 429 checks run last, on API_KEY' },
  { name: 'RATE_LIMIT_PLAN', description: 'plan of RATE_LIMIT_KEY (free | pro | business | enterprise)' },
  { name: 'LOAD_KEY', description: 'a key whose limits load will not reach (capacity check); without it the capacity check fails, naming LOAD_KEY' },
  { name: 'CONFORMANCE_PROFILE', description: 'full (default) | readonly: no state change with a valid key, no 429 probe, no load' },
  { name: 'MISSING_PET_ID', description: 'an int64 pet id that does not exist on the target (for the 404 checks)' },
  { name: 'REPORTS_DIR', description: 'where reports go (default: reports); certify deletes only its own report files there at start' },
  { name: 'WORKERS', description: 'Playwright workers per phase (default 2); the suites keep WORKERS + 1 requests in reserve when pacing' },
  { name: 'MAX_RETRY_AFTER_S', description: 'longest Retry-After (seconds) the suite will wait; a longer one fails the check instead of stalling the run' },
  { name: 'PHASE_TIMEOUT_S', description: 'hard limit on each phase (default 900); a phase over it is stopped and its unfinished checks fail' },
];

/** Load variables (issue 5), owned by suites/load; certify passes them through and lists them in --help. */
export const LOAD_VARIABLE_PREFIX = 'LOAD_';

export interface CertifyConfig {
  /** Undefined: start the bundled reference server. */
  baseUrl?: string;
  apiUrl?: string;
  profile: Profile;
  reportsDir: string;
  workers?: string;
  phaseTimeoutS: number;
  /** Phases this profile runs, in order. */
  phases: Phase[];
  /** Notes printed before the run (never containing a key). */
  notes: string[];
}

export type ParseResult = { ok: true; config: CertifyConfig } | { ok: false; errors: string[] };

type Env = Record<string, string | undefined>;

function value(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function checkUrl(name: string, raw: string, errors: string[]): URL | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    errors.push(`${name} must be an absolute http(s) URL, got "${raw}"`);
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    errors.push(`${name} must use http or https, got "${url.protocol}"`);
    return undefined;
  }
  if (url.username || url.password) errors.push(`${name} must not carry credentials; pass the key in API_KEY`);
  if (url.search || url.hash) errors.push(`${name} must not have a query or fragment, got "${raw}"`);
  return url;
}

/** Keys travel in an HTTP header: visible ASCII only, no spaces. */
function checkKey(name: string, raw: string | undefined, errors: string[]): void {
  if (raw === undefined) return;
  if (!/^[\x21-\x7e]+$/.test(raw)) errors.push(`${name} must be visible ASCII without spaces (it is sent as "Authorization: Bearer <key>")`);
}

function checkPlan(name: string, raw: string | undefined, errors: string[]): void {
  if (raw === undefined) return;
  if (!(PLANS as readonly string[]).includes(raw.toLowerCase())) errors.push(`${name} must be one of ${PLANS.join(', ')}, got "${raw}"`);
}

const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;

/** Parses and validates the environment. */
export function parseEnv(env: Env): ParseResult {
  const errors: string[] = [];
  const notes: string[] = [];

  const baseUrlRaw = value(env, 'BASE_URL');
  const apiUrlRaw = value(env, 'API_URL');
  const apiKey = value(env, 'API_KEY');
  const rateLimitKey = value(env, 'RATE_LIMIT_KEY');
  const loadKey = value(env, 'LOAD_KEY');

  let baseUrl: string | undefined;
  let apiUrl: string | undefined;
  if (baseUrlRaw !== undefined) {
    const url = checkUrl('BASE_URL', baseUrlRaw, errors);
    if (url) {
      baseUrl = baseUrlRaw.replace(/\/+$/, '');
      if (!/\/v1$/.test(url.pathname.replace(/\/+$/, ''))) {
        notes.push(`BASE_URL does not end in /v1 (the spec's version segment); the versioning checks will judge it`);
      }
    }
    if (apiKey === undefined) {
      errors.push('API_KEY is required when BASE_URL is set (a valid key of the target; it is never written to any report)');
    }
    if (apiUrlRaw === undefined) notes.push('API_URL is not set: the quickstart messages checks will fail, naming API_URL');
    if (rateLimitKey === undefined) notes.push('RATE_LIMIT_KEY is not set: the 429 checks run last, on API_KEY');
    if (loadKey === undefined) notes.push('LOAD_KEY is not set: the load capacity check cannot run and fails, naming LOAD_KEY');
  } else {
    const stray = (['API_URL', 'API_KEY', 'RATE_LIMIT_KEY', 'LOAD_KEY'] as const).filter((n) => value(env, n) !== undefined);
    if (stray.length) {
      errors.push(`${stray.join(', ')} ${stray.length > 1 ? 'need' : 'needs'} BASE_URL; set BASE_URL to certify that target, or unset ${stray.length > 1 ? 'them' : 'it'} to certify the bundled reference server`);
    }
  }
  if (apiUrlRaw !== undefined) {
    const url = checkUrl('API_URL', apiUrlRaw, errors);
    if (url) apiUrl = apiUrlRaw.replace(/\/+$/, '');
  }

  checkKey('API_KEY', apiKey, errors);
  checkKey('RATE_LIMIT_KEY', rateLimitKey, errors);
  checkKey('LOAD_KEY', loadKey, errors);
  checkPlan('API_PLAN', value(env, 'API_PLAN'), errors);
  checkPlan('RATE_LIMIT_PLAN', value(env, 'RATE_LIMIT_PLAN'), errors);
  if (value(env, 'RATE_LIMIT_PLAN') !== undefined && rateLimitKey === undefined && baseUrlRaw !== undefined) {
    errors.push('RATE_LIMIT_PLAN is set but RATE_LIMIT_KEY is not');
  }
  if (rateLimitKey !== undefined && apiKey !== undefined && rateLimitKey === apiKey) {
    notes.push('RATE_LIMIT_KEY equals API_KEY: the 429 checks exhaust the same key the other checks use');
  }

  const profileRaw = (value(env, 'CONFORMANCE_PROFILE') ?? 'full').toLowerCase();
  if (!(PROFILES as readonly string[]).includes(profileRaw)) {
    errors.push(`CONFORMANCE_PROFILE must be one of ${PROFILES.join(', ')}, got "${value(env, 'CONFORMANCE_PROFILE')}"`);
  }
  const profile = profileRaw as Profile;

  const missing = value(env, 'MISSING_PET_ID');
  if (missing !== undefined) {
    if (!/^-?\d+$/.test(missing) || BigInt(missing) > INT64_MAX || BigInt(missing) < INT64_MIN) {
      errors.push(`MISSING_PET_ID must be an int64 integer, got "${missing}"`);
    }
  }

  const workers = value(env, 'WORKERS');
  if (workers !== undefined && !/^[1-9]\d*$/.test(workers)) {
    errors.push(`WORKERS must be a positive integer (the suites keep that many requests in reserve when pacing), got "${workers}"`);
  }
  const maxRetryAfter = value(env, 'MAX_RETRY_AFTER_S');
  if (maxRetryAfter !== undefined && !/^[1-9]\d*$/.test(maxRetryAfter)) {
    errors.push(`MAX_RETRY_AFTER_S must be a positive integer (seconds), got "${maxRetryAfter}"`);
  }
  const phaseTimeoutRaw = value(env, 'PHASE_TIMEOUT_S') ?? '900';
  if (!/^[1-9]\d*$/.test(phaseTimeoutRaw)) errors.push(`PHASE_TIMEOUT_S must be a positive integer (seconds), got "${phaseTimeoutRaw}"`);

  const reportsDir = value(env, 'REPORTS_DIR') ?? 'reports';

  if (errors.length) return { ok: false, errors };
  const phases: Phase[] = profile === 'readonly' ? ['functional'] : [...PHASES];
  return {
    ok: true,
    config: {
      ...(baseUrl ? { baseUrl } : {}),
      ...(apiUrl ? { apiUrl } : {}),
      profile,
      reportsDir,
      ...(workers ? { workers } : {}),
      phaseTimeoutS: Number(phaseTimeoutRaw),
      phases,
      notes,
    },
  };
}
