/**
 * The load engine of the load checks (`suites/load/`): bounded runs of HTTP requests through the
 * harness's one outbound client (core/transport.ts) on a pool of kept-alive connections (`agentFor`).
 *
 * - TLS is verified on every request, explicitly (private CAs through `NODE_EXTRA_CA_CERTS` or the
 *   `ca` option). Only `tls.insecure` (the user's explicit opt-in) turns verification off, and the
 *   figures then say so. A certificate the client refuses stops the run at once: nothing carrying
 *   the key is ever written to that peer. (autocannon 9 forces `rejectUnauthorized: false` after
 *   the options it is given, which is why it is not used here.)
 * - Each response is attributed to the request that caused it: its step, status, headers, body and
 *   latency travel together, so samples are validated against the schema of their own step.
 * - A connection the server closes after a complete response (`Connection: close`, HTTP/1.1
 *   RFC 9112 §9.6) is normal: the next request opens a new one. A request is only counted as lost
 *   when it got neither a complete response nor an error within the request timeout.
 * - Models: `open` (a fixed arrival rate for a fixed time, k6's constant-arrival-rate: arrivals
 *   that find every slot busy are dropped and counted), `closed` (saturation: every slot sends its
 *   next request as soon as the previous one is answered; an explicit opt-in), `burst` (exactly
 *   `count` requests at once; with fewer `connections`, in waves of `connections` requests, each
 *   sent once every request of the one before is answered, on new connections).
 * - Every run is bounded twice: by its own end and by hard caps (`maxRequests`, `maxDurationS`).
 * - The `Authorization` value is a request header and nothing else: never a figure, a sample, a
 *   progress line or an error message.
 */
import type { Agent, IncomingHttpHeaders } from 'node:http';
import {
  agentFor,
  type ConnectionPool,
  isTlsFailure,
  PooledError,
  type PooledRequest,
  poolFor,
  send,
  TransportError,
  voidingStall,
  type TlsOptions,
} from '../../core/transport.ts';

export { agentFor, FREE_SOCKET_IDLE_MS, type TlsOptions } from '../../core/transport.ts';

/** One request of the cycle the load repeats. */
export interface LoadStep {
  /** Short name used in samples and reports, e.g. `GET /inventory`. */
  name: string;
  method?: 'GET' | 'PATCH' | 'POST';
  /** Absolute path on the origin, including the base path, e.g. `/v1/inventory`. */
  path: string;
  body?: string;
  contentType?: string;
}

/** How requests arrive. */
export type LoadModel =
  /** A fixed arrival rate for a fixed time (open model); at most `connections` in flight. */
  | { kind: 'open'; ratePerS: number; durationS: number }
  /** Saturation (closed model): `connections` loops, each sending as soon as it is answered. */
  | { kind: 'closed'; durationS: number }
  /**
   * Exactly `count` requests, all started at once; with fewer `connections`, in waves of that many,
   * the next wave only once every request of the one before is answered: nothing of a burst leaves
   * while an answer of it is still unread, so a 429 in the middle of it stops the rest (with
   * `stopOnStatus`) before anything follows it (HTTP rules: nothing on a key while its 429 pends).
   */
  | { kind: 'burst'; count: number };

export interface LoadRunOptions {
  /** What runs, for progress lines and reports, e.g. `capacity GET /inventory`. */
  label: string;
  /** Absolute URL whose origin is the target (its path is ignored; steps carry full paths). */
  url: string;
  steps: LoadStep[];
  /** The full `Authorization` header value. Sent as a header, never stored or printed. */
  authorization?: string;
  model: LoadModel;
  /** Most requests in flight at once (and open connections). */
  connections: number;
  /** Hard cap on requests sent. */
  maxRequests: number;
  /** Hard cap on wall time; requests still in flight then are abandoned and counted as unanswered. */
  maxDurationS: number;
  /** Seconds within which a request must be answered completely (default 10). */
  timeoutS?: number;
  /** Responses kept with their bodies for schema validation (default 100). */
  sampleSize?: number;
  /** Keep status, headers and time of every response (bounded by `maxRequests`). */
  recordAll?: boolean;
  /** Refuse any target that is not loopback (the bundled reference server). */
  loopbackOnly?: boolean;
  tls?: TlsOptions;
  /** Where progress lines go (default: stdout). */
  progress?: (line: string) => void;
  /** Seconds between progress lines (default 3). */
  progressEveryS?: number;
  /**
   * Send nothing more after the first response with one of these statuses (e.g. 429: never keep
   * sending on a key that must wait for Retry-After). Requests already sent still complete.
   */
  stopOnStatus?: readonly number[];
  /** Called with every response as it arrives (e.g. the run-wide pacer's `observe`). */
  onResponse?: (response: RecordedResponse) => void;
  /**
   * Send nothing more once this says the origin is held (the run-wide pacer: a 429 another key's
   * Remaining did not predict holds every request to the origin until its Retry-After).
   */
  held?: () => boolean;
}

/** A response as the checks see it: header names lowercased. */
export interface RecordedResponse {
  step: string;
  status: number;
  headers: Record<string, string>;
  /** `Date.now()` when the request was written. */
  sentAt?: number;
  /** `Date.now()` when the response was complete. */
  receivedAt: number;
  latencyMs?: number;
}

export interface SampledResponse extends RecordedResponse {
  body: string;
}

export interface LatencyFigures {
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export interface LoadFigures {
  label: string;
  /** Origin only; never a key. */
  target: string;
  steps: string[];
  model: LoadModel['kind'];
  /** Arrival rate of an open model (requests per second), else null. */
  ratePerS: number | null;
  connections: number;
  /** Complete responses. */
  requests: number;
  /** Requests written to the wire (answered or not). */
  sent: number;
  /** Arrivals of an open model that found every slot busy and were not sent. */
  dropped: number;
  /** Connections opened (a server closing after every response needs one per request). */
  connectionsOpened: number;
  durationS: number;
  requestsPerSecond: number;
  statusCodes: Record<string, number>;
  /** Responses and errors by step name. */
  bySteps: Record<string, { requests: number; statusCodes: Record<string, number> }>;
  count2xx: number;
  count5xx: number;
  non2xx: number;
  /** Requests that ended with a connection error before a complete response. */
  socketErrors: number;
  /** Requests not answered completely within the request timeout. */
  timeouts: number;
  /**
   * Of `timeouts`, those judged by a process held from running a second or more (or a tenth of
   * the timeout) while they waited (`core/stall.ts`): the runner's delay, never evidence against
   * the server. Not counted in `errorRate`.
   */
  heldTimeouts: number;
  /** The longest such hold, in milliseconds (0 without one). */
  longestHoldMs: number;
  /** Requests abandoned without an answer when the hard cap on wall time stopped the run. */
  unanswered: number;
  /** The first connection errors seen (code and message; never a header value). */
  errorExamples: string[];
  /** Responses that are not 2xx, plus socket errors and timeouts, over all attempts. */
  errorRate: number;
  latencyMs: LatencyFigures;
  /**
   * The latencies with the time this process was held from running during each request taken out:
   * a lower bound of the server's own (`OutboundResponse.stalledMs`).
   */
  latencyFloorMs: LatencyFigures;
  /**
   * Milliseconds from the first byte of the first request to the first byte of the last of the
   * first `connections` (a burst: how nearly "at once" it left; null when fewer than two were written).
   */
  sendSpreadMs: number | null;
  /** Milliseconds from the first byte of the first request to the first complete answer (null without one). */
  firstAnswerMs: number | null;
  /** `https` verified, `https` not verified (opt-in), or plain `http`. */
  tls: 'verified' | 'not verified' | 'none';
  stoppedBy: 'duration' | 'amount' | 'max-requests' | 'max-duration' | 'status' | 'tls' | 'held';
}

export interface LoadResult {
  figures: LoadFigures;
  samples: SampledResponse[];
  /** Every response when `recordAll`, else empty. */
  responses: RecordedResponse[];
  /** Every response with a `stopOnStatus` status (the first one stopped the run). */
  stoppers: RecordedResponse[];
  /** The certificate problem that stopped the run (`stoppedBy: 'tls'`). */
  tlsError?: string;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** True when `url` points at this machine. */
export function isLoopback(url: string): boolean {
  const host = new URL(url).hostname;
  return LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** True when `error` is the client refusing the peer's certificate (the one classification, core/transport.ts). */
export const isCertificateError = isTlsFailure;

function lowerCaseHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return out;
}

/**
 * Which responses the bounded sample keeps: the first half of `size` in order, the other half a
 * reservoir sample (algorithm R) of everything after, so late responses are validated too.
 * Returns the slot to write (an index into the sample) or -1.
 */
function sampler(size: number): (index: number) => number {
  const head = Math.ceil(size / 2);
  const reservoir = size - head;
  return (index) => {
    if (index < head) return index;
    if (reservoir === 0) return -1;
    const seen = index - head;
    if (seen < reservoir) return index;
    const j = Math.floor(Math.random() * (seen + 1));
    return j < reservoir ? head + j : -1;
  };
}

function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** Nearest-rank percentile of sorted values (0 when empty). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

function latencyOf(values: number[]): LatencyFigures {
  const sorted = [...values].sort((a, b) => a - b);
  const mean = sorted.length ? sorted.reduce((a, b) => a + b, 0) / sorted.length : 0;
  return {
    p50: round(percentile(sorted, 50)),
    p90: round(percentile(sorted, 90)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted.at(-1) ?? 0),
    mean: round(mean),
  };
}

/** Checks options that would make a run unbounded or unsafe; throws with a readable reason. */
export function assertBounded(options: LoadRunOptions): void {
  const { model, maxRequests, maxDurationS, connections } = options;
  if (!(Number.isFinite(maxRequests) && maxRequests >= 1)) throw new Error(`${options.label}: maxRequests must be ≥ 1`);
  if (!(Number.isFinite(maxDurationS) && maxDurationS > 0)) throw new Error(`${options.label}: maxDurationS must be > 0`);
  if (!(Number.isInteger(connections) && connections >= 1)) throw new Error(`${options.label}: connections must be an integer ≥ 1`);
  if (model.kind === 'burst' && !(Number.isInteger(model.count) && model.count >= 1 && model.count <= maxRequests)) {
    throw new Error(`${options.label}: a burst of ${model.count} must be an integer between 1 and maxRequests (${maxRequests})`);
  }
  if (model.kind !== 'burst' && !(model.durationS > 0 && model.durationS <= maxDurationS)) {
    throw new Error(`${options.label}: durationS ${model.durationS} must be > 0 and ≤ maxDurationS (${maxDurationS})`);
  }
  if (model.kind === 'open' && !(Number.isFinite(model.ratePerS) && model.ratePerS > 0)) {
    throw new Error(`${options.label}: ratePerS must be > 0`);
  }
  if (options.steps.length === 0) throw new Error(`${options.label}: no steps`);
  const protocol = new URL(options.url).protocol;
  if (protocol !== 'http:' && protocol !== 'https:') throw new Error(`${options.label}: ${protocol} is not http or https`);
  if (options.loopbackOnly && !isLoopback(options.url)) {
    throw new Error(`${options.label}: load is only ever sent to loopback here, not to ${new URL(options.url).host}`);
  }
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
function pooledRequestOf(step: LoadStep, authorization: string | undefined): PooledRequest {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (authorization !== undefined) headers.authorization = authorization;
  if (step.body !== undefined) {
    headers['content-type'] = step.contentType ?? 'application/json';
    headers['content-length'] = String(Buffer.byteLength(step.body));
  }
  return { method: step.method ?? 'GET', path: step.path, headers, ...(step.body !== undefined ? { body: step.body } : {}) };
}

/** One request on a run's pool; `done` hears its result. Never throws; never retried (a request the server dropped is lost). */
function sendPooled(pool: ConnectionPool, request: PooledRequest, timeoutS: number, done: (r: OneResult) => void): void {
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

/** The counters of one run while it runs. */
interface RunState {
  samples: SampledResponse[];
  responses: RecordedResponse[];
  stoppers: RecordedResponse[];
  latencies: number[];
  latencyFloors: number[];
  statusCodes: Record<string, number>;
  bySteps: LoadFigures['bySteps'];
  errorExamples: string[];
  tlsError?: string;
  sent: number;
  answered: number;
  socketErrors: number;
  timeouts: number;
  heldTimeouts: number;
  longestHoldMs: number;
  dropped: number;
  connectionsOpened: number;
  index: number;
  inFlight: number;
  stepCursor: number;
  stoppedBy: LoadFigures['stoppedBy'];
  stopped: boolean;
  /** `performance.now()` of the first and the last first byte written, and how many were; of the first complete answer. */
  firstWrittenAt: number;
  firstAnsweredAt: number;
  lastWrittenAt: number;
  written: number;
}

/** Notes when a request's first byte went out (undefined: it never did). */
function noteWritten(state: RunState, writtenAt: number | undefined): void {
  if (writtenAt === undefined) return;
  state.written++;
  state.firstWrittenAt = Math.min(state.firstWrittenAt, writtenAt);
  state.lastWrittenAt = Math.max(state.lastWrittenAt, writtenAt);
}

function newRunState(): RunState {
  return {
    samples: [],
    responses: [],
    stoppers: [],
    latencies: [],
    latencyFloors: [],
    statusCodes: {},
    bySteps: {},
    errorExamples: [],
    sent: 0,
    answered: 0,
    socketErrors: 0,
    timeouts: 0,
    heldTimeouts: 0,
    longestHoldMs: 0,
    dropped: 0,
    connectionsOpened: 0,
    index: 0,
    inFlight: 0,
    stepCursor: 0,
    stoppedBy: 'amount',
    stopped: false,
    firstWrittenAt: Number.POSITIVE_INFINITY,
    firstAnsweredAt: Number.POSITIVE_INFINITY,
    lastWrittenAt: Number.NEGATIVE_INFINITY,
    written: 0,
  };
}

function stopRun(state: RunState, why: LoadFigures['stoppedBy']): void {
  if (state.stopped) return;
  state.stopped = true;
  state.stoppedBy = why;
}

/** Counts one answer (or failure) of `step` into the run's state. */
function recordResult(
  state: RunState,
  options: LoadRunOptions,
  step: LoadStep,
  r: OneResult,
  keep: (index: number) => number,
  stopOn: ReadonlySet<number>,
): void {
  const stepStats = (state.bySteps[step.name] ??= { requests: 0, statusCodes: {} });
  stepStats.requests++;
  if (!r.ok) {
    const code = r.kind;
    stepStats.statusCodes[code] = (stepStats.statusCodes[code] ?? 0) + 1;
    if (r.kind === 'timeout') state.timeouts++;
    else state.socketErrors++;
    if (r.heldMs !== undefined) {
      state.heldTimeouts++;
      state.longestHoldMs = Math.max(state.longestHoldMs, r.heldMs);
    }
    if (state.errorExamples.length < 5 && !state.errorExamples.includes(r.error)) state.errorExamples.push(r.error);
    if (r.kind === 'tls') {
      state.tlsError ??= r.error;
      stopRun(state, 'tls');
    }
    return;
  }
  state.answered++;
  state.statusCodes[r.status] = (state.statusCodes[r.status] ?? 0) + 1;
  stepStats.statusCodes[r.status] = (stepStats.statusCodes[r.status] ?? 0) + 1;
  state.latencies.push(r.latencyMs);
  state.latencyFloors.push(Math.max(0, r.latencyMs - r.heldMs));
  const record: RecordedResponse = {
    step: step.name,
    status: r.status,
    headers: r.headers,
    sentAt: r.sentAt,
    receivedAt: r.receivedAt,
    latencyMs: r.latencyMs,
  };
  if (options.recordAll) state.responses.push(record);
  const slot = keep(state.index++);
  if (slot >= 0) state.samples[slot] = { ...record, body: r.body };
  options.onResponse?.(record);
  if (stopOn.has(r.status)) {
    state.stoppers.push(record);
    stopRun(state, 'status');
  }
}

function planOf(model: LoadModel, connections: number): string {
  if (model.kind === 'burst') return `a burst of ${model.count} requests on up to ${connections} connection(s)`;
  if (model.kind === 'open') return `${model.ratePerS} req/s for ${model.durationS} s (at most ${connections} in flight)`;
  return `saturation on ${connections} connection(s) for ${model.durationS} s`;
}

/** The figures of a finished run. */
function figuresOf(options: LoadRunOptions, state: RunState, connections: number, durationS: number, unanswered: number): LoadFigures {
  const { statusCodes, answered, socketErrors, timeouts, heldTimeouts } = state;
  const sum = (prefix: string) =>
    Object.entries(statusCodes)
      .filter(([c]) => c.startsWith(prefix))
      .reduce((a, [, n]) => a + n, 0);
  const count2xx = sum('2');
  const attempts = answered + socketErrors + timeouts - heldTimeouts + unanswered;
  const model = options.model;
  return {
    label: options.label,
    target: new URL(options.url).origin,
    steps: options.steps.map((s) => `${s.method ?? 'GET'} ${s.path}`),
    model: model.kind,
    ratePerS: model.kind === 'open' ? model.ratePerS : null,
    connections,
    requests: answered,
    sent: state.sent,
    dropped: state.dropped,
    connectionsOpened: state.connectionsOpened,
    durationS: round(durationS),
    requestsPerSecond: round(answered / durationS, 1),
    statusCodes,
    bySteps: state.bySteps,
    count2xx,
    count5xx: sum('5'),
    non2xx: answered - count2xx,
    socketErrors,
    timeouts,
    heldTimeouts,
    longestHoldMs: state.longestHoldMs,
    unanswered,
    errorExamples: state.errorExamples,
    errorRate: attempts === 0 ? 0 : round((answered - count2xx + socketErrors + timeouts - heldTimeouts + unanswered) / attempts, 6),
    latencyMs: latencyOf(state.latencies),
    latencyFloorMs: latencyOf(state.latencyFloors),
    sendSpreadMs: state.written >= 2 ? round(state.lastWrittenAt - state.firstWrittenAt, 3) : null,
    firstAnswerMs: state.written >= 1 && state.firstAnsweredAt < Infinity ? round(state.firstAnsweredAt - state.firstWrittenAt, 3) : null,
    tls: new URL(options.url).protocol !== 'https:' ? 'none' : options.tls?.insecure ? 'not verified' : 'verified',
    stoppedBy: state.stoppedBy,
  };
}

/** Starts the open model's arrivals at fixed times; an arrival that finds every slot busy is dropped. Returns a stop function. */
function startArrivals(
  model: Extract<LoadModel, { kind: 'open' }>,
  state: RunState,
  startedAt: number,
  connections: number,
  fire: () => void,
): () => void {
  const intervalMs = 1000 / model.ratePerS;
  let due = 0;
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    const elapsed = Date.now() - startedAt;
    // Arrivals at 0, 1/rate, 2/rate, … strictly before the end: exactly rate × duration of them.
    while (!state.stopped && due * intervalMs <= elapsed && due * intervalMs < model.durationS * 1000) {
      due++;
      if (state.inFlight < connections) fire();
      else state.dropped++;
    }
    if (!state.stopped) timer = setTimeout(tick, Math.max(1, due * intervalMs - (Date.now() - startedAt)));
  };
  tick();
  return () => clearTimeout(timer);
}

/** Prints where a run stands every `everyMs`; returns the stop function. */
function startProgress(options: LoadRunOptions, state: RunState, startedAt: number, print: (line: string) => void): () => void {
  const model = options.model;
  const timer = setInterval(
    () => {
      const elapsedS = (Date.now() - startedAt) / 1000;
      const left =
        model.kind === 'burst'
          ? `${Math.max(0, model.count - state.answered - state.socketErrors - state.timeouts)} requests left, at most ${Math.max(0, options.maxDurationS - elapsedS).toFixed(0)} s`
          : `${Math.max(0, model.durationS - elapsedS).toFixed(0)} s left`;
      print(`[load] ${options.label}: ${elapsedS.toFixed(0)} s, ${state.answered} responses, ${left}`);
    },
    (options.progressEveryS ?? 3) * 1000,
  );
  return () => clearInterval(timer);
}

/**
 * Sends the run's requests and resolves when it is over: `drained` (nothing more to send, nothing
 * in flight) or `hard` (the cap on wall time; what is in flight is abandoned).
 */
function drive(options: LoadRunOptions, state: RunState, connections: number, startedAt: number): Promise<'drained' | 'hard'> {
  const model = options.model;
  let pool = poolFor(options.url, options.tls, connections);
  let openedBefore = 0;
  const requests = options.steps.map((step) => pooledRequestOf(step, options.authorization));
  const keep = sampler(options.sampleSize ?? 100);
  const stopOn = new Set(options.stopOnStatus ?? []);
  const timeoutS = options.timeoutS ?? 10;
  const timers: Array<() => void> = [];
  const closePool = () => {
    openedBefore += pool.connectionsOpened;
    pool.close();
  };
  return new Promise<'drained' | 'hard'>((resolve) => {
    const settle = (how: 'drained' | 'hard') => {
      for (const clear of timers) clear();
      closePool();
      state.connectionsOpened = openedBefore;
      resolve(how);
    };
    /** Whether the model still has requests to send (a burst its count, the others until stopped). */
    const moreToSend = () => !state.stopped && (model.kind !== 'burst' || state.sent < model.count);
    const settleIfDone = () => {
      if (state.inFlight === 0 && !moreToSend()) settle('drained');
    };
    const pump = () => {
      if (model.kind === 'burst') {
        // A burst's next wave leaves once all of the one before is answered (and read), on
        // connections of its own, as the first does: a reset it meets is the server's.
        if (state.inFlight > 0) return;
        if (state.sent > 0 && moreToSend()) {
          closePool();
          pool = poolFor(options.url, options.tls, connections);
        }
      }
      while (state.inFlight < connections && moreToSend()) fire();
    };
    function fire(): void {
      if (state.sent >= options.maxRequests) return stopRun(state, model.kind === 'burst' ? 'amount' : 'max-requests');
      if (options.held?.()) {
        stopRun(state, 'held');
        return settleIfDone();
      }
      const at = state.stepCursor++ % options.steps.length;
      const step = options.steps[at]!;
      // The spread is the first wave's (a burst larger than `connections` leaves in waves by design).
      const firstWave = state.sent < connections;
      state.sent++;
      state.inFlight++;
      sendPooled(pool, requests[at]!, timeoutS, (r) => {
        state.inFlight--;
        if (firstWave) noteWritten(state, r.writtenAt);
        if (r.ok) state.firstAnsweredAt = Math.min(state.firstAnsweredAt, performance.now());
        recordResult(state, options, step, r, keep, stopOn);
        if (model.kind !== 'open') pump();
        settleIfDone();
      });
    }
    const hard = setTimeout(() => {
      stopRun(state, 'max-duration');
      settle('hard');
    }, options.maxDurationS * 1000);
    timers.push(() => clearTimeout(hard));
    if (model.kind !== 'burst') {
      const end = setTimeout(() => {
        stopRun(state, 'duration');
        settleIfDone();
      }, model.durationS * 1000);
      timers.push(() => clearTimeout(end));
    }
    if (model.kind === 'open') timers.push(startArrivals(model, state, startedAt, connections, fire));
    else pump();
  });
}

/**
 * Runs one bounded load and returns its figures. Never rejects because of what the server answers
 * (5xx, connection errors and timeouts are figures); rejects only on invalid options.
 */
export async function runLoad(options: LoadRunOptions): Promise<LoadResult> {
  assertBounded(options);
  const print = options.progress ?? ((line: string) => console.log(line));
  const model = options.model;
  const state = newRunState();
  const connections = Math.max(
    1,
    Math.min(options.connections, model.kind === 'burst' ? model.count : options.connections, options.maxRequests),
  );
  const startedAt = Date.now();
  print(
    `[load] start ${options.label}: ${options.steps.map((s) => s.name).join(' + ')}, ${planOf(model, connections)} (caps: ${options.maxRequests} requests, ${options.maxDurationS} s)`,
  );
  const stopProgress = startProgress(options, state, startedAt, print);
  const ending = await drive(options, state, connections, startedAt);
  stopProgress();
  const unanswered = ending === 'hard' ? state.inFlight : 0;
  const durationS = Math.max(0.001, (Date.now() - startedAt) / 1000);
  const figures = figuresOf(options, state, connections, durationS, unanswered);
  print(
    `[load] done ${options.label}: ${state.answered} responses in ${figures.durationS} s (${figures.requestsPerSecond} req/s), ` +
      `p99 ${figures.latencyMs.p99} ms, 5xx ${figures.count5xx}, socket errors ${state.socketErrors}, timeouts ${state.timeouts}, unanswered ${unanswered}, ` +
      `dropped ${state.dropped}${model.kind === 'burst' && figures.sendSpreadMs !== null ? `, sent within ${figures.sendSpreadMs} ms (first answer after ${figures.firstAnswerMs ?? 'none'} ms)` : ''}, stopped by ${state.stoppedBy}${state.tlsError ? ` (certificate refused: ${state.tlsError})` : ''}`,
  );
  const { samples, responses, stoppers, tlsError } = state;
  return { figures, samples, responses, stoppers, ...(tlsError ? { tlsError } : {}) };
}

/** A k6-style threshold the user set: `observed <op> limit`. */
export interface Threshold {
  /** The variable that sets it, e.g. `LOAD_P99_MS`. */
  name: string;
  /** What is measured, e.g. `p99 latency`. */
  what: string;
  observed: number;
  limit: number;
  op: '<' | '<=';
  unit?: string;
}

/** True when `t` holds. */
export function thresholdHolds(t: Threshold): boolean {
  return t.op === '<' ? t.observed < t.limit : t.observed <= t.limit;
}

/**
 * The lines of every breached threshold, each naming the threshold, its limit and the observed
 * value, e.g. `threshold LOAD_P99_MS breached: p99 latency 812 ms, must be < 500 ms`.
 */
export function breachedThresholds(thresholds: Threshold[]): string[] {
  return thresholds
    .filter((t) => !thresholdHolds(t))
    .map((t) => {
      const unit = t.unit ? ` ${t.unit}` : '';
      return `threshold ${t.name} breached: ${t.what} ${t.observed}${unit}, must be ${t.op} ${t.limit}${unit}`;
    });
}
