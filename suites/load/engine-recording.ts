/**
 * The recording of a run (suites/load/engine.ts): its counters while it runs, each answer counted
 * into them, and the figures of the finished run. Pure of sockets.
 */
import type { OneResult } from './engine-requests.ts';
import type { LatencyFigures, LoadFigures, LoadRunOptions, LoadStep, RecordedResponse, SampledResponse } from './engine-types.ts';

/**
 * Which responses the bounded sample keeps: the first half of `size` in order, the other half a
 * reservoir sample (algorithm R) of everything after, so late responses are validated too.
 * Returns the slot to write (an index into the sample) or -1.
 */
export function sampler(size: number): (index: number) => number {
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
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

function latencyOf(values: number[]): LatencyFigures {
  // A typed array sorts numbers natively, in numeric order (no comparator called per pair).
  const sorted = Float64Array.from(values).sort();
  const mean = sorted.length ? sorted.reduce((a, b) => a + b, 0) / sorted.length : 0;
  return {
    p50: round(percentile(sorted, 50)),
    p90: round(percentile(sorted, 90)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted.at(-1) ?? 0),
    mean: round(mean),
  };
}

/** The counters of one run while it runs. */
export interface RunState {
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
export function noteWritten(state: RunState, writtenAt: number | undefined): void {
  if (writtenAt === undefined) return;
  state.written++;
  state.firstWrittenAt = Math.min(state.firstWrittenAt, writtenAt);
  state.lastWrittenAt = Math.max(state.lastWrittenAt, writtenAt);
}

export function newRunState(): RunState {
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

export function stopRun(state: RunState, why: LoadFigures['stoppedBy']): void {
  if (state.stopped) return;
  state.stopped = true;
  state.stoppedBy = why;
}

/** Counts one answer (or failure) of `step` into the run's state. */
export function recordResult(
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
  const slot = keep(state.index++);
  const stops = stopOn.has(r.status);
  // The record is built only for what reads it (a run at saturation may need none).
  if (!(options.recordAll || slot >= 0 || options.onResponse || stops)) return;
  const record: RecordedResponse = {
    step: step.name,
    status: r.status,
    headers: r.headers,
    sentAt: r.sentAt,
    receivedAt: r.receivedAt,
    latencyMs: r.latencyMs,
  };
  if (options.recordAll) state.responses.push(record);
  if (slot >= 0) state.samples[slot] = { ...record, body: r.body };
  options.onResponse?.(record);
  if (stops) {
    state.stoppers.push(record);
    stopRun(state, 'status');
  }
}

/** The figures of a finished run. */
export function figuresOf(
  options: LoadRunOptions,
  state: RunState,
  connections: number,
  durationS: number,
  unanswered: number,
): LoadFigures {
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
