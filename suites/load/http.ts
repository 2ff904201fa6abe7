/**
 * Single requests and waits of the load checks (probes before and after a run). The key goes in
 * the `Authorization` header only; nothing here prints or returns it.
 */
import { sendOne, type TlsOptions } from './engine.ts';
import type { Lease, PacingClient } from '../pacing/client.ts';
import { finding, type Finding } from '../../core/finding.ts';

/** The run's coordinator as the load steps use it (suites/pacing/client.ts): a grant before sending, a pet lease before changing one. */
export type Pacer = Pick<PacingClient, 'acquire' | 'acquirePet'>;

/** A response as a lease needs it. */
export interface LeaseResponse {
  status: number;
  headers: Record<string, string>;
  /** Local epoch ms when the response was complete. */
  receivedAt: number;
}

/**
 * A lease whose observations are sent as the responses arrive and awaited on `release`, so the
 * pacer has learnt every response before the lease ends. `baseUrl`: the service the requests go to
 * (the pacer compares Remaining only between answers of one service).
 */
export function observing(
  lease: Lease,
  baseUrl: string,
): {
  granted: number;
  limitedBy?: string;
  observe(r: LeaseResponse): void;
  held(): boolean;
  release(): Promise<void>;
} {
  const service = new URL(baseUrl).origin;
  const pending: Promise<unknown>[] = [];
  /** Until when the pacer's answers said the key is held (its own 429, or a run-wide hold of the origin). */
  let heldUntilMs = 0;
  return {
    granted: lease.granted,
    limitedBy: lease.limitedBy,
    observe(r) {
      pending.push(
        lease
          .observe({ status: r.status, headers: r.headers, receivedAtMs: r.receivedAt, service })
          .then((answer) => {
            heldUntilMs = Math.max(heldUntilMs, answer.heldUntilMs ?? 0);
          })
          .catch(() => undefined),
      );
    },
    held: () => Date.now() < heldUntilMs,
    async release() {
      await Promise.all(pending);
      await lease.release();
    },
  };
}

export interface ProbeResponse {
  ok: true;
  status: number;
  /** Header names lowercased. */
  headers: Record<string, string>;
  body: string;
  /** `Date.now()` when the response was complete. */
  receivedAt: number;
  latencyMs: number;
}

export interface ProbeFailure {
  ok: false;
  /** A readable reason without any header value. */
  error: string;
  latencyMs: number;
  /** The client refused the peer's certificate: nothing was sent. */
  certificate?: boolean;
  /** A timeout judged by a process held this long from running while it waited: the runner's delay, not evidence. */
  heldMs?: number;
  /** No complete answer within the timeout (not a connection error). */
  timedOut?: boolean;
}

export interface ProbeRequest {
  method?: 'GET' | 'PATCH';
  url: string;
  authorization: string;
  body?: string;
  timeoutS: number;
  tls?: TlsOptions;
}

/**
 * Sends one request through the load engine's client (TLS verified as in `runLoad`) and reads the
 * whole body. Never throws.
 */
export async function probe(request: ProbeRequest): Promise<ProbeResponse | ProbeFailure> {
  const r = await sendOne({
    url: request.url,
    method: request.method ?? 'GET',
    authorization: request.authorization,
    body: request.body,
    timeoutS: request.timeoutS,
    tls: request.tls,
  });
  if (!r.ok)
    return {
      ok: false,
      error: r.kind === 'tls' ? `certificate refused (${r.error})` : r.error,
      latencyMs: r.latencyMs,
      certificate: r.kind === 'tls',
      ...(r.kind === 'timeout' ? { timedOut: true } : {}),
      ...(r.heldMs !== undefined ? { heldMs: r.heldMs } : {}),
    };
  return { ok: true, status: r.status, headers: r.headers, body: r.body, receivedAt: r.receivedAt, latencyMs: r.latencyMs };
}

/**
 * Requests under load without an answer in time, each judged by a process held from running while
 * it waited (`LoadFigures.heldTimeouts`): the run cannot tell a slow server from its own delay.
 */
export function heldFinding(id: string, part: string, held: number, longestHoldMs: number): Finding {
  return finding({
    id,
    part,
    level: 'not-certified',
    message: `${held === 1 ? 'a request' : 'requests'} under load got no complete answer within the request timeout, but this process was held up to ${longestHoldMs} ms from running while ${held === 1 ? 'it' : 'they'} waited: on a runner this busy the run cannot tell a slow server from its own delay`,
    expected: 'every request answered, judged by a process that kept running',
    observed: `${held} request(s) timed out while this process was held`,
  });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

/**
 * Waits `ms`, printing what it waits for and the time left every `everyS` seconds, so that a CI
 * log never looks hung.
 */
export async function waitWithProgress(ms: number, what: string, progress: (line: string) => void, everyS = 5): Promise<void> {
  if (ms <= 0) return;
  const end = Date.now() + ms;
  progress(`[load] waiting ${(ms / 1000).toFixed(1)} s: ${what}`);
  for (;;) {
    const left = end - Date.now();
    if (left <= 0) break;
    await sleep(Math.min(left, everyS * 1000));
    const still = end - Date.now();
    if (still > 0) progress(`[load] waiting: ${what}, ${(still / 1000).toFixed(0)} s left`);
  }
}

/** `${baseUrl}/inventory` etc.: joins a base address and a path without doubling slashes. */
export function join(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}
