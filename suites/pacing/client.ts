/**
 * The side of the run's pacer that senders use (workers, phases, load checks): ask the
 * coordinator (`coordinator.ts`, reached at `CONFORMANCE_PACER_URL`) for a grant on a key label
 * before sending, report every response to the lease, release what was not sent. Only the label
 * and the rate-limit headers (`X-RateLimit-*`, `Retry-After`, `Date`) leave this process.
 */
import http from 'node:http';
import type { HeaderSource } from '../lib/headers.ts';
import type { ObserveResult, PaceMode } from './pacer.ts';

/** Key labels that cross the coordinator; never keys. */
export type KeyLabel = '<API_KEY>' | '<RATE_LIMIT_KEY>' | '<LOAD_KEY>' | '<anonymous>' | (string & {});

export interface AcquireOptions {
  mode?: PaceMode;
  /** Requests wanted at once (default 1). The grant may be smaller (at least 1). */
  count?: number;
  /** The plan's requests per minute, used only when the server's headers give no usable figure. */
  nominalPerMinute?: number;
  /** `exhaust`: never past Remaining in one grant; the request past the limit comes alone (see `GrantRequest`). */
  withinRemaining?: boolean;
  /** A restore of what the run changed: it may go on a key closed for the checks, once its holds have passed (`GrantRequest.restore`). */
  restore?: boolean;
  /** The lease ends by itself after this long (default 120 s): a process that died does not hold the key. */
  leaseTtlMs?: number;
}

export interface PacingResponse {
  status: number;
  headers: HeaderSource;
  /** Local clock when the response arrived. */
  receivedAtMs: number;
  /**
   * The service that answered (the origin of its address): the inventory and the quickstart have
   * addresses of their own (spec, Overview) and may count a key in limiters of their own.
   */
  service?: string;
}

export interface Lease {
  /** Requests this lease allows (1 ≤ granted ≤ count). */
  readonly granted: number;
  /** Why fewer than asked were granted, when the reason is not simply Remaining (see `Decision`). */
  readonly limitedBy?: string;
  /** Reports one response; call once per request sent under this lease. */
  observe(response: PacingResponse): Promise<ObserveResult>;
  /** Ends the lease: its requests not yet observed were not sent, or got no answer. */
  release(): Promise<void>;
}

export interface PetLease {
  id: string;
  /** When the pet was last released (0: never leased in this run). A list read after it shows its restored quantity. */
  freedAtMs: number;
  /** `retire`: its restore was not verified; it is never handed out again. */
  release(retire?: boolean): Promise<void>;
}

export interface PacingClient {
  readonly url: string;
  /** Waits until the coordinator grants requests on `label`. Throws `PacingNotCertified` for a wait beyond `MAX_RETRY_AFTER_S`. */
  acquire(label: KeyLabel, options?: AcquireOptions): Promise<Lease>;
  /**
   * Waits until one of `ids` is leased to this holder alone; `signal` ends the wait (the promise
   * rejects with its reason, and the coordinator drops the claim).
   */
  acquirePet(ids: readonly string[], holder: string, ttlMs?: number, signal?: AbortSignal): Promise<PetLease>;
  /**
   * The value of `name` for this run: computed by the first caller (`compute`), read back by every
   * other caller, in any process, even after a worker restart. Kept in the coordinator's memory only.
   * A failed `compute` lets the next caller try.
   */
  once<T>(name: string, compute: () => Promise<T>, ttlMs?: number): Promise<T>;
  /**
   * A place in the run's message budget (`MAX_MESSAGES`, suites/pacing/message-budget.ts) for one
   * POST /messages by `by`; `queues`: false for a request the spec says the server refuses. Not
   * granted: the budget is spent, nothing may be sent (`leave`: or it keeps no more than that many
   * places for later checks). `settle` says what became of it.
   */
  takeMessage?(by: string, queues: boolean, leave?: number): Promise<MessagePlace>;
}

/** A place in the message budget: `settle(queued)` once the answer (or its absence) is known. */
export interface MessagePlace {
  granted: boolean;
  limit: number;
  settle(queued: boolean): Promise<void>;
}

/** The wait would exceed `MAX_RETRY_AFTER_S`: the requirement is not certified (never a failure of the server). */
export class PacingNotCertified extends Error {
  readonly reason: string;
  constructor(reason: string) {
    super(reason);
    this.name = 'PacingNotCertified';
    this.reason = reason;
  }
}

/**
 * The run's coordinator could not be reached, or what answered was not the run's pacer (a status
 * other than 200, a body that is not its JSON): a limit of the harness, never the server's
 * failure. When the call asked for a grant, nothing was sent on the key it was for.
 */
export class PacerUnreachable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PacerUnreachable';
  }
}

/**
 * `client` with every call a check makes of the coordinator, beyond asking for a grant (whose
 * caller names the request: `acquirerOf` in suites/fixtures/pipeline/pacer.ts), handed to `unreachable` when the
 * coordinator cannot be reached: a lease's answers, a pet lease, a record made once per run.
 * `unreachable` throws (the check is not certified). Ending a lease whose coordinator is gone is
 * nothing to do: the coordinator drops it when its time to live ends.
 */
export function guardedPacing(client: PacingClient, unreachable: (what: string, error: PacerUnreachable) => never): PacingClient {
  const guard = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (e) {
      if (e instanceof PacerUnreachable) unreachable(what, e);
      throw e;
    }
  };
  const quietly = async (call: () => Promise<void>): Promise<void> => {
    try {
      await call();
    } catch (e) {
      if (!(e instanceof PacerUnreachable)) throw e;
    }
  };
  return {
    url: client.url,
    async acquire(label, options) {
      const lease = await client.acquire(label, options);
      return {
        granted: lease.granted,
        ...(lease.limitedBy !== undefined ? { limitedBy: lease.limitedBy } : {}),
        observe: (r) => guard(`the answer on ${label}`, () => lease.observe(r)),
        release: () => quietly(() => lease.release()),
      };
    },
    async acquirePet(ids, holder, ttlMs, signal) {
      const lease = await guard('a lease on a pet', () => client.acquirePet(ids, holder, ttlMs, signal));
      return { id: lease.id, freedAtMs: lease.freedAtMs, release: (retire) => quietly(() => lease.release(retire)) };
    },
    once: (name, compute, ttlMs) => guard(`the run's record "${name}"`, () => client.once(name, compute, ttlMs)),
    ...(client.takeMessage
      ? {
          async takeMessage(by: string, queues: boolean, leave?: number) {
            const place = await guard('a place in the message budget', () => client.takeMessage!(by, queues, leave));
            return { ...place, settle: (queued: boolean) => quietly(() => place.settle(queued)) };
          },
        }
      : {}),
  };
}

const FORWARDED = new Set(['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after', 'date']);

/** Only the headers the pacer reads, as `[name, value]` pairs. */
export function pacingHeaders(headers: HeaderSource): [string, string][] {
  const out: [string, string][] = [];
  const push = (name: string, value: unknown) => {
    if (value === undefined || !FORWARDED.has(name.toLowerCase())) return;
    for (const v of Array.isArray(value) ? value : [value]) out.push([name, String(v)]);
  };
  if (Array.isArray(headers)) for (const h of headers as ReadonlyArray<{ name: string; value: string }>) push(h.name, h.value);
  else for (const [name, value] of Object.entries(headers)) push(name, value);
  return out;
}

/**
 * Connections to the run's coordinator, kept alive. One idle for 20 s is closed by this side, well
 * before the coordinator's own idle timeout (60 s), so that a call never goes out on a connection
 * the coordinator is closing just then (RFC 9112 §9.6).
 */
const agent = new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 20_000 });

function post<T>(base: string, path: string, body: object, signal?: AbortSignal): Promise<T> {
  const data = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      new URL(path, base),
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
        ...(signal ? { signal } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        const notThePacer = (what: string) =>
          new PacerUnreachable(`pacer coordinator at ${base} did not answer as the run's pacer (${path}: ${what})`);
        res.on('end', () => {
          let parsed: (T & { error?: string }) | undefined;
          try {
            parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as T & { error?: string };
          } catch (e) {
            return reject(notThePacer((e as Error).message));
          }
          if (res.statusCode !== 200) reject(notThePacer(`${res.statusCode} ${String(parsed?.error ?? '').slice(0, 200)}`.trim()));
          else if (parsed === null || typeof parsed !== 'object') reject(notThePacer('not a JSON object'));
          else resolve(parsed);
        });
        res.on('error', (e) => reject(notThePacer(e.message)));
      },
    );
    req.on('error', (e) => {
      if (signal?.aborted) reject(signal.reason);
      else reject(new PacerUnreachable(`pacer coordinator at ${base} unreachable (${path}): ${e.message}`));
    });
    req.end(data);
  });
}

/**
 * A client of the run's coordinator. Without a URL it throws: a sender that cannot reach the one
 * owner of the keys' state must not send (run through `npm run certify` or the root Playwright config).
 */
export function pacingClient(url: string | undefined = process.env.CONFORMANCE_PACER_URL): PacingClient {
  if (!url) {
    throw new Error(
      'CONFORMANCE_PACER_URL is not set: the run-wide pacer is not running. Run the suites through ' +
        '`npm run certify` or `npx playwright test` with the root playwright.config.ts (its global setup starts it).',
    );
  }
  return {
    url,
    async acquire(label, options = {}) {
      const answer = await post<{ lease?: string; granted?: number; limitedBy?: string; notCertified?: string }>(url, '/acquire', {
        label,
        mode: options.mode ?? 'paced',
        count: options.count ?? 1,
        nominalPerMinute: options.nominalPerMinute,
        withinRemaining: options.withinRemaining,
        ...(options.restore ? { restore: true } : {}),
        leaseTtlMs: options.leaseTtlMs,
      });
      if (answer.notCertified !== undefined) throw new PacingNotCertified(answer.notCertified);
      const id = answer.lease!;
      const granted = answer.granted ?? 1;
      let ended = false;
      let observed = 0;
      return {
        granted,
        limitedBy: answer.limitedBy,
        async observe(r) {
          const result = await post<ObserveResult>(url, '/observe', {
            lease: id,
            status: r.status,
            headers: pacingHeaders(r.headers),
            receivedAtMs: r.receivedAtMs,
            ...(r.service ? { service: r.service } : {}),
          });
          // The coordinator ends a lease once every request it granted is answered: nothing is left to release.
          if (++observed >= granted) ended = true;
          return result;
        },
        async release() {
          if (ended) return;
          ended = true;
          await post(url, '/release', { lease: id });
        },
      };
    },
    async once<T>(name: string, compute: () => Promise<T>, ttlMs?: number): Promise<T> {
      const claim = await post<{ value?: T; compute?: string }>(url, '/once/claim', { name, ttlMs });
      if (claim.compute === undefined) return claim.value as T;
      let value: T;
      try {
        value = await compute();
      } catch (e) {
        await post(url, '/once/abandon', { name, token: claim.compute }).catch(() => undefined);
        throw e;
      }
      await post(url, '/once/put', { name, token: claim.compute, value });
      // Every caller gets the same plain-JSON copy.
      return JSON.parse(JSON.stringify(value ?? null)) as T;
    },
    async takeMessage(by, queues, leave = 0) {
      const answer = await post<{ granted?: boolean; reserved?: boolean; limit?: number }>(url, '/messages/take', { by, queues, leave });
      let settled = false;
      return {
        granted: answer.granted === true,
        limit: answer.limit ?? 0,
        async settle(queued) {
          if (settled || answer.granted !== true) return;
          settled = true;
          await post(url, '/messages/settle', { by, queues, reserved: answer.reserved === true, queued });
        },
      };
    },
    async acquirePet(ids, holder, ttlMs, signal) {
      const answer = await post<{ id?: string; freedAtMs?: number; error?: string }>(url, '/pets/acquire', { ids, holder, ttlMs }, signal);
      if (answer.id === undefined) throw new Error(`pet lease: ${answer.error ?? 'refused'}`);
      const id = answer.id;
      return {
        id,
        freedAtMs: answer.freedAtMs ?? 0,
        release: (retire = false) => post<void>(url, '/pets/release', { id, holder, retire }),
      };
    },
  };
}
