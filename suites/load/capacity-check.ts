import { finding } from '../../core/finding.ts';
import { parseRateLimitHeaders } from '../lib/rate-limit.ts';
import { certificateFinding, judgeRun } from './capacity-judges.ts';
import { loadRun, newCtx, send, stepsOf } from './capacity-plan.ts';
import { restorePet } from './capacity-restore.ts';
import { CAPACITY, type CapacityConfig, type CapacityOutcome, type Headroom, KEY } from './capacity-types.ts';
export { CAPACITY, type CapacityConfig, type CapacityFigures, type CapacityOutcome, type Headroom } from './capacity-types.ts';
export { sampleProblems, userThresholds, judgeThreshold } from './capacity-judges.ts';

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
