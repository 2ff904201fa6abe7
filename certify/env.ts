/**
 * The environment of `npm run certify` (documented in certify/README.md and `--help`, both from
 * `settings/`): every setting read by its one rule in `settings/`, plus the rules that tie
 * settings together (a key needs `BASE_URL`, `BASE_URL` needs `API_KEY`, …). Pure. A usage error
 * lists every problem at once and never prints a key, nor a URL that may carry one.
 */
import { redactorFor, secretsFromEnv, SECRET_VARIABLES } from '../core/secrets.ts';
import { PLANS, PROFILES, readSettings } from '../settings/index.ts';
import { PHASES, phasesOfProfile, type Phase } from './phase-list.ts';

export { PLANS, PROFILES, PHASES, type Phase };
export type PlanName = (typeof PLANS)[number];
export type Profile = (typeof PROFILES)[number];

export interface CertifyConfig {
  /** Undefined: start the bundled reference server. */
  baseUrl?: string;
  apiUrl?: string;
  profile: Profile;
  reportsDir: string;
  /** Set only when `WORKERS` is given (otherwise the Playwright config's default applies). */
  workers?: string;
  phaseTimeoutS: number;
  /** Phases this profile runs, in order. */
  phases: Phase[];
  /** Notes printed before the run (never containing a key). */
  notes: string[];
}

export type ParseResult = { ok: true; config: CertifyConfig } | { ok: false; errors: string[] };

type Env = Record<string, string | undefined>;

/**
 * A redactor for text that may quote input (a usage error, --dry-run): every key the environment
 * holds, under its own name or under any variable a config file may refer to (`*_KEY`), whatever
 * field or position the input that quoted it came from.
 */
export function inputRedactor(env: Env): (text: string) => string {
  const secrets = [...secretsFromEnv(env)];
  for (const [name, raw] of Object.entries(env)) {
    const value = raw?.trim();
    if (!/(^|_)KEY$/.test(name) || (SECRET_VARIABLES as readonly string[]).includes(name) || !value || value.length < 8) continue;
    if (!secrets.some((s) => s.value === value)) secrets.push({ name, value });
  }
  return redactorFor(secrets);
}

/**
 * `NODE_TLS_REJECT_UNAUTHORIZED=0` turns off Node's certificate check for every client that does
 * not set it itself. Every client of the run sets it, but a run started under it is refused before
 * anything is sent: a key never goes to a peer whose certificate was not verified unless the user
 * says so in this project's own words (`INSECURE_TLS`).
 */
export const TLS_ENV_REFUSAL =
  'NODE_TLS_REJECT_UNAUTHORIZED=0 is set in the environment: it would turn off TLS certificate verification, and no key is sent to an unverified peer. ' +
  'Unset it (trust a private CA with NODE_EXTRA_CA_CERTS=<ca.pem>); to certify a target whose certificate cannot be verified, opt in with INSECURE_TLS=1 instead';

const given = (env: Env, name: string) => env[name] !== undefined && env[name]!.trim() !== '';

/** Parses and validates the environment: the settings' own rules, then how they combine. */
export function parseEnv(env: Env): ParseResult {
  const { values: v, problems } = readSettings(env);
  const errors = problems.map((p) => p.message);
  const notes: string[] = [];
  if (env.NODE_TLS_REJECT_UNAUTHORIZED?.trim() === '0') errors.push(TLS_ENV_REFUSAL);

  if (given(env, 'BASE_URL')) {
    if (v.BASE_URL && !/\/v1$/.test(new URL(v.BASE_URL).pathname.replace(/\/+$/, ''))) {
      notes.push(`BASE_URL does not end in /v1 (the spec's version segment); the versioning checks will judge it`);
    }
    if (!given(env, 'API_KEY')) {
      errors.push('API_KEY is required when BASE_URL is set (a valid key of the target; it is never written to any report)');
    }
    if (!given(env, 'API_URL'))
      notes.push('API_URL is not set: the quickstart messages checks cannot run and are not certified, naming API_URL');
    if (!given(env, 'RATE_LIMIT_KEY')) notes.push('RATE_LIMIT_KEY is not set: the 429 checks run last, on API_KEY');
    if (!given(env, 'LOAD_KEY'))
      notes.push('LOAD_KEY is not set: the load capacity check cannot run and is not certified, naming LOAD_KEY');
    if (given(env, 'RATE_LIMIT_PLAN') && !given(env, 'RATE_LIMIT_KEY')) errors.push('RATE_LIMIT_PLAN is set but RATE_LIMIT_KEY is not');
  } else {
    const stray = (['API_URL', 'API_KEY', 'RATE_LIMIT_KEY', 'LOAD_KEY'] as const).filter((n) => given(env, n));
    if (stray.length) {
      errors.push(
        `${stray.join(', ')} ${stray.length > 1 ? 'need' : 'needs'} BASE_URL; set BASE_URL to certify that target, or unset ${stray.length > 1 ? 'them' : 'it'} to certify the bundled reference server`,
      );
    }
  }
  if (v.RATE_LIMIT_KEY !== undefined && v.RATE_LIMIT_KEY === v.API_KEY) {
    notes.push('RATE_LIMIT_KEY equals API_KEY: the 429 checks exhaust the same key the other checks use');
  }

  if (errors.length) return { ok: false, errors };
  const profile = v.CONFORMANCE_PROFILE as Profile;
  return {
    ok: true,
    config: {
      ...(v.BASE_URL ? { baseUrl: v.BASE_URL } : {}),
      ...(v.API_URL ? { apiUrl: v.API_URL } : {}),
      profile,
      reportsDir: v.REPORTS_DIR,
      ...(given(env, 'WORKERS') ? { workers: String(v.WORKERS) } : {}),
      phaseTimeoutS: v.PHASE_TIMEOUT_S,
      phases: phasesOfProfile(profile),
      notes,
    },
  };
}
