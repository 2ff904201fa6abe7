/**
 * The overload check's traffic plan (suites/load/overload-check.ts): the waits, the probe that
 * opens each window, the burst of Remaining + 1, the list on the other key during it, and the
 * recovery after Retry-After. Every request through the run-wide pacer; nothing on a key while a
 * 429 on it pends.
 */
import { finding } from '../../core/finding.ts';
import { runLoad } from './engine.ts';
import { parseRateLimitHeaders, secondsUntilReset } from '../lib/rate-limit.ts';
import { describeSpread } from './burst-spread.ts';
import { outsidePlanFindings } from './outside-plan.ts';
import { heldFinding, observing, probe, waitWithProgress, type ProbeFailure, type ProbeResponse } from './http.ts';
import {
  accountingWindowS,
  answeredAtOnce,
  certificateStop,
  describeProbe,
  ownRequestsAt,
  partlyUsed,
  slowProbeFinding,
} from './overload-judges.ts';
import { type Ctx, burstLosses, note } from './overload-recording.ts';
import { AIM_MARGIN_MS, KEY, OTHER, OVERLOAD, Stop } from './overload-types.ts';

/** Waits until `untilMs`, sending nothing; a wait beyond MAX_RETRY_AFTER_S stops the check, not certified. */
export async function wait(ctx: Ctx, untilMs: number, what: string): Promise<void> {
  const ms = untilMs - Date.now();
  if (ms <= 0) return;
  if (ms > ctx.config.maxRetryAfterS * 1000) {
    throw new Stop(
      finding({
        id: OVERLOAD.id,
        part: OVERLOAD.recovery,
        level: 'not-certified',
        message: `${KEY} must wait for ${what} before the next request; the check stops there and sends nothing more on it`,
        expected: `a wait of at most MAX_RETRY_AFTER_S=${ctx.config.maxRetryAfterS} s`,
        observed: `${Math.ceil(ms / 1000)} s`,
      }),
    );
  }
  await waitWithProgress(ms, `${what} on ${KEY}`, ctx.progress);
  ctx.figures.waitedS += ms / 1000;
}

/** One request on the key, after every pending Retry-After, under its own grant. */
export async function probeKey(ctx: Ctx, what: string): Promise<ProbeResponse> {
  await wait(ctx, ctx.notBefore, 'the Retry-After of a 429');
  const lease = observing(await ctx.config.pacer.acquire(KEY, { mode: 'exhaust', count: 1 }), ctx.config.baseUrl);
  ctx.figures.requests.probes++;
  const r = await probe({ url: ctx.listUrl, authorization: ctx.authorization, timeoutS: ctx.config.timeoutS, tls: ctx.config.tls });
  if (r.ok) lease.observe(r);
  await lease.release();
  ctx.evidence.push(describeProbe(`${what}: GET ${ctx.listPath} (${KEY})`, r));
  if (!r.ok) {
    if (r.certificate) throw certificateStop(r.error);
    if (r.heldMs !== undefined) throw new Stop(heldFinding(OVERLOAD.id, OVERLOAD.refusals, 1, r.heldMs));
    const other = r.timedOut ? await listOnOtherKey(ctx) : undefined;
    if (r.timedOut && !answeredAtOnce(other, ctx.config.timeoutS)) throw new Stop(slowProbeFinding(r.error, other));
    ctx.lostKinds.probes++;
    throw new Stop(
      finding({
        id: OVERLOAD.id,
        part: OVERLOAD.refusals,
        level: 'fail',
        message: `the probe got no answer`,
        expected: 'an answer within the request timeout',
        observed: other?.ok
          ? `${r.error}; the list on ${OTHER}, asked for right after it, came back in ${Math.round(other.latencyMs)} ms`
          : r.error,
      }),
    );
  }
  // A probe answered otherwise (an unusable key, a 5xx) ends the check with its own finding.
  note(ctx, { step: 'probe', status: r.status, headers: r.headers, receivedAt: r.receivedAt });
  if (ctx.outside.length) throw stopOutside(ctx, what);
  return r;
}

/** The probe's status as the check needs it: a 2xx with usable Limit and Remaining, else a Stop. */
export function usableProbe(ctx: Ctx, first: ProbeResponse, n: number): { limit: number; remaining: number; window: string } {
  const { id, admission, refusals, recovery } = OVERLOAD;
  if (first.status === 429) {
    throw new Stop(
      finding({
        id,
        part: recovery,
        level: 'fail',
        message: `after waiting its Retry-After the key still got 429`,
        expected: '2xx once Retry-After has passed',
        observed: describeProbe(`window ${n}, probe`, first),
      }),
    );
  }
  if (first.status >= 500)
    throw new Stop(
      finding({
        id,
        part: refusals,
        level: 'fail',
        message: 'the probe before a burst got a 5xx',
        expected: '2xx or 429',
        observed: String(first.status),
      }),
    );
  if (first.status < 200 || first.status >= 300) {
    throw new Stop(
      finding({
        id,
        part: admission,
        level: 'not-certified',
        message: `RATE_LIMIT_KEY must be a valid key; the burst was not sent`,
        expected: `GET ${ctx.listPath} with it answers 2xx`,
        observed: `${first.status}`,
      }),
    );
  }
  const info = parseRateLimitHeaders(first.headers);
  if (info.limit === undefined || info.remaining === undefined) {
    throw new Stop(
      finding({
        id,
        part: refusals,
        level: 'fail',
        message: `the probe's rate-limit headers cannot size the burst`,
        expected: 'X-RateLimit-Limit and X-RateLimit-Remaining as integers',
        observed: `${info.missing.join(', ') || 'present'}${info.problems.length ? `; ${info.problems.join('; ')}` : ''}`,
      }),
    );
  }
  return { limit: info.limit, remaining: info.remaining, window: info.raw.reset ?? '(none)' };
}

/**
 * Opens window `n` for a burst: waits for its aimed start (the latest of every pending
 * Retry-After and the previous window's Reset, judged against its response's Date), probes, and
 * accepts the window unless its Remaining is below what the run's own requests explain
 * (`ownRequestsAt`): then another consumer uses the limit, and the check stops, not certified.
 * A partly used window whose Reset lies beyond MAX_RETRY_AFTER_S (a longer quota, such as the
 * day's, spent by earlier runs) is named as that, not certified too.
 */
export async function openWindow(ctx: Ctx, n: number): Promise<{ limit: number; remaining: number }> {
  const pending = ctx.refusedSinceProbe;
  if (n > 1) await wait(ctx, Math.max(ctx.notBefore, ctx.resetAt + AIM_MARGIN_MS), 'the start of a fresh window (X-RateLimit-Reset)');
  let first = await probeKey(ctx, `window ${n}, probe`);
  // Refused (the key was limited already): its Retry-After is waited out (nothing sent before) and the key tried once more.
  if (first.status === 429) first = await probeKey(ctx, `window ${n}, after Retry-After`);
  const probe = usableProbe(ctx, first, n);
  if (pending) ctx.figures.recovered ??= true;
  ctx.refusedSinceProbe = false;
  const windowS = accountingWindowS(ctx.longestResetS, probe.limit, ctx.config.planMinuteLimit);
  const own = ownRequestsAt(ctx.ownAt, first.receivedAt, windowS);
  const unexplained = probe.limit - own - probe.remaining;
  if (unexplained <= 0) return probe;
  ctx.figures.foreign.push({ window: probe.window, requests: unexplained });
  const untilReset = secondsUntilReset(parseRateLimitHeaders(first.headers));
  if (untilReset !== undefined && untilReset > ctx.config.maxRetryAfterS)
    await wait(ctx, first.receivedAt + untilReset * 1000, partlyUsed(first, probe));
  throw new Stop(
    finding({
      id: OVERLOAD.id,
      part: OVERLOAD.admission,
      level: 'not-certified',
      message: `${KEY} is used by another client, or its limit is shared with other keys (this run sends on API_KEY and LOAD_KEY meanwhile): its X-RateLimit-Remaining fell by ${unexplained} more than this run sent on it; nothing more is sent on it`,
      expected: `X-RateLimit-Remaining ≥ Limit ${probe.limit} − the ${own} requests this run sent on ${KEY} in the last ${2 * windowS + 1} s (two window lengths)`,
      observed: `Remaining ${probe.remaining} (Reset ${probe.window})`,
    }),
  );
}

/**
 * The list on the other key, asked for right after a probe on the key got no answer in time (never
 * on the key itself: the probe may have met a 429 the run never saw); undefined without the other
 * key, or when the pacer holds it at its reserve.
 */
export async function listOnOtherKey(ctx: Ctx): Promise<ProbeResponse | ProbeFailure | undefined> {
  const { config } = ctx;
  if (!config.otherKey) return undefined;
  let lease;
  try {
    lease = observing(await config.pacer.acquire(OTHER, { mode: 'paced', count: 1 }), config.baseUrl);
  } catch {
    return undefined;
  }
  ctx.figures.requests.otherKey++;
  const r = await probe({ url: ctx.listUrl, authorization: `Bearer ${config.otherKey}`, timeoutS: config.timeoutS, tls: config.tls });
  if (r.ok) lease.observe(r);
  await lease.release();
  return r;
}

/** One paced request on the other key while a burst runs (never meeting a 429 on it). */
export async function watchOtherKey(ctx: Ctx): Promise<void> {
  const { other } = ctx;
  if (!other) return;
  // None when the other key is at its reserve: it is not spent on a should-level check.
  const r = await listOnOtherKey(ctx);
  if (!r) return;
  other.probes++;
  other.latenciesMs.push(r.latencyMs);
  other.statuses.push(r.ok ? r.status : 0);
}

/** Burst `n`: exactly Remaining + 1 concurrent requests, nothing more once a 429 arrived. */
export async function burst(ctx: Ctx, n: number, remaining: number): Promise<void> {
  const { config } = ctx;
  const size = remaining + 1;
  if (size > config.burstMax) {
    throw new Stop(
      finding({
        id: OVERLOAD.id,
        part: OVERLOAD.admission,
        level: 'not-certified',
        message: `the burst would exceed LOAD_BURST_MAX`,
        expected: `Remaining + 1 ≤ LOAD_BURST_MAX=${config.burstMax}`,
        observed: `Remaining + 1 = ${size}`,
      }),
    );
  }
  const lease = observing(await config.pacer.acquire(KEY, { mode: 'exhaust', count: size }), config.baseUrl);
  if (lease.granted < size) {
    await lease.release();
    const why = lease.limitedBy
      ? `the run-wide pacer did not grant the whole burst at once: ${lease.limitedBy}`
      : 'the run-wide pacer did not grant the whole burst at once';
    throw new Stop(
      finding({
        id: OVERLOAD.id,
        part: OVERLOAD.admission,
        level: 'not-certified',
        message: why,
        expected: `Remaining + 1 = ${size} requests granted together`,
        observed: `${lease.granted} granted`,
      }),
    );
  }
  const connections = Math.min(config.burstConnections, size);
  const run = runLoad({
    label: `overload burst ${n}/${config.windows}`,
    url: config.baseUrl,
    steps: [{ name: `GET ${ctx.listPath}`, path: ctx.listPath }],
    authorization: ctx.authorization,
    model: { kind: 'burst', count: size },
    connections,
    maxRequests: size,
    // A larger burst goes in waves, one after another (engine.ts): each may take a request timeout.
    maxDurationS: Math.ceil(size / connections) * config.timeoutS + 5,
    timeoutS: config.timeoutS,
    recordAll: true,
    sampleSize: 0,
    loopbackOnly: config.loopbackOnly,
    tls: config.tls,
    progress: ctx.progress,
    stopOnStatus: [429],
    onResponse: (r) => lease.observe(r),
  });
  let result;
  try {
    [result] = await Promise.all([run, n === 1 ? watchOtherKey(ctx) : Promise.resolve()]);
  } finally {
    await lease.release();
  }
  ctx.figures.requests.burst += result.figures.sent;
  if (result.tlsError) throw certificateStop(result.tlsError);
  const f = result.figures;
  const burstLost = f.socketErrors + f.timeouts + f.unanswered;
  burstLosses(ctx, f, config.timeoutS);
  for (const r of result.responses) note(ctx, r);
  // A request without an answer may have counted too: the run's own, as of the burst's end.
  for (let i = 0; i < burstLost; i++) ctx.ownAt.push(Date.now());
  const resets = [
    ...new Set(
      result.responses.filter((r) => r.status >= 200 && r.status < 300).map((r) => parseRateLimitHeaders(r.headers).raw.reset ?? '(none)'),
    ),
  ];
  ctx.figures.bursts.push({
    remainingAtProbe: remaining,
    size,
    admitted: f.count2xx,
    refused: f.requests - f.count2xx,
    lost: burstLost,
    durationS: f.durationS,
    resets,
    sendSpreadMs: f.sendSpreadMs,
    firstAnswerMs: f.firstAnswerMs,
  });
  ctx.evidence.push(
    `window ${n}: burst of Remaining + 1 = ${size} × GET ${ctx.listPath} on ${f.connections} connections in ${f.durationS} s: ` +
      `${f.count2xx} × 2xx, ${
        Object.entries(f.statusCodes)
          .filter(([c]) => !c.startsWith('2'))
          .map(([c, k]) => `${k} × ${c}`)
          .join(', ') || 'no refusal'
      }` +
      `${f.sent < size ? ` (${size - f.sent} not sent after the 429)` : ''}, lost ${burstLost}; ${describeSpread(f)}`,
  );
  if (ctx.outside.length) throw stopOutside(ctx, `burst ${n}`);
}

/** A 429 outside the plan met in `what`: what it breaks joins the findings, the check stops not certified. */
function stopOutside(ctx: Ctx, what: string): Stop {
  const [stop, ...broken] = outsidePlanFindings(ctx.outside, {
    id: OVERLOAD.id,
    what,
    listUrl: ctx.listUrl,
    listPath: ctx.listPath,
    keyLabel: KEY,
  });
  ctx.findings.push(...broken);
  return new Stop(stop!);
}

/** After the last burst, when no later probe judged it: its Retry-After waited out (nothing sent before), then one request. */
export async function recover(ctx: Ctx): Promise<void> {
  if (ctx.figures.recovered !== null) return;
  const pending = ctx.refusedSinceProbe;
  let after = await probeKey(ctx, `after the last burst's Retry-After`);
  // No 429 was pending (a limiter that refilled during the burst admitted it all): a 429 now is
  // the limit itself, not a failed recovery; its Retry-After is waited out and the key tried once more.
  if (!pending && after.status === 429) after = await probeKey(ctx, `after the Retry-After of that 429`);
  ctx.figures.recovered = after.status >= 200 && after.status < 300;
  if (!ctx.figures.recovered) {
    ctx.findings.push(
      finding({
        id: OVERLOAD.id,
        part: OVERLOAD.recovery,
        level: 'fail',
        message: `after waiting the largest Retry-After the key did not work again`,
        expected: '2xx',
        observed: describeProbe('probe', after),
      }),
    );
  }
}
