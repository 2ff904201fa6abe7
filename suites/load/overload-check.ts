/**
 * The overload check's core (spec: Limits rules 1, 3 and 5; Errors, 429 row; Authentication rule
 * 5), callable without Playwright so that `tests/load/` can run it against any limiter.
 *
 * A limit checked without earning a ban, repeated over `windows` windows:
 * 1. Fresh window: a probe on `RATE_LIMIT_KEY` at the aimed start of the window (the previous
 *    window's `X-RateLimit-Reset` judged against its response's `Date`, and never before a pending
 *    Retry-After). The first window may be the one the 429 sequence's last request opened
 *    (`opening`): that request counts in it. The run's own requests on the key are accounted by
 *    time, never by the Reset label (a sliding log or a weighted counter still counts what the run
 *    sent before Reset): a probe whose Remaining is below Limit minus everything the run sent on
 *    the key within two window lengths shows another consumer of the limit (another client on the
 *    key, or a limit shared with other keys). The check says so and stops: not certified, never
 *    failed (no conformant algorithm is told apart from a second client by one run).
 * 2. Burst: exactly `Remaining + 1` concurrent requests right after the probe. An exact limiter
 *    admits Remaining and refuses one; a racy one admits more. Nothing is sent after the 429.
 * 3. Judgement (`judgeWindows`): every 2xx of a window counts from its first request, probes
 *    included, grouped by the `X-RateLimit-Reset` they share, except in that Reset's last second
 *    by the server's Date; no group may exceed its `X-RateLimit-Limit`. No conformant algorithm
 *    exceeds it: a fixed window's Reset names one window, a sliding log's names its oldest request
 *    (every 2xx under it before its last second was in the log at once), a bucket's or GCRA's
 *    moves on with each admission. Every refusal is a 429 with a valid Retry-After and the three headers.
 * 4. Recovery: the probe after each burst's Retry-After must succeed (after the last burst one
 *    more request only when no later window showed it).
 * Every request goes through the run-wide pacer (suites/pacing). A wait longer than
 * `maxRetryAfterS`, a burst larger than `burstMax` or an unusable key make LOAD-02 not certified,
 * never failed.
 */
import { finding } from '../../core/finding.ts';
import { PacingNotCertified } from '../pacing/client.ts';
import { describeProbe } from './overload-judges.ts';
import { burst, openWindow, recover } from './overload-plan.ts';
import { newCtx, note, summarize } from './overload-recording.ts';
import { KEY, OVERLOAD, type OverloadConfig, type OverloadOutcome, Stop } from './overload-types.ts';
export {
  OVERLOAD,
  RETRY_AFTER_MARGIN_MS,
  RESET_MARGIN_MS,
  AIM_MARGIN_MS,
  type OverloadConfig,
  type EarlierRequests,
  type WindowCount,
  type BurstFigures,
  type OtherKeyFigures,
  type OverloadFigures,
  type OverloadOutcome,
  type WindowJudgement,
} from './overload-types.ts';
export { judgeWindows, describeProbe, accountingWindowS, ownRequestsAt } from './overload-judges.ts';

/** Runs the whole overload check against `config.baseUrl`. Never throws for what the server does. */
export async function runOverloadCheck(config: OverloadConfig): Promise<OverloadOutcome> {
  const ctx = newCtx(config);
  const started = Date.now();
  if (config.opening) {
    note(ctx, config.opening, config.earlier !== undefined);
    ctx.evidence.push(
      describeProbe(`the first burst window opens with the last request sent on ${KEY} before this check`, {
        ok: true,
        status: config.opening.status,
        headers: config.opening.headers,
        body: '',
        receivedAt: config.opening.receivedAt,
        latencyMs: 0,
      }),
    );
  }
  try {
    for (let n = 1; n <= config.windows; n++) {
      const { limit, remaining } = await openWindow(ctx, n);
      ctx.figures.limit = limit;
      await burst(ctx, n, remaining);
    }
    await recover(ctx);
  } catch (error) {
    if (error instanceof Stop) ctx.findings.push(error.f);
    else if (error instanceof PacingNotCertified) {
      ctx.findings.push(
        finding({
          id: OVERLOAD.id,
          part: OVERLOAD.recovery,
          level: 'not-certified',
          message: 'the pacer would have to wait longer than MAX_RETRY_AFTER_S',
          expected: `a wait of at most ${config.maxRetryAfterS} s`,
          observed: error.message,
        }),
      );
    } else
      ctx.findings.push(
        finding({
          id: OVERLOAD.id,
          part: OVERLOAD.admission,
          level: 'fail',
          message: 'the check could not run',
          expected: 'a completed run',
          observed: (error as Error).message,
        }),
      );
  }
  summarize(ctx, started);
  return { findings: ctx.findings, evidence: ctx.evidence, figures: ctx.figures };
}
