/**
 * A thin wrapper around autocannon's programmatic API for the load checks (`suites/load/`).
 *
 * - Every run is bounded twice: by its own end (`durationS` or `amount`) and by hard caps
 *   (`maxRequests`, `maxDurationS`) that stop autocannon whatever happens.
 * - The `Authorization` value goes to autocannon's `headers` option and nowhere else: it is never
 *   part of a figure, a sample, a progress line or an error message.
 * - Progress lines (what runs, how far, time left) are printed every few seconds, so a CI log never
 *   looks hung.
 * - It returns figures (requests, status histogram, 5xx, socket errors, timeouts, latency
 *   percentiles), a bounded sample of responses with bodies for schema validation, and, on request,
 *   the status and headers of every response (for the limiter checks).
 *
 * Spec: "Limits" (rate limits per plan); the conformance run's contract is docs/architecture.md.
 */
import autocannon from 'autocannon';

/** One request of the cycle every connection repeats. */
export interface LoadStep {
  /** Short name used in samples and reports, e.g. `GET /inventory`. */
  name: string;
  method?: 'GET' | 'PATCH' | 'POST';
  /** Absolute path on the origin, including the base path, e.g. `/v1/inventory`. */
  path: string;
  body?: string;
  contentType?: string;
}

export interface LoadRunOptions {
  /** What runs, for progress lines and reports, e.g. `capacity GET /inventory`. */
  label: string;
  /** Absolute URL whose origin is the target (its path is ignored; steps carry full paths). */
  url: string;
  steps: LoadStep[];
  /** The full `Authorization` header value. Sent as a header, never stored or printed. */
  authorization?: string;
  connections: number;
  /** Time-bounded run: seconds of load. */
  durationS?: number;
  /** Count-bounded run (a burst): exactly this many requests, then the run ends by itself. */
  amount?: number;
  /** Hard cap on requests sent; a time-bounded run stops there. */
  maxRequests: number;
  /** Hard cap on wall time; the run is stopped there whatever its own end. */
  maxDurationS: number;
  /** Seconds before a request counts as a timeout (default 10). */
  timeoutS?: number;
  /** Responses kept with their bodies for schema validation (default 100). */
  sampleSize?: number;
  /** Keep status, headers and time of every response (bounded by `maxRequests`). */
  recordAll?: boolean;
  /** Refuse any target that is not loopback (the bundled reference server). */
  loopbackOnly?: boolean;
  /** Where progress lines go (default: stdout). */
  progress?: (line: string) => void;
  /** Seconds between progress lines (default 3). */
  progressEveryS?: number;
  /**
   * Stop the run at the first response with one of these statuses (e.g. 429: never keep sending
   * on a key that must wait for Retry-After). Requests already in flight still complete.
   */
  stopOnStatus?: readonly number[];
}

/** A response as the checks see it: header names lowercased. */
export interface RecordedResponse {
  step: string;
  status: number;
  headers: Record<string, string>;
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
  /** Origin and paths only; never a key. */
  target: string;
  steps: string[];
  connections: number;
  /** Completed responses. */
  requests: number;
  /** Requests written to the wire (completed or not). */
  sent: number;
  durationS: number;
  requestsPerSecond: number;
  statusCodes: Record<string, number>;
  count2xx: number;
  count5xx: number;
  non2xx: number;
  socketErrors: number;
  timeouts: number;
  /**
   * Requests sent that got neither a response nor an error: a connection the server closed with a
   * request outstanding (autocannon reconnects silently), or requests still in flight when a
   * time-bounded run stopped (at most one per connection).
   */
  unanswered: number;
  /** Responses that are not 2xx, plus socket errors and timeouts, over all attempts. */
  errorRate: number;
  latencyMs: LatencyFigures;
  stoppedBy: 'duration' | 'amount' | 'max-requests' | 'max-duration' | 'status';
}

export interface LoadResult {
  figures: LoadFigures;
  samples: SampledResponse[];
  /** Every response when `recordAll`, else empty. */
  responses: RecordedResponse[];
  /** Every response with a `stopOnStatus` status (the first one stopped the run). */
  stoppers: RecordedResponse[];
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** True when `url` points at this machine. */
export function isLoopback(url: string): boolean {
  const host = new URL(url).hostname;
  return LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function lowerCaseHeaders(headers: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers || typeof headers !== 'object') return out;
  for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
    const key = name.toLowerCase();
    const text = Array.isArray(value) ? value.join(', ') : String(value);
    out[key] = key in out ? `${out[key]}, ${text}` : text;
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

/** Requests autocannon wrote to the wire (`requests.sent`, a field its type declarations leave out). */
function sentOf(result: autocannon.Result): number {
  return Number((result.requests as unknown as { sent?: number }).sent ?? 0);
}

/** Checks options that would make a run unbounded or unsafe; throws with a readable reason. */
export function assertBounded(options: LoadRunOptions): void {
  const { durationS, amount, maxRequests, maxDurationS, connections } = options;
  if ((durationS === undefined) === (amount === undefined)) {
    throw new Error(`${options.label}: give exactly one of durationS and amount`);
  }
  if (!(Number.isFinite(maxRequests) && maxRequests >= 1)) throw new Error(`${options.label}: maxRequests must be ≥ 1`);
  if (!(Number.isFinite(maxDurationS) && maxDurationS > 0)) throw new Error(`${options.label}: maxDurationS must be > 0`);
  if (!(Number.isInteger(connections) && connections >= 1)) throw new Error(`${options.label}: connections must be an integer ≥ 1`);
  if (amount !== undefined && !(Number.isInteger(amount) && amount >= 1 && amount <= maxRequests)) {
    throw new Error(`${options.label}: amount ${amount} must be an integer between 1 and maxRequests (${maxRequests})`);
  }
  if (durationS !== undefined && !(durationS > 0 && durationS <= maxDurationS)) {
    throw new Error(`${options.label}: durationS ${durationS} must be > 0 and ≤ maxDurationS (${maxDurationS})`);
  }
  if (options.steps.length === 0) throw new Error(`${options.label}: no steps`);
  if (options.loopbackOnly && !isLoopback(options.url)) {
    throw new Error(`${options.label}: load is only ever sent to loopback here, not to ${new URL(options.url).host}`);
  }
}

/**
 * Runs one bounded autocannon load and returns its figures. Never rejects because of what the
 * server answers (5xx, socket errors and timeouts are figures); rejects only on invalid options.
 */
export async function runLoad(options: LoadRunOptions): Promise<LoadResult> {
  assertBounded(options);
  const origin = new URL(options.url).origin;
  const print = options.progress ?? ((line: string) => console.log(line));
  const progressEveryMs = (options.progressEveryS ?? 3) * 1000;
  const sampleSize = options.sampleSize ?? 100;
  const keep = sampler(sampleSize);

  const samples: SampledResponse[] = [];
  const responses: RecordedResponse[] = [];
  const stoppers: RecordedResponse[] = [];
  const stopOn = new Set(options.stopOnStatus ?? []);
  let stop: () => void = () => undefined;
  const clients: Array<{ destroy(): void }> = [];
  let index = 0;
  let last: RecordedResponse | undefined;

  const amount = options.amount;
  const connections = Math.max(1, Math.min(options.connections, amount ?? options.connections, options.maxRequests));
  const headers: Record<string, string> = {};
  if (options.authorization !== undefined) headers.Authorization = options.authorization;

  const requests: autocannon.Request[] = options.steps.map((step) => ({
    method: step.method ?? 'GET',
    path: step.path,
    ...(step.body !== undefined ? { body: step.body } : {}),
    ...(step.contentType ? { headers: { 'Content-Type': step.contentType } } : {}),
    onResponse: (status: number, body: string, _context: object, raw: unknown) => {
      const record: RecordedResponse = {
        step: step.name,
        status,
        headers: lowerCaseHeaders(raw),
        receivedAt: Date.now(),
      };
      if (options.recordAll && responses.length < options.maxRequests) responses.push(record);
      const slot = keep(index);
      if (slot >= 0) samples[slot] = { ...record, body };
      index++;
      last = record;
      if (stopOn.has(status)) {
        stoppers.push(record);
        if (stoppers.length === 1) stop();
      }
    },
  }));

  const startedAt = Date.now();
  let settle: (value: autocannon.Result) => void = () => undefined;
  let fail: (error: unknown) => void = () => undefined;
  const finished = new Promise<autocannon.Result>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  const instance = autocannon({
    url: origin,
    connections,
    pipelining: 1,
    timeout: options.timeoutS ?? 10,
    headers,
    requests,
    sampleInt: 200,
    setupClient: (client: autocannon.Client) => {
      clients.push(client as unknown as { destroy(): void });
    },
    ...(amount !== undefined
      ? { amount }
      : { duration: options.durationS, maxOverallRequests: Math.max(options.maxRequests, connections) }),
  }, (error: unknown, outcome: autocannon.Result) => (error ? fail(error) : settle(outcome)));

  let stoppedBy: LoadFigures['stoppedBy'] = amount !== undefined ? 'amount' : 'duration';
  stop = () => {
    stoppedBy = 'status';
    // instance.stop() only takes effect at autocannon's next sample tick; closing every client
    // now means nothing more is written after the stopping response.
    for (const client of clients) client.destroy();
    instance.stop();
  };
  let completed = 0;
  instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
    completed++;
    // autocannon emits this right after the request's onResponse, in the same call stack.
    if (last) {
      last.latencyMs = round(responseTime);
      last = undefined;
    }
  });

  const what = `${options.label}: ${options.steps.map((s) => s.name).join(' + ')} on ${connections} connection(s)`;
  const planned = amount !== undefined ? `${amount} requests` : `${options.durationS} s`;
  print(`[load] start ${what}, ${planned} (caps: ${options.maxRequests} requests, ${options.maxDurationS} s)`);
  const progressTimer = setInterval(() => {
    const elapsedS = (Date.now() - startedAt) / 1000;
    const left =
      amount !== undefined
        ? `${Math.max(0, amount - completed)} requests left, at most ${Math.max(0, options.maxDurationS - elapsedS).toFixed(0)} s`
        : `${Math.max(0, (options.durationS ?? 0) - elapsedS).toFixed(0)} s left`;
    print(`[load] ${options.label}: ${elapsedS.toFixed(0)} s, ${completed} responses, ${left}`);
  }, progressEveryMs);
  const hardStop = setTimeout(() => {
    if (stoppedBy !== 'status') stoppedBy = 'max-duration';
    instance.stop();
  }, options.maxDurationS * 1000);

  let result: autocannon.Result;
  try {
    result = await finished;
  } finally {
    clearInterval(progressTimer);
    clearTimeout(hardStop);
  }
  const finishedAt = Date.now();
  if (amount === undefined && sentOf(result) >= options.maxRequests && stoppedBy === 'duration') {
    stoppedBy = 'max-requests';
  }

  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) {
    statusCodes[code] = Number((stat as { count: number | string }).count);
  }
  const total = Object.values(statusCodes).reduce((a, b) => a + b, 0);
  const count2xx = Object.entries(statusCodes)
    .filter(([code]) => code.startsWith('2'))
    .reduce((a, [, n]) => a + n, 0);
  const count5xx = Object.entries(statusCodes)
    .filter(([code]) => code.startsWith('5'))
    .reduce((a, [, n]) => a + n, 0);
  const timeouts = result.timeouts;
  const socketErrors = Math.max(0, result.errors - result.timeouts);
  const durationS = Math.max(0.001, (finishedAt - startedAt) / 1000);
  const sent = sentOf(result);
  const unanswered = Math.max(0, sent - total - socketErrors - timeouts);
  const attempts = total + socketErrors + timeouts;
  const lat = result.latency;

  const figures: LoadFigures = {
    label: options.label,
    target: origin,
    steps: options.steps.map((s) => `${s.method ?? 'GET'} ${s.path}`),
    connections,
    requests: total,
    sent,
    durationS: round(durationS),
    requestsPerSecond: round(total / durationS, 1),
    statusCodes,
    count2xx,
    count5xx,
    non2xx: total - count2xx,
    socketErrors,
    timeouts,
    unanswered,
    errorRate: attempts === 0 ? 0 : round((total - count2xx + socketErrors + timeouts) / attempts, 6),
    latencyMs: {
      p50: round(lat.p50),
      p90: round(lat.p90),
      p99: round(lat.p99),
      max: round(lat.max),
      mean: round(lat.average),
    },
    stoppedBy,
  };
  print(
    `[load] done ${options.label}: ${total} responses in ${figures.durationS} s (${figures.requestsPerSecond} req/s), ` +
      `p99 ${figures.latencyMs.p99} ms, 5xx ${count5xx}, socket errors ${socketErrors}, timeouts ${timeouts}, unanswered ${unanswered}, stopped by ${stoppedBy}`,
  );
  return { figures, samples, responses, stoppers };
}

/** A k6-style threshold: `name` must satisfy `observed <op> limit`. */
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

/**
 * The lines of every breached threshold, each naming the threshold, its limit and the observed
 * value, e.g. `threshold LOAD_P99_MS breached: p99 latency 812 ms, must be < 500 ms`.
 */
export function breachedThresholds(thresholds: Threshold[]): string[] {
  const lines: string[] = [];
  for (const t of thresholds) {
    const ok = t.op === '<' ? t.observed < t.limit : t.observed <= t.limit;
    if (!ok) {
      const unit = t.unit ? ` ${t.unit}` : '';
      lines.push(`threshold ${t.name} breached: ${t.what} ${t.observed}${unit}, must be ${t.op} ${t.limit}${unit}`);
    }
  }
  return lines;
}
