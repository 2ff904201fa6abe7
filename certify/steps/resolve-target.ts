/**
 * Step "resolve the target": `BASE_URL` (an external deployment) or the bundled reference server,
 * started in-process on 127.0.0.1. Gives the environment every phase inherits and the target's
 * description for the report (which keys were given, never their values).
 */
import { readSettings } from '../../settings/index.ts';
import type { CertifyConfig } from '../env.ts';
import { startReferenceTarget, type ReferenceTarget } from '../reference-target.ts';

type Env = Record<string, string | undefined>;

export interface TargetDescription {
  kind: 'reference' | 'external';
  baseUrl: string | undefined;
  apiUrl: string | null;
  apiPlan: string | null;
  rateLimitKey: 'given' | 'not given';
  rateLimitPlan: string | null;
  loadKey: 'given' | 'not given';
  referenceSettings?: ReferenceTarget['settings'];
  profile: string;
  /** `verified`, `not verified (INSECURE_TLS)` (the user's explicit opt-in) or `none (http)`. */
  tls: 'verified' | 'not verified (INSECURE_TLS)' | 'none (http)';
}

export interface ResolvedTarget {
  /** The run's environment with the target's variables (keys included: never print it). */
  env: Env;
  reference?: ReferenceTarget;
  description: TargetDescription;
  /** Stops the bundled server, if one was started. */
  close(): Promise<void>;
}

/** What the report says about the target (no key, only whether each was given). */
export function describeTarget(profile: string, env: Env, reference?: ReferenceTarget): TargetDescription {
  return {
    kind: reference ? 'reference' : 'external',
    baseUrl: env.BASE_URL,
    apiUrl: env.API_URL ?? null,
    apiPlan: env.API_PLAN?.toLowerCase() ?? null,
    rateLimitKey: env.RATE_LIMIT_KEY ? 'given' : 'not given',
    rateLimitPlan: env.RATE_LIMIT_PLAN?.toLowerCase() ?? null,
    loadKey: env.LOAD_KEY ? 'given' : 'not given',
    ...(reference ? { referenceSettings: reference.settings } : {}),
    profile,
    // What every client really did: each sets verification explicitly, off only by INSECURE_TLS.
    tls: ![env.BASE_URL, env.API_URL].some((u) => u?.startsWith('https:'))
      ? 'none (http)'
      : readSettings(env).values.INSECURE_TLS
        ? 'not verified (INSECURE_TLS)'
        : 'verified',
  };
}

/** Resolves the target; `start` starts the bundled reference server (injectable for tests). Throws if it cannot start. */
export async function resolveTarget(
  config: Pick<CertifyConfig, 'baseUrl' | 'apiUrl' | 'profile'>,
  env: Env,
  start: () => Promise<ReferenceTarget> = () => startReferenceTarget(),
): Promise<ResolvedTarget> {
  if (config.baseUrl) {
    const targetEnv = { ...env, BASE_URL: config.baseUrl, ...(config.apiUrl ? { API_URL: config.apiUrl } : {}) };
    return { env: targetEnv, description: describeTarget(config.profile, targetEnv), close: async () => {} };
  }
  const reference = await start();
  const targetEnv = { ...env, ...reference.env };
  return { env: targetEnv, reference, description: describeTarget(config.profile, targetEnv, reference), close: () => reference.close() };
}
