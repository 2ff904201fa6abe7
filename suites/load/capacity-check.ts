/**
 * The capacity check's core (spec: Endpoints 1 and 2, Errors; issue "Load and rate-limiter
 * accuracy"), callable without Playwright so that `tests/load/` can run it against any server.
 *
 * Sustained autocannon load with a key whose limit will not be reached (`LOAD_KEY`):
 * - `list`: `GET /inventory` only;
 * - `mix`: list and `PATCH /inventory/{petId}` of one pet, whose quantity is restored afterwards
 *   and verified through the list.
 * Must: no 5xx, no socket errors or timeouts, every sampled response valid against the schemas.
 * Thresholds (k6-style, configurable): p99 latency and error rate; a breach names the threshold,
 * its limit and the observed value.
 */
import { validate, type SchemaName } from '../../schemas/index.ts';
import { isJsonMediaType } from '../lib/headers.ts';
import { parseJson, stringifyJson } from '../lib/json.ts';
import { breachedThresholds, runLoad, type LoadFigures, type LoadStep, type SampledResponse } from '../lib/load.ts';
import { join, probe, waitWithProgress } from './http.ts';
import { judgeBurst } from './overload-check.ts';

/** What this check decides, as the prefix of every finding: the ledger id (suites/requirements.yaml) and the part. */
/** A p99 over fewer responses than this says nothing: slow requests still in flight at the end have no latency. */
const MIN_LATENCY_SAMPLES = 100;

export const CAPACITY_IDS = {
  robustness: 'LOAD-01 (no errors)',
  schemas: 'LOAD-01 (schemas)',
  thresholds: 'LOAD-01 (thresholds)',
  restored: 'LOAD-01 (restored)',
  prerequisite: 'LOAD-01 (prerequisite)',
} as const;

export interface CapacityConfig {
  /** Inventory base address, ending in `/v1`. */
  baseUrl: string;
  loadKey: string;
  mode: 'list' | 'mix';
  durationS: number;
  connections: number;
  maxRequests: number;
  timeoutS: number;
  p99Ms: number;
  maxErrorRate: number;
  loopbackOnly: boolean;
  /** Responses kept for schema validation (default 100). */
  sampleSize?: number;
  /** Longest wait for a Retry-After before restoring the stock (default 120). */
  maxRetryAfterS?: number;
  progress?: (line: string) => void;
}

export interface CapacityFigures {
  mode: 'list' | 'mix';
  load: LoadFigures | null;
  sampled: number;
  invalidSamples: number;
  thresholds: { LOAD_P99_MS: number; LOAD_MAX_ERROR_RATE: number };
  pet?: { petId: string; original: number; restored: boolean | null };
  requests: { total: number; load: number; setup: number };
}

export interface CapacityOutcome {
  failures: string[];
  warnings: string[];
  evidence: string[];
  figures: CapacityFigures;
}

function schemaFor(step: string, status: number): SchemaName | undefined {
  if (status >= 200 && status < 300) return step.startsWith('PATCH') ? 'InventoryItem' : 'Inventory';
  // The 429 body is not shown by the spec; every other error uses the Error object.
  if (status !== 429 && status >= 400) return 'Error';
  return undefined;
}

/** Problems of one sampled response: JSON content type, parseable body, schema. */
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

function findPet(body: string): PetChoice | undefined {
  const items = parseJson(body);
  if (!Array.isArray(items)) return undefined;
  for (const item of items as Array<Record<string, unknown>>) {
    const id = item?.petId;
    if ((typeof id === 'number' || typeof id === 'bigint') && typeof item.quantity === 'number' && Number.isInteger(item.quantity)) {
      return { petId: String(id), original: item.quantity };
    }
  }
  return undefined;
}

function quantityOf(body: string, petId: string): number | undefined {
  const items = parseJson(body);
  if (!Array.isArray(items)) return undefined;
  const item = (items as Array<Record<string, unknown>>).find((i) => i && String(i.petId) === petId);
  return typeof item?.quantity === 'number' ? item.quantity : undefined;
}

/** Runs one capacity check. Never throws for what the server does. */
export async function runCapacityCheck(config: CapacityConfig): Promise<CapacityOutcome> {
  const { robustness, schemas, thresholds, restored, prerequisite } = CAPACITY_IDS;
  const progress = config.progress ?? ((line: string) => console.log(line));
  const failures: string[] = [];
  const warnings: string[] = [];
  const evidence: string[] = [];
  const requests = { total: 0, load: 0, setup: 0 };
  const figures: CapacityFigures = {
    mode: config.mode,
    load: null,
    sampled: 0,
    invalidSamples: 0,
    thresholds: { LOAD_P99_MS: config.p99Ms, LOAD_MAX_ERROR_RATE: config.maxErrorRate },
    requests,
  };
  const done = (): CapacityOutcome => {
    requests.total = requests.load + requests.setup;
    evidence.push(`load phase requests of this check: ${requests.total} (load ${requests.load}, set-up and restore ${requests.setup})`);
    progress(`[load] capacity (${config.mode}): ${requests.total} requests sent`);
    return { failures, warnings, evidence, figures };
  };
  const authorization = `Bearer ${config.loadKey}`;
  const listUrl = join(config.baseUrl, 'inventory');
  const listPath = new URL(listUrl).pathname;
  const send = async (method: 'GET' | 'PATCH', url: string, body?: string) => {
    requests.setup++;
    return probe({ method, url, authorization, body, timeoutS: config.timeoutS });
  };

  const steps: LoadStep[] = [{ name: `GET ${listPath}`, path: listPath }];
  let pet: PetChoice | undefined;
  if (config.mode === 'mix') {
    const list = await send('GET', listUrl);
    if (!list.ok || list.status !== 200) {
      failures.push(`${restored} prerequisite: GET ${listPath} with LOAD_KEY answered ${list.ok ? list.status : list.error}; no pet to update`);
      return done();
    }
    try {
      pet = findPet(list.body);
    } catch {
      pet = undefined;
    }
    if (!pet) {
      failures.push(`${restored} prerequisite: the inventory lists no pet with an integer quantity to update under load`);
      return done();
    }
    figures.pet = { ...pet, restored: null };
    const patchPath = new URL(join(config.baseUrl, `inventory/${pet.petId}`)).pathname;
    const patch = (quantity: number): LoadStep => ({
      name: `PATCH ${listPath}/{petId}`,
      method: 'PATCH',
      path: patchPath,
      body: stringifyJson({ quantity }),
      contentType: 'application/json',
    });
    steps.push(patch(pet.original + 1), { name: `GET ${listPath}`, path: listPath }, patch(pet.original));
  }

  let run;
  let notBefore = 0;
  try {
    run = await runLoad({
      label: `capacity (${config.mode})`,
      url: config.baseUrl,
      steps,
      authorization,
      connections: config.connections,
      durationS: config.durationS,
      maxRequests: config.maxRequests,
      maxDurationS: config.durationS + config.timeoutS + 10,
      timeoutS: config.timeoutS,
      sampleSize: config.sampleSize ?? 100,
      loopbackOnly: config.loopbackOnly,
      progress,
      // A 429 means LOAD_KEY's limit is reached: stop at once, never keep sending before Retry-After.
      stopOnStatus: [429],
    });
  } catch (error) {
    failures.push(`${robustness} the load could not run: ${(error as Error).message}`);
  }

  if (run) {
    const f = run.figures;
    figures.load = f;
    requests.load = f.sent;
    if (f.requests === 0) failures.push(`${robustness} no response at all under load (socket errors ${f.socketErrors}, timeouts ${f.timeouts})`);
    if (f.count5xx > 0) {
      const codes = Object.entries(f.statusCodes).filter(([c]) => c.startsWith('5')).map(([c, n]) => `${c} ×${n}`).join(', ');
      failures.push(`${robustness} ${f.count5xx} responses under load were 5xx (${codes}); expected none`);
    }
    if (f.socketErrors > 0) failures.push(`${robustness} ${f.socketErrors} socket errors under load; expected none`);
    if (f.unanswered > f.connections) {
      failures.push(
        `${robustness} ${f.unanswered} requests got no response and no error (connection closed with a request outstanding; ` +
          `at most ${f.connections} may be in flight when the run stops); expected none`,
      );
    }
    if (f.timeouts > 0) failures.push(`${robustness} ${f.timeouts} requests timed out (LOAD_TIMEOUT_S=${config.timeoutS}) under load; expected none`);

    const problems = run.samples.flatMap((s) => sampleProblems(s).map((p) => ({ p, s })));
    figures.sampled = run.samples.length;
    figures.invalidSamples = new Set(problems.map((x) => x.s)).size;
    if (run.samples.length === 0 && f.requests > 0) failures.push(`${schemas} no response was sampled for schema validation`);
    if (problems.length) {
      failures.push(
        `${schemas} ${figures.invalidSamples} of ${run.samples.length} sampled responses are invalid: ` +
          problems.slice(0, 5).map((x) => x.p).join('; ') + (problems.length > 5 ? `; … (${problems.length} problems)` : ''),
      );
    }
    if (run.stoppers.length) {
      const held = judgeBurst(run.stoppers);
      notBefore = held.notBefore;
      failures.push(
        `${prerequisite} LOAD_KEY met its rate limit after ${f.requests} requests (429, Retry-After ${held.largestRetryAfterS ?? 'invalid'} s); ` +
          'the load stopped at once. Use a key whose limit this load does not reach, or lower LOAD_DURATION_S or LOAD_CONNECTIONS',
      );
    }
    failures.push(
      ...breachedThresholds([
        { name: 'LOAD_P99_MS', what: 'p99 latency', observed: f.latencyMs.p99, limit: config.p99Ms, op: '<', unit: 'ms' },
        { name: 'LOAD_MAX_ERROR_RATE', what: 'error rate', observed: f.errorRate, limit: config.maxErrorRate, op: '<=' },
      ]).map((line) => `${thresholds} ${line}`),
    );
    if (f.requests > 0 && f.requests < MIN_LATENCY_SAMPLES) {
      failures.push(
        `${thresholds} only ${f.requests} responses in ${f.durationS} s on ${f.connections} connections (${f.unanswered} unanswered at the end): ` +
          `at least ${MIN_LATENCY_SAMPLES} are needed to judge LOAD_P99_MS, since requests still in flight have no latency; ` +
          'the server answered too slowly under this load, or raise LOAD_DURATION_S',
      );
    }
    evidence.push(
      `${f.steps.join(' + ')}: ${f.requests} requests on ${f.connections} connections in ${f.durationS} s = ${f.requestsPerSecond} req/s; ` +
        `p50 ${f.latencyMs.p50} ms, p90 ${f.latencyMs.p90} ms, p99 ${f.latencyMs.p99} ms (threshold < ${config.p99Ms} ms); ` +
        `statuses ${Object.entries(f.statusCodes).map(([c, n]) => `${c} ×${n}`).join(', ') || 'none'}; 5xx ${f.count5xx}; ` +
        `socket errors ${f.socketErrors}; timeouts ${f.timeouts}; unanswered ${f.unanswered}; error rate ${f.errorRate} (threshold ≤ ${config.maxErrorRate})`,
    );
    evidence.push(`${run.samples.length} sampled responses validated against the schemas, ${figures.invalidSamples} invalid`);
  }

  if (pet && figures.pet) {
    const waitMs = notBefore - Date.now();
    const maxWaitS = config.maxRetryAfterS ?? 120;
    if (waitMs > maxWaitS * 1000) {
      failures.push(
        `${restored} pet ${pet.petId} was not restored to quantity ${pet.original}: LOAD_KEY must wait ${Math.ceil(waitMs / 1000)} s ` +
          `(Retry-After), more than MAX_RETRY_AFTER_S=${maxWaitS}; restore it by hand`,
      );
      return done();
    }
    if (waitMs > 0) await waitWithProgress(waitMs, 'Retry-After on <LOAD_KEY> before restoring the stock', progress);
    const patchUrl = join(config.baseUrl, `inventory/${pet.petId}`);
    const back = await send('PATCH', patchUrl, stringifyJson({ quantity: pet.original }));
    const check = await send('GET', listUrl);
    let now: number | undefined;
    try {
      now = check.ok && check.status === 200 ? quantityOf(check.body, pet.petId) : undefined;
    } catch {
      now = undefined;
    }
    figures.pet.restored = back.ok && back.status === 200 && now === pet.original;
    const line = `pet ${pet.petId}: quantity ${pet.original} before, restore PATCH → ${back.ok ? back.status : back.error}, listed afterwards: ${now ?? 'not found'}`;
    evidence.push(line);
    if (!figures.pet.restored) failures.push(`${restored} the stock changed under load was not restored: ${line}`);
  }
  return done();
}

