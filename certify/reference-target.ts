/**
 * The bundled reference server as a certification target: started in-process on a free port with
 * short rate-limit windows, so that a whole certify (including the 429 waits) takes seconds.
 * `npm run certify` uses it when `BASE_URL` is unset; the fault meta-test reuses it (it may put a
 * proxy in front and replace `BASE_URL`/`API_URL` in `env`).
 *
 * Spec: "Limits" (plans, 429, ban) and "Authentication"; contract: docs/architecture.md.
 */
import { startReferenceServer, type ReferenceServerOptions, type RunningReferenceServer } from '../reference-server/app.ts';

export type TargetPlan = 'pro' | 'business';

export interface ReferenceTargetOptions {
  /** Length of the "per minute" window (default 5000 ms). The 429 checks wait at most about this long. */
  minuteWindowMs?: number;
  /** Length of a ban (default 2000 ms). */
  banMs?: number;
  /** Plan of the key given as `API_KEY` (default `business`: most headroom for the functional checks). */
  apiPlan?: TargetPlan;
  /** Any further option of `startReferenceServer` (e.g. a fault-injecting `store`); these win over the above. */
  server?: ReferenceServerOptions;
}

/** The variables a conformance run reads, as certify passes them to the Playwright phases. */
export interface TargetEnv extends Record<string, string> {
  BASE_URL: string;
  API_URL: string;
  API_KEY: string;
  API_PLAN: string;
  RATE_LIMIT_KEY: string;
  RATE_LIMIT_PLAN: string;
  LOAD_KEY: string;
}

export interface ReferenceTarget {
  /** `BASE_URL`, `API_URL`, `API_KEY` + `API_PLAN`, `RATE_LIMIT_KEY` + `RATE_LIMIT_PLAN=free`, `LOAD_KEY`. Holds keys: never print it. */
  env: TargetEnv;
  server: RunningReferenceServer;
  /** The windows in effect (for progress lines and the report; no keys). */
  settings: { minuteWindowMs: number; banMs: number; apiPlan: TargetPlan };
  close(): Promise<void>;
}

export const DEFAULT_REFERENCE_TARGET = { minuteWindowMs: 4_000, banMs: 2_000, apiPlan: 'business' as TargetPlan };

/**
 * The variables that certify a running reference deployment (one process or several): `API_KEY` of
 * `apiPlan`, the free key to exhaust, the load key. Holds keys: never print it.
 */
export function targetEnvOf(server: Pick<RunningReferenceServer, 'baseUrl' | 'apiUrl' | 'keys'>, apiPlan: TargetPlan): TargetEnv {
  return {
    BASE_URL: server.baseUrl,
    API_URL: server.apiUrl,
    API_KEY: server.keys[apiPlan],
    API_PLAN: apiPlan,
    RATE_LIMIT_KEY: server.keys.free,
    RATE_LIMIT_PLAN: 'free',
    LOAD_KEY: server.keys.load,
  };
}

/** Starts the reference server on 127.0.0.1, port 0, and returns the environment that certifies it. */
export async function startReferenceTarget(options: ReferenceTargetOptions = {}): Promise<ReferenceTarget> {
  const minuteWindowMs = options.minuteWindowMs ?? DEFAULT_REFERENCE_TARGET.minuteWindowMs;
  const banMs = options.banMs ?? DEFAULT_REFERENCE_TARGET.banMs;
  const apiPlan = options.apiPlan ?? DEFAULT_REFERENCE_TARGET.apiPlan;
  const server = await startReferenceServer({
    port: 0,
    host: '127.0.0.1',
    minuteWindowMs,
    banMs,
    ...options.server,
  });
  return referenceTargetOf(server, { minuteWindowMs, banMs, apiPlan });
}

/**
 * The target around a running reference deployment (one process or several): the variables that
 * certify it, its settings, and a `close()` that stops it once, then runs `after` (its own
 * redis-server, say). Holds keys in `env`: never print it.
 */
export function referenceTargetOf(
  server: ReferenceTarget['server'],
  settings: ReferenceTarget['settings'],
  after?: () => Promise<void>,
): ReferenceTarget {
  let closed = false;
  return {
    env: targetEnvOf(server, settings.apiPlan),
    server,
    settings,
    async close() {
      if (closed) return;
      closed = true;
      await server.close();
      await after?.();
    },
  };
}
