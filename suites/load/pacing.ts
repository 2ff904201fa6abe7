/**
 * The load checks' view of the run-wide pacer (safety rules: nothing is sent on a key while a 429
 * on it is pending, by any worker, phase or load check). Every load request is sent under a lease
 * of `acquire(keyLabel, { mode, count })` and every response goes to the lease's `observe`.
 * Only key labels (`<LOAD_KEY>`, `<RATE_LIMIT_KEY>`, `<API_KEY>`) cross this seam, never keys.
 *
 * `runPacer(client)` sends through the run-wide coordinator (suites/pacing, one owner of every
 * key's state for every worker and phase); `processPacer()` keeps the state in this process, for
 * the checks' own tests that run without a coordinator.
 */
import { Pacer, PacerWaitTooLong, type PaceMode } from '../lib/pacer.ts';

/** What a lease needs of a response. */
export interface LeaseResponse {
  status: number;
  headers: Record<string, string>;
  /** Local epoch ms when the response was complete. */
  receivedAt: number;
}

/** Permission to send `granted` requests on one key. */
export interface LoadLease {
  /** Requests this lease allows (at most the count asked for). */
  readonly granted: number;
  /** Reports one response (sent under this lease) to the pacer. */
  observe(response: LeaseResponse): void;
  /** Ends the lease once every observation has reached the pacer. */
  release(): Promise<void>;
}

/** The pacer the load checks send through. `acquire` waits until the key may be used. */
export interface LoadPacer {
  acquire(keyLabel: string, options: { mode: PaceMode; count: number }): Promise<LoadLease>;
}

/** The pacer would have to wait longer than `MAX_RETRY_AFTER_S`: the requirement is not certified. */
export function isPacerWaitTooLong(error: unknown): error is Error {
  // The coordinator's client throws `PacingNotCertified` (suites/pacing/client.ts).
  return error instanceof PacerWaitTooLong || (error instanceof Error && error.name === 'PacingNotCertified');
}

/** What the load checks use of the run-wide coordinator's client (suites/pacing/client.ts). */
export interface CoordinatorClient {
  acquire(
    label: string,
    options: { mode: PaceMode; count: number },
  ): Promise<{
    readonly granted: number;
    observe(response: { status: number; headers: Record<string, string>; receivedAtMs: number }): Promise<unknown>;
    release(): Promise<void>;
  }>;
}

/** The load checks' pacer over the run-wide coordinator's client. */
export function runPacer(client: CoordinatorClient): LoadPacer {
  return {
    async acquire(keyLabel, { mode, count }) {
      const lease = await client.acquire(keyLabel, { mode, count });
      const pending: Promise<unknown>[] = [];
      return {
        granted: lease.granted,
        observe(r) {
          pending.push(lease.observe({ status: r.status, headers: r.headers, receivedAtMs: r.receivedAt }).catch(() => undefined));
        },
        async release() {
          await Promise.all(pending);
          await lease.release();
        },
      };
    },
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

/**
 * A pacer for this process: one `Pacer` per key label, holding every request on a key until a
 * pending 429's Retry-After has passed. `maxWaitMs` bounds a wait (`PacerWaitTooLong` past it).
 */
export function processPacer(maxWaitMs: number): LoadPacer {
  const pacers = new Map<string, Pacer>();
  return {
    async acquire(keyLabel, { mode, count }) {
      let pacer = pacers.get(keyLabel);
      if (!pacer) pacers.set(keyLabel, (pacer = new Pacer({ label: keyLabel, reserve: 2, maxWaitMs })));
      const plan = pacer.plan(Date.now(), mode);
      if (plan.waitMs > 0) await sleep(plan.waitMs);
      pacer.waited(Date.now());
      let open = count;
      for (let i = 0; i < count; i++) pacer.begin();
      return {
        granted: count,
        observe(r) {
          if (open > 0) open--;
          pacer!.observe({ status: r.status, headers: r.headers, receivedAtMs: r.receivedAt });
        },
        async release() {
          for (; open > 0; open--) pacer!.abort();
        },
      };
    },
  };
}
