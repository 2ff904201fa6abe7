import { finding } from '../../core/finding.ts';
import { parseJson, stringifyJson } from '../lib/json.ts';
import { PacingNotCertified, type PetLease } from '../pacing/client.ts';
import { runLoad, type LoadResult, type LoadStep } from './engine.ts';
import { join, observing, probe, type ProbeFailure, type ProbeResponse } from './http.ts';
import { CAPACITY, type CapacityConfig, type Ctx, KEY, type LeasedPet, type PetChoice } from './capacity-types.ts';

/** Every listed pet with an integer quantity (the mix may update any of them). */
export function petsOf(body: string): PetChoice[] {
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

export function quantityOf(body: string, petId: string): number | undefined {
  const items = parseJson(body);
  if (!Array.isArray(items)) return undefined;
  const item = (items as Array<Record<string, unknown>>).find((i) => i && String(i.petId) === petId);
  return typeof item?.quantity === 'number' ? item.quantity : undefined;
}

export function newCtx(config: CapacityConfig): Ctx {
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
export function paceFailure(ctx: Ctx, error: unknown): void {
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
export async function send(
  ctx: Ctx,
  method: 'GET' | 'PATCH',
  url: string,
  body?: string,
  restore = false,
): Promise<ProbeResponse | ProbeFailure> {
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

/**
 * The steps of the load: the list, and in the `mix` mode updates of one listed pet (leased from
 * the run's coordinator, so no other check changes or judges it meanwhile) to its quantity + 1 and
 * back. Undefined (with a finding) when the mix has no pet.
 */
export async function stepsOf(ctx: Ctx, list: ProbeResponse | ProbeFailure): Promise<{ steps: LoadStep[]; pet?: LeasedPet } | undefined> {
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

/**
 * Leases one listed pet for the mix; its quantity is read again when another check held it after
 * the list was read. The wait for a free pet is bounded (the checks that hold pets hold them for
 * seconds, the generated checks for their whole run): past it, `heldMs` says how long it waited.
 */
export async function leasePet(ctx: Ctx, list: ProbeResponse): Promise<LeasedPet | { heldMs: number } | undefined> {
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
export async function loadRun(ctx: Ctx, steps: LoadStep[]): Promise<LoadResult | undefined> {
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
