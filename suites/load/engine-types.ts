/**
 * The load engine's vocabulary (suites/load/engine.ts): the steps and models of a run, its options,
 * the responses it records and the figures it reports. Types only.
 */
import type { TlsOptions } from '../../core/transport.ts';

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
