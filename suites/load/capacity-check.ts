/**
 * The capacity check's core (ledger LOAD-01 and the user's gate LOAD-04), callable without
 * Playwright so that `tests/load/` can run it against any server.
 *
 * Load with a key whose limit will not be reached (`LOAD_KEY`), by default an open model (a fixed
 * arrival rate for a fixed time, a few thousand requests in all); saturation is the user's opt-in:
 * - `list`: `GET /inventory` only;
 * - `mix`: list and `PATCH /inventory/{petId}` of one pet, whose quantity is restored afterwards
 *   and verified through the list.
 * LOAD-01 (must): every request answered within the request timeout, no 5xx, every sampled
 * response valid against the schema of its own request. The spec sets no latency: thresholds
 * (`LOAD_P99_MS`, `LOAD_MAX_ERROR_RATE`) are the user's gate, judged only when set, and reported
 * as that threshold (LOAD-04), apart from the spec's requirements.
 */
import { validate, type SchemaName } from '../../schemas/index.ts';
import { anotherClientBetweenWriteBacks } from '../lib/count-origin.ts';
import { sendWriteBack, transient5xxWarning } from '../lib/write-back.ts';
import { finding, type Finding } from '../../core/finding.ts';
import { isJsonMediaType } from '../lib/headers.ts';
import { parseRateLimitHeaders } from '../lib/rate-limit.ts';
import { parseJson, stringifyJson } from '../lib/json.ts';
import { PacingNotCertified, type PetLease } from '../pacing/client.ts';
import {
  runLoad,
  thresholdHolds,
  type LoadFigures,
  type LoadResult,
  type LoadStep,
  type SampledResponse,
  type Threshold,
  type TlsOptions,
} from './engine.ts';
import { heldFinding, join, observing, probe, waitWithProgress, type Pacer, type ProbeFailure, type ProbeResponse } from './http.ts';
import { judgeWindows } from './overload-check.ts';
import type { RunJournal } from '../journal/writer.ts';

/** Ledger ids and parts this check judges (suites/requirements.yaml). */
export const CAPACITY = {
  id: 'LOAD-01',
  gateId: 'LOAD-04',
  answered: 'answered',
  schemas: 'schemas',
  restored: 'restored',
  prerequisite: 'prerequisite',
  thresholds: 'thresholds',
} as const;

const KEY = '<LOAD_KEY>';

export interface CapacityConfig {
  /** Inventory base address, ending in `/v1`. */
  baseUrl: string;
  /** The run's journal of changes: the mix's pet and its count are journaled before the load changes it. */
  journal?: RunJournal;
  loadKey: string;
  mode: 'list' | 'mix';
  durationS: number;
  /** Arrival rate of the open model (requests per second). */
  ratePerS: number;
  /** Most requests in flight (open model), or the connections of a saturating run. */
  connections: number;
  /** Saturate the target (closed model) instead of the open model: the user's explicit opt-in. */
  saturate?: boolean;
  maxRequests: number;
  timeoutS: number;
  /** The user's gate: p99 latency must stay below it (ms); undefined when not set. */
  p99Ms?: number;
  /** The user's gate: error rate must stay at or below it; undefined when not set. */
  maxErrorRate?: number;
  loopbackOnly: boolean;
  tls?: TlsOptions;
  /** Responses kept for schema validation (default 100). */
  sampleSize?: number;
  /** Longest wait for a Retry-After before restoring the stock (`MAX_RETRY_AFTER_S`). */
  maxRetryAfterS: number;
  /** The run-wide pacer (suites/pacing): every request is sent under its grant. */
  pacer: Pacer;
  progress?: (line: string) => void;
}

export interface CapacityFigures {
  mode: 'list' | 'mix';
  load: LoadFigures | null;
  sampled: number;
  invalidSamples: number;
  /** The thresholds the user set (null: not set, not judged). */
  thresholds: { LOAD_P99_MS: number | null; LOAD_MAX_ERROR_RATE: number | null };
  pet?: { petId: string; original: number; restored: boolean | null };
  requests: { total: number; load: number; setup: number };
  durationS: number;
}

export interface CapacityOutcome {
  findings: Finding[];
  evidence: string[];
  figures: CapacityFigures;
}

function schemaFor(step: string, status: number): SchemaName | undefined {
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

interface PetChoice {
  petId: string;
  original: number;
}

/** Every listed pet with an integer quantity (the mix may update any of them). */
function petsOf(body: string): PetChoice[] {
  const items = parseJson(body);
  if (!Array.isArray(items)) return [];
  const out: PetChoice[] = [];
  for (const item of items as Array<Record<string, unknown>>) {
    const id = item?.petId;
    if ((typeof id === 'number' || typeof id === 'bigint') && typeof item.quantity === 'number' && Number.isInteger(item.quantity)) {
      out.push({ petId: String(id), original: item.quantity });
    }
  }
  return out;
}

function quantityOf(body: string, petId: string): number | undefined {
  const items = parseJson(body);
  if (!Array.isArray(items)) return undefined;
  const item = (items as Array<Record<string, unknown>>).find((i) => i && String(i.petId) === petId);
  return typeof item?.quantity === 'number' ? item.quantity : undefined;
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

/** One capacity run as it goes: its config, findings, evidence and figures. */
interface Ctx {
  config: CapacityConfig;
  progress: (line: string) => void;
  findings: Finding[];
  evidence: string[];
  figures: CapacityFigures;
  authorization: string;
  listUrl: string;
  listPath: string;
}

function newCtx(config: CapacityConfig): Ctx {
  const listUrl = join(config.baseUrl, 'inventory');
  return {
    config,
    progress: config.progress ?? ((line: string) => console.log(line)),
    findings: [],
    evidence: [],
    figures: {
      mode: config.mode,
      load: null,
      sampled: 0,
      invalidSamples: 0,
      thresholds: { LOAD_P99_MS: config.p99Ms ?? null, LOAD_MAX_ERROR_RATE: config.maxErrorRate ?? null },
      requests: { total: 0, load: 0, setup: 0 },
      durationS: 0,
    },
    authorization: `Bearer ${config.loadKey}`,
    listUrl,
    listPath: new URL(listUrl).pathname,
  };
}

/** The pacer would have held LOAD_KEY longer than MAX_RETRY_AFTER_S: not certified. */
function paceFailure(ctx: Ctx, error: unknown): void {
  if (!(error instanceof PacingNotCertified)) throw error;
  ctx.findings.push(
    finding({
      id: CAPACITY.id,
      part: CAPACITY.prerequisite,
      level: 'not-certified',
      message: `the run-wide pacer holds ${KEY} longer than MAX_RETRY_AFTER_S`,
      expected: `a wait of at most ${ctx.config.maxRetryAfterS} s`,
      observed: error.message,
    }),
  );
}

/** One set-up or restore request under its own grant. */
async function send(ctx: Ctx, method: 'GET' | 'PATCH', url: string, body?: string, restore = false): Promise<ProbeResponse | ProbeFailure> {
  let lease;
  try {
    lease = observing(
      await ctx.config.pacer.acquire(KEY, { mode: 'paced', count: 1, ...(restore ? { restore } : {}) }),
      ctx.config.baseUrl,
    );
  } catch (error) {
    paceFailure(ctx, error);
    return { ok: false, error: 'not sent: the pacer held the key', latencyMs: 0 };
  }
  ctx.figures.requests.setup++;
  const r = await probe({ method, url, authorization: ctx.authorization, body, timeoutS: ctx.config.timeoutS, tls: ctx.config.tls });
  if (r.ok) lease.observe(r);
  await lease.release();
  return r;
}

function certificateFinding(observed: string): Finding {
  return finding({
    id: CAPACITY.id,
    part: CAPACITY.answered,
    level: 'fail',
    message: `the target's TLS certificate was refused; nothing carrying ${KEY} was sent`,
    expected: 'a certificate trusted by Node (NODE_EXTRA_CA_CERTS for a private CA), or INSECURE_TLS=1',
    observed,
  });
}

/**
 * The steps of the load: the list, and in the `mix` mode updates of one listed pet (leased from
 * the run's coordinator, so no other check changes or judges it meanwhile) to its quantity + 1 and
 * back. Undefined (with a finding) when the mix has no pet.
 */
async function stepsOf(ctx: Ctx, list: ProbeResponse | ProbeFailure): Promise<{ steps: LoadStep[]; pet?: LeasedPet } | undefined> {
  const { id, restored } = CAPACITY;
  const steps: LoadStep[] = [{ name: `GET ${ctx.listPath}`, path: ctx.listPath }];
  if (ctx.config.mode === 'list') return { steps };
  const leased = list.ok && list.status === 200 ? await leasePet(ctx, list) : undefined;
  const pet = leased && 'petId' in leased ? leased : undefined;
  if (!pet) {
    const observed = !list.ok
      ? list.error
      : list.status !== 200
        ? String(list.status)
        : leased && 'heldMs' in leased
          ? `every listed pet held by other checks for ${Math.round(leased.heldMs / 1000)} s`
          : 'none';
    ctx.findings.push(
      finding({
        id,
        part: restored,
        level: 'not-certified',
        message: 'no pet to update under load',
        expected: `GET ${ctx.listPath} with LOAD_KEY answers 200 with a pet whose quantity is an integer`,
        observed,
      }),
    );
    return undefined;
  }
  ctx.figures.pet = { petId: pet.petId, original: pet.original, restored: null };
  pet.journaled = ctx.config.journal?.change(pet.petId, String(pet.original), `${id} (capacity mix)`, [String(pet.original + 1)]);
  const patchPath = new URL(join(ctx.config.baseUrl, `inventory/${pet.petId}`)).pathname;
  const patch = (quantity: number): LoadStep => ({
    name: `PATCH ${ctx.listPath}/{petId}`,
    method: 'PATCH',
    path: patchPath,
    body: stringifyJson({ quantity }),
    contentType: 'application/json',
  });
  steps.push(patch(pet.original + 1), { name: `GET ${ctx.listPath}`, path: ctx.listPath }, patch(pet.original));
  return { steps, pet };
}

interface LeasedPet extends PetChoice {
  release(retire: boolean): Promise<void>;
  /** Its journal entry (core/journal.ts), closed once its restore is seen in the list. */
  journaled?: string;
}

/**
 * Leases one listed pet for the mix; its quantity is read again when another check held it after
 * the list was read. The wait for a free pet is bounded (the checks that hold pets hold them for
 * seconds, the generated checks for their whole run): past it, `heldMs` says how long it waited.
 */
async function leasePet(ctx: Ctx, list: ProbeResponse): Promise<LeasedPet | { heldMs: number } | undefined> {
  const listedAt = list.receivedAt;
  let pets: PetChoice[];
  try {
    pets = petsOf(list.body);
  } catch {
    return undefined;
  }
  if (!pets.length) return undefined;
  const c = ctx.config;
  const waitMs = (c.durationS + 2 * c.timeoutS + 10) * 1000;
  let lease: PetLease;
  try {
    lease = await c.pacer.acquirePet(
      pets.map((p) => p.petId),
      `capacity-mix-${process.pid}`,
      (c.durationS + 3 * c.timeoutS + c.maxRetryAfterS + 60) * 1000,
      AbortSignal.timeout(waitMs),
    );
  } catch (error) {
    if ((error as Error)?.name === 'TimeoutError') return { heldMs: waitMs };
    throw error;
  }
  let pet = pets.find((p) => p.petId === lease.id);
  if (lease.freedAtMs >= listedAt) {
    const again = await send(ctx, 'GET', ctx.listUrl);
    let quantity: number | undefined;
    try {
      quantity = again.ok && again.status === 200 ? quantityOf(again.body, lease.id) : undefined;
    } catch {
      quantity = undefined;
    }
    pet = quantity === undefined ? undefined : { petId: lease.id, original: quantity };
  }
  if (!pet) {
    await lease.release();
    return undefined;
  }
  return { ...pet, release: (retire) => lease.release(retire) };
}

/** The load itself, under one grant of the planned requests. */
async function loadRun(ctx: Ctx, steps: LoadStep[]): Promise<LoadResult | undefined> {
  const { config } = ctx;
  const planned = config.saturate ? config.maxRequests : Math.min(config.maxRequests, Math.ceil(config.ratePerS * config.durationS));
  let lease;
  try {
    lease = observing(await config.pacer.acquire(KEY, { mode: 'paced', count: planned }), config.baseUrl);
    if (lease.granted < planned) {
      ctx.findings.push(
        finding({
          id: CAPACITY.id,
          part: CAPACITY.prerequisite,
          level: 'note',
          message: `the run-wide pacer allowed fewer requests than planned on ${KEY} (its X-RateLimit-Remaining, less a reserve); the load stopped there`,
          expected: `${planned} requests`,
          observed: `${lease.granted} granted`,
        }),
      );
    }
    const granted = lease;
    return await runLoad({
      label: `capacity (${config.mode})`,
      url: config.baseUrl,
      steps,
      authorization: ctx.authorization,
      model: config.saturate
        ? { kind: 'closed', durationS: config.durationS }
        : { kind: 'open', ratePerS: config.ratePerS, durationS: config.durationS },
      connections: config.connections,
      maxRequests: Math.max(1, Math.min(config.maxRequests, granted.granted)),
      maxDurationS: config.durationS + config.timeoutS + 10,
      timeoutS: config.timeoutS,
      sampleSize: config.sampleSize ?? 100,
      loopbackOnly: config.loopbackOnly,
      tls: config.tls,
      progress: ctx.progress,
      onResponse: (r) => granted.observe(r),
      // A 429 means LOAD_KEY's limit is reached: send nothing more, never before Retry-After.
      stopOnStatus: [429],
      // A run-wide hold of the origin (another key's 429 its Remaining did not predict) stops the load too.
      held: granted.held,
    });
  } catch (error) {
    if (error instanceof PacingNotCertified) paceFailure(ctx, error);
    else
      ctx.findings.push(
        finding({
          id: CAPACITY.id,
          part: CAPACITY.answered,
          level: 'fail',
          message: 'the load could not run',
          expected: 'a completed run',
          observed: (error as Error).message,
        }),
      );
    return undefined;
  } finally {
    await lease?.release();
  }
}

/** Judges a finished load: answers, 5xx, samples, a 429 on LOAD_KEY, the user's thresholds. Returns when LOAD_KEY may be used again. */
function judgeRun(ctx: Ctx, run: LoadResult): number {
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
function answeredFindings(ctx: Ctx, run: LoadResult): void {
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
function schemaFindings(ctx: Ctx, run: LoadResult): void {
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
function prerequisiteFindings(ctx: Ctx, run: LoadResult): number {
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
function thresholdFindings(ctx: Ctx, run: LoadResult): void {
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

function runEvidence(ctx: Ctx, run: LoadResult): void {
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

/**
 * Writes `pet`'s original back once (a 5xx once more, suites/lib/write-back.ts) and reads the list:
 * the PATCH's answer, the listed quantity, and the status of a 5xx that went once more.
 */
async function writeBackOnce(
  ctx: Ctx,
  pet: LeasedPet,
): Promise<{ back: Awaited<ReturnType<typeof send>>; now: number | undefined; first5xx?: number; listLimited: boolean }> {
  const url = join(ctx.config.baseUrl, `inventory/${pet.petId}`);
  const { res: back, first5xx } = await sendWriteBack(() => send(ctx, 'PATCH', url, stringifyJson({ quantity: pet.original }), true));
  const check = await send(ctx, 'GET', ctx.listUrl, undefined, true);
  let now: number | undefined;
  try {
    now = check.ok && check.status === 200 ? quantityOf(check.body, pet.petId) : undefined;
  } catch {
    now = undefined;
  }
  const listLimited = check.ok ? check.status === 429 : /the pacer held the key/.test(check.error);
  return { back, now, listLimited, ...(first5xx !== undefined ? { first5xx } : {}) };
}

/** A write-back of the mix's pet accepted only when sent again after a 5xx: a warning of the restore. */
function warnTransient(ctx: Ctx, pet: LeasedPet, back: Awaited<ReturnType<typeof send>>, first5xx: number | undefined): void {
  if (first5xx === undefined || !back.ok || back.status !== 200) return;
  ctx.findings.push(
    finding({
      id: CAPACITY.id,
      part: CAPACITY.restored,
      level: 'warn',
      message: transient5xxWarning(pet.petId, String(pet.original), first5xx, back.status),
      expected: 'a 2xx to a valid write-back',
      observed: `${first5xx}, then ${back.status}`,
    }),
  );
}

/**
 * Puts the pet the mix changed back to its quantity and verifies it through the list. A write-back
 * answered 200 that the list does not show is sent once more: the same quantity shown again is the
 * server's (a finding), another one is another client's (not certified).
 */
async function restorePet(ctx: Ctx, pet: LeasedPet, notBefore: number): Promise<boolean> {
  const { id, restored } = CAPACITY;
  const waitMs = notBefore - Date.now();
  const maxWaitS = ctx.config.maxRetryAfterS;
  // The harness's own limit, never the server's failure: the run's end-of-run repair puts it back from the journal.
  if (waitMs > maxWaitS * 1000) {
    ctx.findings.push(
      finding({
        id,
        part: restored,
        level: 'not-certified',
        message: `pet ${pet.petId} was not restored by the check: LOAD_KEY must wait (Retry-After) longer than MAX_RETRY_AFTER_S (the run's end-of-run restore puts it back, or names it)`,
        expected: `quantity ${pet.original}`,
        observed: `a wait of ${Math.ceil(waitMs / 1000)} s > ${maxWaitS} s`,
      }),
    );
    return false;
  }
  if (waitMs > 0) await waitWithProgress(waitMs, `Retry-After on ${KEY} before restoring the stock`, ctx.progress);
  let { back, now, first5xx, listLimited } = await writeBackOnce(ctx, pet);
  const shown = now;
  const answered = (b: typeof back) => b.ok && b.status === 200;
  warnTransient(ctx, pet, back, first5xx);
  if (answered(back) && now !== pet.original && now !== undefined) {
    ({ back, now, first5xx, listLimited } = await writeBackOnce(ctx, pet));
    warnTransient(ctx, pet, back, first5xx);
  }
  const ok = answered(back) && now === pet.original;
  ctx.figures.pet = { petId: pet.petId, original: pet.original, restored: ok };
  if (ok && pet.journaled) ctx.config.journal?.done([pet.journaled], 'restored', `${id} (capacity mix restore)`);
  const line = `pet ${pet.petId}: quantity ${pet.original} before, restore PATCH → ${back.ok ? back.status : back.error}, listed afterwards: ${shown !== now ? `${shown ?? 'not found'}, then (written back again) ` : ''}${now ?? 'not found'}`;
  ctx.evidence.push(line);
  const anotherClient = answered(back) && anotherClientBetweenWriteBacks(shown, now);
  // A write-back the pacer held, or a 429 to it, is a limit met on the way, not the server's failure to restore.
  const limited = (!back.ok ? /the pacer held the key/.test(back.error) : back.status === 429) || (answered(back) && listLimited);
  if (!ok)
    ctx.findings.push(
      finding({
        id,
        part: restored,
        level: anotherClient || limited ? 'not-certified' : 'fail',
        message: anotherClient
          ? `the stock changed under load was not restored (pet ${pet.petId}): another client wrote it meanwhile (another count after each write-back)`
          : limited
            ? `the stock changed under load was not restored by the check (pet ${pet.petId}): a rate limit held its write-back (the run's end-of-run restore puts it back, or names it)`
            : `the stock changed under load was not restored (pet ${pet.petId})`,
        expected: `quantity ${pet.original}`,
        observed: line,
      }),
    );
  return ok;
}

/** What one request on LOAD_KEY shows of the key's room, before the capacity runs are planned. */
export interface Headroom {
  /** The answer's status; undefined when none came (the reason in `error`). */
  status?: number;
  /** Its `X-RateLimit-Remaining`, when it carried a valid one. */
  remaining?: number;
  error?: string;
  /** Requests sent: 1, or 0 when the pacer held the key. */
  requests: number;
}

/**
 * One `GET` on LOAD_KEY under the run-wide pacer (Limits rule 1: every response carries
 * `X-RateLimit-Remaining`): how many requests the key still has, so that both capacity runs go at
 * once only where no conformant limiter can refuse them.
 */
export async function headroomOf(config: CapacityConfig): Promise<Headroom> {
  const ctx = newCtx(config);
  const r = await send(ctx, 'GET', ctx.listUrl);
  const requests = ctx.figures.requests.setup;
  if (!r.ok) return { error: r.error, requests };
  const remaining = parseRateLimitHeaders(r.headers).remaining;
  return { status: r.status, ...(remaining !== undefined ? { remaining } : {}), requests };
}

/** Runs one capacity check. Never throws for what the server does. */
export async function runCapacityCheck(config: CapacityConfig): Promise<CapacityOutcome> {
  const ctx = newCtx(config);
  const started = Date.now();
  if (config.tls?.insecure && new URL(config.baseUrl).protocol === 'https:') {
    ctx.findings.push(
      finding({
        id: CAPACITY.id,
        level: 'note',
        message: `the target's TLS certificate was not verified`,
        expected: 'a verified certificate',
        observed: 'INSECURE_TLS=1 (the user opted out of verification)',
      }),
    );
  }
  await (async () => {
    // One request first: the pacer learns LOAD_KEY's window, the mix finds its pet, TLS is checked.
    const list = await send(ctx, 'GET', ctx.listUrl);
    if (!list.ok && list.certificate) return void ctx.findings.push(certificateFinding(list.error));
    const plan = await stepsOf(ctx, list);
    if (!plan) return;
    let restoredPet = false;
    try {
      const run = await loadRun(ctx, plan.steps);
      const notBefore = run ? judgeRun(ctx, run) : 0;
      if (plan.pet) restoredPet = await restorePet(ctx, plan.pet, notBefore);
    } finally {
      // A pet whose restore was not verified is never handed out again.
      await plan.pet?.release(!restoredPet).catch(() => undefined);
    }
  })();
  const { requests } = ctx.figures;
  requests.total = requests.load + requests.setup;
  ctx.figures.durationS = Math.round((Date.now() - started) / 100) / 10;
  ctx.evidence.push(
    `spent by the capacity check (${config.mode}): ${requests.total} requests on ${KEY} (load ${requests.load}, set-up and restore ${requests.setup}), ${ctx.figures.durationS} s`,
  );
  ctx.progress(`[load] capacity (${config.mode}): ${requests.total} requests sent in ${ctx.figures.durationS} s`);
  return { findings: ctx.findings, evidence: ctx.evidence, figures: ctx.figures };
}
