/**
 * Spec: Limits, rules 1 and 2 ("Every API response carries the headers `X-RateLimit-Limit`,
 * `X-RateLimit-Remaining` and `X-RateLimit-Reset`"; Reset is a Unix timestamp); the plan table.
 * RFC 9110 §6.6.1 (Date on 2xx and 4xx). Reset is judged against the response's Date, never
 * against the local clock; it is not required to be after Date nor within 60 s.
 */
import {
  test,
  expectFact,
  expectNoDeviation,
  missingPrerequisiteReason,
  type ApiClient,
  type ApiResponse,
  type Stock,
  type KeyName,
} from '../fixtures.ts';
import { ERROR_PATHS } from '../errors/paths.ts';
import { parseHttpDate } from '../lib/http-date.ts';
import { limitMatchesPlan } from '../lib/rate-limit.ts';
import { PLAN_LIMITS, type Plan } from '../../core/plans.ts';
import type { OncePerRun } from '../fixtures/run.ts';
import { countdownOfRun, countsDown, snapshotOf } from './countdown.ts';
import { rateLimitOf, type Snapshot } from './exhaust.ts';

interface ResponseKind {
  name: string;
  mutates: boolean;
  send(api: ApiClient, stock: Stock, requirementId: string): Promise<ApiResponse>;
}

const KINDS: ResponseKind[] = [
  { name: '200 listInventory', mutates: false, send: (api) => api.listInventory() },
  { name: '2xx sendMessage', mutates: true, send: (api) => api.sendMessage({ message: 'rate-limit header check' }) },
  ...ERROR_PATHS,
];

const CLAUSES: { id: string; fact: string; check: (res: ApiResponse) => string[] }[] = [
  {
    id: 'RL-01',
    fact: 'the three X-RateLimit headers are present',
    check: (res) => res.rateLimit.missing.map((name) => `${name} is missing`),
  },
  {
    id: 'RL-02',
    fact: 'X-RateLimit-Reset is epoch seconds in range of Date',
    check: (res) => {
      if (res.rateLimit.raw.reset === undefined) return ['X-RateLimit-Reset is missing'];
      return res.rateLimit.problems.filter((p) => p.startsWith('X-RateLimit-Reset'));
    },
  },
  {
    id: 'RL-03',
    fact: 'Limit and Remaining are integers with 0 <= Remaining <= Limit',
    check: (res) => {
      const { raw, problems } = res.rateLimit;
      if (raw.limit === undefined || raw.remaining === undefined) return ['X-RateLimit-Limit or -Remaining is missing'];
      return problems.filter((p) => !p.startsWith('X-RateLimit-Reset'));
    },
  },
  {
    id: 'HTTP-01',
    fact: 'Date is present and an HTTP-date',
    check: (res) => {
      if (!((res.status >= 200 && res.status < 300) || (res.status >= 400 && res.status < 500))) return [];
      const date = res.header('date');
      if (date === undefined) return [`Date is missing on a ${res.status}`];
      return parseHttpDate(date) ? [] : [`Date ${JSON.stringify(date)} is not an HTTP-date`];
    },
  },
];

for (const kind of KINDS) {
  for (const clause of CLAUSES) {
    test(`${clause.id} ${kind.name}: ${clause.fact}`, { tag: kind.mutates ? ['@mutates'] : [] }, async ({ api, stock }) => {
      const res = await kind.send(api, stock, clause.id);
      const raw = res.rateLimit.raw;
      expectNoDeviation(
        clause.check(res),
        'the rate-limit headers as the clause states',
        `${res.label} (Limit ${raw.limit ?? '-'}, Remaining ${raw.remaining ?? '-'}, Reset ${raw.reset ?? '-'}, Date ${res.header('date') ?? '-'})`,
        res,
        clause.id,
      );
    });
  }
}

const KEYS: { key: KeyName; keyVar: string; planVar: string; plan: (api: ApiClient) => Plan | undefined }[] = [
  { key: 'api', keyVar: 'API_KEY', planVar: 'API_PLAN', plan: (api) => api.env.apiPlan },
  { key: 'rate-limit', keyVar: 'RATE_LIMIT_KEY', planVar: 'RATE_LIMIT_PLAN', plan: (api) => api.env.rateLimitPlan },
];

/**
 * A response on `key`: on RATE_LIMIT_KEY the first answer of the run's countdown (taken once,
 * before the 429 sequence drives the key), else a list of the inventory.
 */
async function answerOn(key: KeyName, api: ApiClient, oncePerRun: OncePerRun): Promise<Snapshot> {
  if (key === 'rate-limit') return (await countdownOfRun(oncePerRun, api)).attempts[0]![0]!;
  return snapshotOf(await api.listInventory(key));
}

for (const k of KEYS) {
  test(`RL-04 X-RateLimit-Limit of ${k.keyVar} matches ${k.planVar}`, async ({ api, notCertified, oncePerRun }) => {
    // A must-level check without its prerequisite is not certified, naming what is missing.
    if (!api.hasKey(k.key)) return notCertified(missingPrerequisiteReason(k.keyVar));
    const res = await answerOn(k.key, api, oncePerRun);
    const { limit, raw } = rateLimitOf(res);
    expectFact(limit !== undefined, { expected: 'an integer X-RateLimit-Limit', observed: raw.limit ?? 'none', res });
    const plan = k.plan(api);
    if (!plan) {
      const known = Object.entries(PLAN_LIMITS)
        .filter(([, p]) => p.minute === limit || p.day === limit)
        .map(([n]) => n);
      return notCertified(
        `${missingPrerequisiteReason(k.planVar)}; X-RateLimit-Limit ${limit} ${known.length ? `fits the ${known.join('/')} plan` : 'is no published plan figure (enterprise?)'}`,
      );
    }
    const figures =
      plan === 'enterprise' ? 'any positive figure (custom)' : `${PLAN_LIMITS[plan].minute} (minute) or ${PLAN_LIMITS[plan].day} (day)`;
    expectFact(limitMatchesPlan(limit, plan), {
      what: `${res.label}: ${k.keyVar} on plan ${plan}`,
      expected: `X-RateLimit-Limit ${figures}`,
      observed: String(limit),
      res,
    });
  });
}

test('RL-11 sequential requests on RATE_LIMIT_KEY count Remaining down', async ({ api, warn, oncePerRun }) => {
  if (!api.hasKey('rate-limit')) {
    warn('RL-11: RATE_LIMIT_KEY is not set; the countdown is only checked on a dedicated key, never on the shared API_KEY');
    return;
  }
  // The run's countdown: a second attempt when a window boundary inside the first legitimately refilled Remaining.
  const { attempts } = await countdownOfRun(oncePerRun, api);
  if (attempts.some(countsDown)) return;
  const last = attempts.at(-1)!.map((s) => {
    const { remaining, reset } = rateLimitOf(s);
    return `Remaining ${remaining ?? '-'} (Reset ${reset ?? '-'})`;
  });
  // Should-level (RL-11): a warning, never a failure.
  warn(`RL-11: three sequential requests on <RATE_LIMIT_KEY> in one window: expected Remaining to fall, observed ${last.join(', ')}`);
});
