import { anotherClientBetweenWriteBacks } from '../lib/count-origin.ts';
import { sendWriteBack, transient5xxWarning } from '../lib/write-back.ts';
import { finding } from '../../core/finding.ts';
import { stringifyJson } from '../lib/json.ts';
import { join, waitWithProgress } from './http.ts';
import { quantityOf, send } from './capacity-plan.ts';
import { CAPACITY, type Ctx, KEY, type LeasedPet } from './capacity-types.ts';
import { writeBackLeftAlone } from '../journal/decision.ts';

/**
 * Writes `pet`'s original back once (a 5xx once more, suites/lib/write-back.ts) and reads the list:
 * the PATCH's answer, the listed quantity, and the status of a 5xx that went once more.
 */
export async function writeBackOnce(
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
export function warnTransient(ctx: Ctx, pet: LeasedPet, back: Awaited<ReturnType<typeof send>>, first5xx: number | undefined): void {
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
 * The journal's rule (suites/journal/decision.ts) before the write-back: a listed count that is
 * neither the original nor one the mix wrote is somebody else's; it is left alone (not certified, named).
 */
async function leftAlone(ctx: Ctx, pet: LeasedPet): Promise<boolean> {
  const check = await send(ctx, 'GET', ctx.listUrl);
  const found = check.ok && check.status === 200 ? quantityOf(check.body, pet.petId) : undefined;
  const written = ctx.config.journal?.writtenOn(pet.petId);
  const reason = found === undefined ? undefined : writeBackLeftAlone(pet.petId, String(pet.original), written, String(found));
  if (!reason) return false;
  if (pet.journaled) ctx.config.journal?.done([pet.journaled], 'left-alone', `${CAPACITY.id} (capacity mix restore)`);
  ctx.figures.pet = { petId: pet.petId, original: pet.original, restored: false };
  ctx.evidence.push(reason);
  ctx.findings.push(
    finding({
      id: CAPACITY.id,
      part: CAPACITY.restored,
      level: 'not-certified',
      message: reason,
      expected: `quantity ${pet.original}`,
      observed: `quantity ${found}`,
    }),
  );
  return true;
}

/**
 * Puts the pet the mix changed back to its quantity and verifies it through the list. A write-back
 * answered 200 that the list does not show is sent once more: the same quantity shown again is the
 * server's (a finding), another one is another client's (not certified).
 */
export async function restorePet(ctx: Ctx, pet: LeasedPet, notBefore: number): Promise<boolean> {
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
  if (await leftAlone(ctx, pet)) return false;
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
