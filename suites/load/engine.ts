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
import { isTlsFailure, poolFor } from '../../core/transport.ts';
import { figuresOf, newRunState, noteWritten, recordResult, type RunState, sampler, stopRun } from './engine-recording.ts';
import { pooledRequestOf, sendPooled } from './engine-requests.ts';
import type { LoadModel, LoadResult, LoadRunOptions } from './engine-types.ts';

export { agentFor, FREE_SOCKET_IDLE_MS, type TlsOptions } from '../../core/transport.ts';
export { percentile } from './engine-recording.ts';
export { type OneRequest, type OneResult, sendOne } from './engine-requests.ts';
export type * from './engine-types.ts';
export { breachedThresholds, type Threshold, thresholdHolds } from './thresholds.ts';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** True when `url` points at this machine. */
export function isLoopback(url: string): boolean {
  const host = new URL(url).hostname;
  return LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** True when `error` is the client refusing the peer's certificate (the one classification, core/transport.ts). */
export const isCertificateError = isTlsFailure;

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

function planOf(model: LoadModel, connections: number): string {
  if (model.kind === 'burst') return `a burst of ${model.count} requests on up to ${connections} connection(s)`;
  if (model.kind === 'open') return `${model.ratePerS} req/s for ${model.durationS} s (at most ${connections} in flight)`;
  return `saturation on ${connections} connection(s) for ${model.durationS} s`;
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
        if (r.ok && state.firstAnsweredAt === Number.POSITIVE_INFINITY) state.firstAnsweredAt = performance.now();
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
