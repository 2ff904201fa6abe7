/**
 * The engine's requests (suites/load/engine.ts): one request alone (`sendOne`, on `send`) and one
 * on a run's pool (`sendPooled`), each answered as a `OneResult`; failures carry an error code and
 * message, never a header value.
 */
import type { Agent, IncomingHttpHeaders } from 'node:http';
import {
  agentFor,
  type ConnectionPool,
  PooledError,
  type PooledRequest,
  send,
  type TlsOptions,
  TransportError,
  voidingStall,
} from '../../core/transport.ts';
import type { LoadStep } from './engine-types.ts';

function lowerCaseHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return out;
}

/** One request of a run, as `sendOne` answers it. */
export type OneResult =
  | {
      ok: true;
      status: number;
      headers: Record<string, string>;
      body: string;
      sentAt: number;
      receivedAt: number;
      latencyMs: number;
      newConnection: boolean;
      /** How long this process was held from running while the request waited. */
      heldMs: number;
      /** `performance.now()` when its first byte was handed to the socket (a pooled request). */
      writtenAt?: number;
    }
  | {
      ok: false;
      kind: 'timeout' | 'socket' | 'tls';
      error: string;
      sentAt: number;
      latencyMs: number;
      /** A timeout judged by a process held this long from running while it waited (`stallVoidsDeadline`). */
      heldMs?: number;
      /** `performance.now()` when its first byte was handed to the socket, if it was (a pooled request). */
      writtenAt?: number;
    };

export interface OneRequest {
  url: string;
  method?: string;
  authorization?: string;
  body?: string;
  contentType?: string;
  timeoutS: number;
  /** A pool from `agentFor`; its TLS settings govern the request. */
  agent?: Agent;
  tls?: TlsOptions;
}

/** A readable reason for a failed request: an error code and message, never a header value. */
function describeError(error: unknown): string {
  const e = error as { code?: string; message?: string };
  return [e?.code, e?.message].filter(Boolean).join(': ') || 'network error';
}

/** The engine's kind of a failure of the transport: a body beyond the cap or an abort is a socket error here. */
function failureOf(error: unknown, timeoutS: number): Extract<OneResult, { ok: false }> {
  if (!(error instanceof TransportError))
    return { ok: false, kind: 'socket', error: describeError(error), sentAt: Date.now(), latencyMs: 0 };
  const { sentAt, latencyMs } = error;
  const written = error instanceof PooledError && error.writtenAt !== undefined ? { writtenAt: error.writtenAt } : {};
  if (error.kind === 'timeout') {
    const heldMs = voidingStall(error, timeoutS * 1000);
    return {
      ok: false,
      kind: 'timeout',
      error: `no complete response within ${timeoutS} s`,
      sentAt,
      latencyMs,
      ...(heldMs !== undefined ? { heldMs } : {}),
      ...written,
    };
  }
  return { ok: false, kind: error.kind === 'tls' ? 'tls' : 'socket', error: describeError(error), sentAt, latencyMs, ...written };
}

/** The request of `step` as a pool sends it: built once per step (the Authorization value only as a header). */
export function pooledRequestOf(step: LoadStep, authorization: string | undefined): PooledRequest {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (authorization !== undefined) headers.authorization = authorization;
  if (step.body !== undefined) {
    headers['content-type'] = step.contentType ?? 'application/json';
    headers['content-length'] = String(Buffer.byteLength(step.body));
  }
  return { method: step.method ?? 'GET', path: step.path, headers, ...(step.body !== undefined ? { body: step.body } : {}) };
}

/** One request on a run's pool; `done` hears its result. Never throws; never retried (a request the server dropped is lost). */
export function sendPooled(pool: ConnectionPool, request: PooledRequest, timeoutS: number, done: (r: OneResult) => void): void {
  pool.send(request, { deadlineMs: timeoutS * 1000, watchStalls: true }, (error, r) => {
    if (r === undefined) return done(failureOf(error, timeoutS));
    done({
      ok: true,
      status: r.status,
      headers: r.headers,
      body: r.body,
      sentAt: r.sentAt,
      receivedAt: r.receivedAt,
      latencyMs: r.latencyMs,
      newConnection: false,
      heldMs: r.stalledMs ?? 0,
      writtenAt: r.writtenAt,
    });
  });
}

/**
 * Sends one request and reads the whole response. Never throws: a timeout (no complete answer
 * within `timeoutS`), a connection error and a refused certificate are results. Never retried: a
 * request the server dropped is a lost request, whatever the connection.
 */
export function sendOne(request: OneRequest): Promise<OneResult> {
  const agent = request.agent ?? agentFor(request.url, request.tls);
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (request.authorization !== undefined) headers.Authorization = request.authorization;
  if (request.body !== undefined) {
    headers['Content-Type'] = request.contentType ?? 'application/json';
    headers['Content-Length'] = String(Buffer.byteLength(request.body));
  }
  const done = () => {
    if (request.agent === undefined) agent.destroy();
  };
  return send(
    { url: new URL(request.url), method: request.method ?? 'GET', headers, body: request.body },
    { deadlineMs: request.timeoutS * 1000, agent, tls: request.tls, watchStalls: true },
  ).then(
    (r): OneResult => {
      done();
      return {
        ok: true,
        status: r.status,
        headers: lowerCaseHeaders(r.headers),
        body: r.body,
        sentAt: r.sentAt,
        receivedAt: r.receivedAt,
        latencyMs: r.latencyMs,
        newConnection: r.newConnection,
        heldMs: r.stalledMs ?? 0,
      };
    },
    (error: unknown) => {
      done();
      return failureOf(error, request.timeoutS);
    },
  );
}
