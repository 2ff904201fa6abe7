import type { FaultHooks } from './proxy.ts';
import type { RateLimitStore } from '../reference-server/rate-limit/store.ts';
import type { ReferenceTarget } from '../certify/reference-target.ts';

/**
 * What a fault of the catalogue is (`faults/catalogue/<area>.ts`): a realistic deviation a vendor
 * or a regressed staging deployment could ship, and the ledger ids whose checks must fail when it
 * is injected. A fault is either proxy hooks (applied by `startFaultProxy` in front of any
 * upstream) or, for behaviour a proxy cannot fake (limiter races), a `RateLimitStore` for
 * `startReferenceServer`.
 */
export interface FaultDefinition {
  /** Unique, kebab-case; selects the fault (`npx tsx faults/cli.ts <name>`). */
  name: string;
  description: string;
  /** Ledger ids (`suites/requirements.yaml`, must-level, not excluded) that must be among the failing requirements. */
  expect: string[];
  /** Proxy hooks, created fresh for each proxy (state lives in the closure). */
  proxy?: () => FaultHooks;
  /** A limiter store for the reference server, for faults a proxy cannot fake. */
  store?: () => RateLimitStore;
  /** A whole deployment in place of the bundled server (e.g. several instances), for faults neither a proxy nor a store can fake. */
  upstream?: () => Promise<ReferenceTarget>;
  /** Certify settings this fault's run needs (e.g. a shorter `REQUEST_TIMEOUT_MS` for a hang). */
  env?: Record<string, string>;
  /** The path the faulty deployment serves the inventory under, in place of `/v1`: `BASE_URL` points there. */
  basePath?: string;
  /**
   * A further variant of a deviation whose requirement other faults already prove caught: kept
   * for vendors and run by `MATRIX_EXTENDED=1` or `faults/cli.ts all-faults`, left out of the
   * default `npm test` matrix to keep it within CI time.
   */
  extended?: boolean;
  /**
   * The fault misleads clients about `Retry-After` (a wrong value, or a refusal after an honest
   * wait): the matrix then tolerates requests the proxy counts as early, and bans. For every other
   * fault, and every variant, the run must send nothing before a pending `Retry-After` and earn no ban.
   */
  misleadsRetryAfter?: boolean;
  /**
   * The fault misstates `X-RateLimit-Remaining` (instances that each count the key on their own):
   * a burst sized by the Remaining one instance shows meets, on another with less room, several
   * 429s while its requests are still in flight, and that server counts them as early retries and
   * bans. The matrix then tolerates bans; requests sent while a 429 is pending must still be none.
   */
  misleadsRemaining?: boolean;
}

/** A fault with its area: the catalogue file it lives in (`faults/catalogue/auth.ts` → `auth`). */
export interface Fault extends FaultDefinition {
  area: string;
}
