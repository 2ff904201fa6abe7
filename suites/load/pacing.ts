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
import { KeyPacer, type PaceMode } from '../pacing/pacer.ts';
import { PacingNotCertified } from '../pacing/client.ts';

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
  // Both pacers throw `PacingNotCertified` (suites/pacing/client.ts).
  return error instanceof PacingNotCertified || (error instanceof Error && error.name === 'PacingNotCertified');
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

/**
 * A pacer for this process: one `KeyPacer` (suites/pacing/pacer.ts, the logic the run-wide
 * coordinator runs) per key label, asked in turn by one acquirer at a time per key. Nothing is
 * granted while a 429's Retry-After is pending; a wait beyond `maxWaitMs` throws `PacingNotCertified`.
 */
export function processPacer(maxWaitMs: number): LoadPacer {
  const keys = new Map<string, { pacer: KeyPacer; turn: Promise<void>; wake?: () => void }>();
  return {
    async acquire(keyLabel, { mode, count }) {
      let k = keys.get(keyLabel);
      if (!k) keys.set(keyLabel, (k = { pacer: new KeyPacer({ label: keyLabel, reserve: 2, maxWaitMs }), turn: Promise.resolve() }));
      const key = k;
      const before = key.turn;
      let done!: () => void;
      key.turn = new Promise<void>((resolve) => (done = resolve));
      await before;
      let granted: number;
      try {
        for (;;) {
          const d = key.pacer.decide(Date.now(), { mode, count });
          if (d.kind === 'not-certified') throw new PacingNotCertified(d.reason);
          if (d.kind === 'grant') {
            key.pacer.granted(Date.now(), d.count);
            granted = d.count;
            break;
          }
          // A timed wait, or (requests in flight) until a response or a release on this key.
          await new Promise<void>((resolve) => {
            const timer = d.waitMs !== undefined ? setTimeout(() => key.wake?.(), Math.max(1, d.waitMs)) : undefined;
            key.wake = () => {
              if (timer) clearTimeout(timer);
              key.wake = undefined;
              resolve();
            };
          });
        }
      } finally {
        done();
      }
      let open = granted;
      return {
        granted,
        observe(r) {
          if (open > 0) open--;
          key.pacer.observe({ status: r.status, headers: r.headers, receivedAtMs: r.receivedAt, mode });
          key.wake?.();
        },
        async release() {
          key.pacer.release(open);
          open = 0;
          key.wake?.();
        },
      };
    },
  };
}
