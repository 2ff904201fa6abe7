/**
 * RL-17 (should): where a server also sends the IETF `RateLimit` / `RateLimit-Policy` fields
 * (draft-ietf-httpapi-ratelimit-headers-11), they parse as Structured Field lists and agree with
 * `X-RateLimit-*`. A disagreement is a warning, never a failure; a server that sends neither is
 * not judged (the spec requires `X-RateLimit-*` only).
 */
import { test } from '../fixtures.ts';
import { parseHttpDate } from '../lib/http-date.ts';
import { rateLimitFieldWarnings } from './ratelimit-fields.ts';
import { ANNOTATION } from '../../core/results.ts';

test('RL-17 RateLimit and RateLimit-Policy, when sent, parse and agree with X-RateLimit-*', async ({ api, warn }, testInfo) => {
  const res = await api.listInventory();
  const date = parseHttpDate(res.header('date') ?? '');
  const fields = { rateLimit: res.header('ratelimit'), policy: res.header('ratelimit-policy') };
  if (fields.rateLimit === undefined && fields.policy === undefined) {
    testInfo.annotations.push({
      type: ANNOTATION.evidence,
      description: `${res.label}: no RateLimit or RateLimit-Policy field (not required; nothing to judge)`,
    });
    return;
  }
  testInfo.annotations.push({
    type: ANNOTATION.evidence,
    description: `${res.label}: RateLimit ${fields.rateLimit ?? '(none)'}; RateLimit-Policy ${fields.policy ?? '(none)'}`,
  });
  const warnings = rateLimitFieldWarnings(fields, {
    limit: res.rateLimit.limit,
    remaining: res.rateLimit.remaining,
    reset: res.rateLimit.reset,
    date: date === undefined ? undefined : Math.floor(date.ms / 1000),
  });
  for (const w of warnings) warn(`RL-17 (should): ${res.label}: ${w}`);
});
