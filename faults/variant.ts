import type { FaultHooks } from './proxy.ts';
import type { RateLimitStore } from '../reference-server/rate-limit/store.ts';
import type { ReferenceTarget } from '../certify/reference-target.ts';

/**
 * Conformant variants: servers that make other legitimate choices where the spec (or HTTP) leaves
 * the decision open. Certify must PASS each one; a failure is an over-assertion of the suite.
 * Each variant lists the choices it makes, with the clause that leaves them open.
 */
export interface Variant {
  name: string;
  description: string;
  /** The open decisions this variant takes differently from the reference server, and why each is allowed. */
  choices: string[];
  proxy?: () => FaultHooks;
  store?: () => RateLimitStore;
  /** Starts the deployment under test in place of the bundled reference server (the proxy goes in front of it). */
  upstream?: () => Promise<ReferenceTarget>;
  /**
   * Run only these certify phases (default: all, through `cli/bin.mjs certify`). The description says
   * why those phases are the ones the variant's choices can affect.
   */
  phases?: string[];
  /** The proxy sends `Connection: close` on every response and closes the connection after it. */
  connectionClose?: boolean;
}
