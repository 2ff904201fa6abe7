/**
 * The capacity check's judges (suites/load/capacity-check.ts): a finished load run judged into
 * findings and evidence (LOAD-01: every request answered, no 5xx, samples valid against their own
 * schema; LOAD-04: the user's thresholds). No traffic.
 */
import { validate, type SchemaName } from '../../schemas/index.ts';
import { finding, type Finding } from '../../core/finding.ts';
import { isJsonMediaType } from '../lib/headers.ts';
import { parseJson } from '../lib/json.ts';
import { thresholdHolds, type LoadFigures, type LoadResult, type SampledResponse, type Threshold } from './engine.ts';
import { heldFinding } from './http.ts';
import { judgeWindows } from './overload-check.ts';
import { CAPACITY, type CapacityConfig, type Ctx, KEY } from './capacity-types.ts';

export function schemaFor(step: string, status: number): SchemaName | undefined {
  if (status >= 200 && status < 300) return step.startsWith('PATCH') ? 'InventoryItem' : 'Inventory';
  // The 429 body is not shown by the spec; every other error uses the Error object.
  if (status !== 429 && status >= 400) return 'Error';
  return undefined;
}

/** Problems of one sampled response against the schema of its own request: content type, JSON, schema. */
export function sampleProblems(sample: Pick<SampledResponse, 'step' | 'status' | 'headers' | 'body'>): string[] {
  const schema = schemaFor(sample.step, sample.status);
  if (!schema) return [];
  const where = `${sample.step} → ${sample.status}`;
  if (!isJsonMediaType(sample.headers['content-type'])) {
    return [`${where}: Content-Type ${sample.headers['content-type'] ?? '(none)'} is not application/json`];
  }
  let value: unknown;
  try {
    value = parseJson(sample.body);
  } catch (error) {
    return [`${where}: body is not JSON (${(error as Error).message})`];
  }
  const result = validate(schema, value);
  return result.valid ? [] : result.errors.map((e) => `${where}: ${schema} ${e}`);
}

/** The user's thresholds of a run, as set (an unset threshold is not judged). */
export function userThresholds(config: Pick<CapacityConfig, 'p99Ms' | 'maxErrorRate'>, f: LoadFigures): Threshold[] {
  const out: Threshold[] = [];
  if (config.p99Ms !== undefined)
    out.push({ name: 'LOAD_P99_MS', what: 'p99 latency', observed: f.latencyMs.p99, limit: config.p99Ms, op: '<', unit: 'ms' });
  if (config.maxErrorRate !== undefined)
    out.push({ name: 'LOAD_MAX_ERROR_RATE', what: 'error rate', observed: f.errorRate, limit: config.maxErrorRate, op: '<=' });
  return out;
}

export function certificateFinding(observed: string): Finding {
  return finding({
    id: CAPACITY.id,
    part: CAPACITY.answered,
    level: 'fail',
    message: `the target's TLS certificate was refused; nothing carrying ${KEY} was sent`,
    expected: 'a certificate trusted by Node (NODE_EXTRA_CA_CERTS for a private CA), or INSECURE_TLS=1',
    observed,
  });
}

/** Judges a finished load: answers, 5xx, samples, a 429 on LOAD_KEY, the user's thresholds. Returns when LOAD_KEY may be used again. */
export function judgeRun(ctx: Ctx, run: LoadResult): number {
  ctx.figures.load = run.figures;
  ctx.figures.requests.load = run.figures.sent;
  answeredFindings(ctx, run);
  schemaFindings(ctx, run);
  const notBefore = prerequisiteFindings(ctx, run);
  thresholdFindings(ctx, run);
  runEvidence(ctx, run);
  return notBefore;
}

/** LOAD-01 (answered): every request sent and answered, no 5xx. */
export function answeredFindings(ctx: Ctx, run: LoadResult): void {
  const { id, answered } = CAPACITY;
  const { findings } = ctx;
  const f = run.figures;
  // A timeout judged by a process held from running is the runner's delay, not the server's (heldTimeouts).
  const noAnswer = f.socketErrors + f.timeouts - f.heldTimeouts + f.unanswered;
  if (run.tlsError) findings.push(certificateFinding(run.tlsError));
  else if (f.sent === 0)
    findings.push(
      finding({
        id,
        part: answered,
        level: 'fail',
        message: 'no request could be sent under load',
        expected: 'requests sent and answered',
        observed: `${f.dropped} arrivals dropped`,
      }),
    );
  else if (noAnswer > 0) {
    findings.push(
      finding({
        id,
        part: answered,
        level: 'fail',
        message: `requests under load got no complete answer within the request timeout (LOAD_TIMEOUT_S=${ctx.config.timeoutS})`,
        expected: 'every request answered',
        observed: `${noAnswer} of ${f.sent} without an answer (timeouts ${f.timeouts}, connection errors ${f.socketErrors}${f.errorExamples.length ? `: ${f.errorExamples.join('; ')}` : ''}, abandoned ${f.unanswered})`,
      }),
    );
  }
  if (f.heldTimeouts > 0 && noAnswer === 0) findings.push(heldFinding(id, answered, f.heldTimeouts, f.longestHoldMs));
  if (f.count5xx > 0) {
    const codes = Object.entries(f.statusCodes)
      .filter(([c]) => c.startsWith('5'))
      .map(([c, n]) => `${c} ×${n}`)
      .join(', ');
    findings.push(
      finding({ id, part: answered, level: 'fail', message: 'responses under load were 5xx', expected: 'no 5xx', observed: codes }),
    );
  }
}

/** LOAD-01 (schemas): the sampled responses match the schema of their own request. */
export function schemaFindings(ctx: Ctx, run: LoadResult): void {
  const { id, schemas } = CAPACITY;
  const { findings, figures } = ctx;
  const f = run.figures;
  const problems = run.samples.flatMap((s) => sampleProblems(s).map((p) => ({ p, s })));
  figures.sampled = run.samples.length;
  figures.invalidSamples = new Set(problems.map((x) => x.s)).size;
  if (run.samples.length === 0 && f.requests > 0)
    findings.push(
      finding({
        id,
        part: schemas,
        level: 'fail',
        message: 'no response was sampled for schema validation',
        expected: 'sampled responses',
        observed: 'none',
      }),
    );
  if (problems.length) {
    findings.push(
      finding({
        id,
        part: schemas,
        level: 'fail',
        message: `${figures.invalidSamples} of ${run.samples.length} sampled responses do not match the schema of their own request`,
        expected: 'every sampled response valid',
        observed:
          problems
            .slice(0, 5)
            .map((x) => x.p)
            .join('; ') + (problems.length > 5 ? `; … (${problems.length} problems)` : ''),
      }),
    );
  }
}

/** What the run could not judge (a 429 on LOAD_KEY, a hold): not certified; returns when the key may be used again. */
export function prerequisiteFindings(ctx: Ctx, run: LoadResult): number {
  const { id, prerequisite } = CAPACITY;
  const { findings } = ctx;
  const f = run.figures;
  let notBefore = 0;
  if (run.stoppers.length) {
    const held = judgeWindows(run.stoppers);
    notBefore = held.notBefore;
    findings.push(
      finding({
        id,
        part: prerequisite,
        level: 'not-certified',
        message:
          'LOAD_KEY met its rate limit, so the load stopped at once; use a key whose limit this load does not reach, or lower LOAD_RATE or LOAD_DURATION_S',
        expected: 'no 429 on LOAD_KEY',
        observed: `429 after ${f.requests} responses (Retry-After ${held.largestRetryAfterS ?? 'invalid'} s)`,
      }),
    );
  }
  if (f.stoppedBy === 'held') {
    findings.push(
      finding({
        id,
        part: prerequisite,
        level: 'not-certified',
        message:
          "the load stopped early: a 429 that its key's X-RateLimit-Remaining did not predict holds every request to the target until its Retry-After (the limit may be shared)",
        expected: `${Math.ceil(ctx.config.ratePerS * ctx.config.durationS)} requests over ${ctx.config.durationS} s`,
        observed: `${f.sent} sent, then held`,
      }),
    );
  }
  return notBefore;
}

/** LOAD-04: the thresholds the user set (the user's gate). */
export function thresholdFindings(ctx: Ctx, run: LoadResult): void {
  for (const t of userThresholds(ctx.config, run.figures)) {
    const judged = judgeThreshold(t, run.figures);
    if (judged) ctx.findings.push(judged);
  }
}

/**
 * A threshold the user set (LOAD-04): nothing when it holds, a `gate` finding when it is breached.
 * A latency measured by a process held from running may be that much longer than the server took:
 * a breach of LOAD_P99_MS that the same percentile of the latencies with those holds taken out
 * (`latencyFloorMs`) does not show is the runner's, and leaves the threshold not certified.
 */
export function judgeThreshold(t: Threshold, f: Pick<LoadFigures, 'latencyFloorMs'>): Finding | undefined {
  if (thresholdHolds(t)) return undefined;
  const { gateId, thresholds } = CAPACITY;
  const unit = t.unit ? ` ${t.unit}` : '';
  const floor = t.name === 'LOAD_P99_MS' ? f.latencyFloorMs.p99 : undefined;
  const held = floor !== undefined && thresholdHolds({ ...t, observed: floor });
  return finding({
    id: gateId,
    part: thresholds,
    level: held ? 'not-certified' : 'gate',
    message: held
      ? `threshold ${t.name} (set by the user) breached: ${t.what}, but ${floor}${unit} with the time this process was held from running taken out: the run cannot tell a slow server from its own delay`
      : `threshold ${t.name} (set by the user) breached: ${t.what}`,
    expected: `${t.op} ${t.limit}${unit}`,
    observed: `${t.observed}${unit}`,
  });
}

export function runEvidence(ctx: Ctx, run: LoadResult): void {
  const f = run.figures;
  const config = ctx.config;
  const model =
    f.model === 'open'
      ? `${f.ratePerS} req/s offered for ${config.durationS} s (at most ${f.connections} in flight)`
      : `saturation on ${f.connections} connections for ${config.durationS} s`;
  ctx.evidence.push(
    `${f.steps.join(' + ')}: ${model}: ${f.requests} answered, ${f.sent} sent, ${f.dropped} arrivals dropped (every slot busy), ${f.connectionsOpened} connections opened; ` +
      `${f.requestsPerSecond} req/s; p50 ${f.latencyMs.p50} ms, p90 ${f.latencyMs.p90} ms, p99 ${f.latencyMs.p99} ms; ` +
      `statuses ${
        Object.entries(f.statusCodes)
          .map(([c, n]) => `${c} ×${n}`)
          .join(', ') || 'none'
      }; ` +
      `timeouts ${f.timeouts}; connection errors ${f.socketErrors}; error rate ${f.errorRate}; TLS ${f.tls}`,
    `user thresholds: ${
      userThresholds(config, f)
        .map((t) => `${t.name} ${t.op} ${t.limit}${t.unit ? ` ${t.unit}` : ''} (${thresholdHolds(t) ? 'held' : 'breached'})`)
        .join(', ') || 'none set (the spec sets no latency or error rate)'
    }`,
    `${run.samples.length} sampled responses validated against the schema of their own request, ${ctx.figures.invalidSamples} invalid`,
  );
}
