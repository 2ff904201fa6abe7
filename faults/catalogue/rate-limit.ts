/**
 * Faults of the Limits section: the `X-RateLimit-*` headers, the 429 and its `Retry-After`, limits
 * enforced off by one or not at all, bans.
 */
import { headers, type HeaderList, type ProxyResponse } from '../proxy.ts';
import { answer, dateSeconds, intHeader, isMessages, mapHeader, respond, tokenOf, PLAN_LIMITS } from '../lib.ts';
import { lateByOneStore, smallMinuteLimitStore, unenforcedStore } from '../stores.ts';
import type { FaultDefinition } from '../fault.ts';

const isRateLimited = (res: ProxyResponse) => res.status === 429;

export const faults: FaultDefinition[] = [
  {
    name: 'ratelimit-headers-missing-on-errors',
    description: 'A 401 carries no `X-RateLimit-*` headers: the auth middleware answers before the limiter runs.',
    expect: ['RL-01'],
    proxy: () =>
      respond(
        (res) => res.status === 401,
        (res) => ({ ...res, headers: res.headers.filter(([k]) => !/^x-ratelimit-/i.test(k)) }),
      ),
  },
  {
    name: 'ratelimit-headers-missing-on-quickstart',
    extended: true,
    description: 'The quickstart messages operation sends no `X-RateLimit-*` headers (it sits behind another gateway).',
    expect: ['RL-01'],
    proxy: () =>
      respond(
        (_res, req) => isMessages(req),
        (res) => ({ ...res, headers: res.headers.filter(([k]) => !/^x-ratelimit-/i.test(k)) }),
      ),
  },
  {
    name: 'ratelimit-reset-milliseconds',
    description: '`X-RateLimit-Reset` is in epoch milliseconds (`Date.now()`-style) instead of seconds.',
    expect: ['RL-02'],
    proxy: () => ({ response: (res) => mapHeader(res, 'x-ratelimit-reset', (v) => String(Number(v) * 1000)) }),
  },
  {
    name: 'ratelimit-reset-delta',
    description: '`X-RateLimit-Reset` is the number of seconds until the reset (a delta) instead of a Unix timestamp.',
    expect: ['RL-02'],
    proxy: () => ({
      response: (res) => mapHeader(res, 'x-ratelimit-reset', (v) => String(Math.max(0, Number(v) - dateSeconds(res.headers)))),
    }),
  },
  {
    name: 'ratelimit-remaining-above-limit',
    description:
      '`X-RateLimit-Remaining` counts the day window while `X-RateLimit-Limit` shows the minute limit, so Remaining exceeds Limit.',
    expect: ['RL-03'],
    proxy: () => ({
      response(res) {
        const limit = intHeader(res.headers, 'x-ratelimit-limit');
        const remaining = intHeader(res.headers, 'x-ratelimit-remaining');
        if (limit === undefined || remaining === undefined || res.status === 429) return res;
        return { ...res, headers: headers.set(res.headers, 'X-RateLimit-Remaining', String(remaining + limit + 1)) };
      },
    }),
  },
  {
    name: 'ratelimit-limit-wrong-plan',
    description: '`X-RateLimit-Limit` shows the figure of another plan (a free key reports the pro limit 300).',
    expect: ['RL-04'],
    proxy: () => ({
      response: (res) =>
        mapHeader(res, 'x-ratelimit-limit', (v) => {
          const n = Number(v);
          const plan = Object.values(PLAN_LIMITS).find((p) => p.minute === n || p.day === n);
          if (!plan) return v;
          const order = Object.values(PLAN_LIMITS);
          const other = order[(order.indexOf(plan) + 1) % order.length]!;
          return String(plan.minute === n ? other.minute : other.day);
        }),
    }),
  },
  {
    name: '429-no-retry-after',
    description: 'A 429 carries no `Retry-After` header.',
    expect: ['RL-06'],
    proxy: () => respond(isRateLimited, (res) => ({ ...res, headers: headers.remove(res.headers, 'retry-after') })),
  },
  {
    name: '429-retry-after-milliseconds',
    misleadsRetryAfter: true,
    description: '`Retry-After` is given in milliseconds (`2000` for two seconds).',
    expect: ['RL-07'],
    proxy: () => respond(isRateLimited, (res) => mapHeader(res, 'retry-after', (v) => (/^\d+$/.test(v) ? String(Number(v) * 1000) : v))),
  },
  {
    name: '429-retry-after-decimal',
    misleadsRetryAfter: true,
    description: '`Retry-After` is a decimal (`2.0`), which is neither delta-seconds nor an HTTP-date.',
    expect: ['RL-07'],
    proxy: () => respond(isRateLimited, (res) => mapHeader(res, 'retry-after', (v) => (/^\d+$/.test(v) ? `${v}.0` : v))),
  },
  {
    name: '429-retry-after-rounded-down',
    misleadsRetryAfter: true,
    description:
      '`Retry-After` is one second short of the lockout the server enforces, so a client that waits exactly that long still gets 429.',
    expect: ['RL-08'],
    proxy: () => {
      // The server's own lockout per key: it ends a whole second after what Retry-After says.
      const lockedUntil = new Map<string, { until: number; res: ProxyResponse }>();
      return {
        request(req) {
          const key = tokenOf(req);
          const lock = key === undefined ? undefined : lockedUntil.get(key);
          if (!lock || Date.now() >= lock.until) return req;
          const left = Math.ceil((lock.until - Date.now()) / 1000);
          const hs = headers.set(
            headers.set(lock.res.headers, 'Retry-After', String(Math.max(0, left - 1))),
            'Date',
            new Date().toUTCString(),
          );
          return { ...lock.res, headers: hs };
        },
        response(res, req) {
          const key = tokenOf(req);
          const v = headers.get(res.headers, 'retry-after');
          if (res.status !== 429 || key === undefined || v === undefined || !/^\d+$/.test(v)) return res;
          const seconds = Number(v);
          const out = mapHeader(res, 'retry-after', () => String(Math.max(0, seconds - 1)));
          lockedUntil.set(key, { until: Date.now() + seconds * 1000, res: out });
          return out;
        },
      };
    },
  },
  {
    name: '429-early-at-the-limit',
    description: 'Off by one: the request that brings Remaining to 0 is already refused, so only Limit-1 requests are admitted.',
    expect: ['RL-10'],
    proxy: () =>
      respond(
        (res) => res.status < 300 && intHeader(res.headers, 'x-ratelimit-remaining') === 0,
        (res) => {
          const reset = intHeader(res.headers, 'x-ratelimit-reset');
          const retry = Math.max(1, (reset ?? dateSeconds(res.headers) + 1) - dateSeconds(res.headers));
          return answer(
            429,
            { code: 'rate_limited', message: 'Too many requests', status: 429 },
            headers.set(res.headers, 'Retry-After', String(retry)),
          );
        },
      ),
  },
  {
    name: '429-late-by-one',
    description: 'Off by one the other way (`count > limit`): Limit+1 requests are admitted in one window.',
    expect: ['RL-05', 'RL-10'],
    store: () => lateByOneStore(),
  },
  {
    name: '429-limit-not-enforced',
    description: 'The limiter runs in monitor-only mode: headers count down but no request is ever refused.',
    expect: ['RL-05'],
    store: () => unenforcedStore(),
  },
  {
    name: '429-remaining-not-zero',
    description: 'A 429 reports `X-RateLimit-Remaining: 1` (computed before the refused request was counted).',
    expect: ['RL-09'],
    proxy: () => respond(isRateLimited, (res) => mapHeader(res, 'x-ratelimit-remaining', () => '1')),
  },
  {
    name: 'ban-after-honest-wait',
    misleadsRetryAfter: true,
    description: 'A key that waited the full `Retry-After` after a 429 is banned anyway on its next request.',
    expect: ['RL-08'],
    proxy: () => {
      const limited = new Set<string>();
      return {
        request(req) {
          const token = tokenOf(req);
          if (token && limited.has(token)) {
            limited.delete(token);
            const base: HeaderList = [
              ['X-RateLimit-Limit', '60'],
              ['X-RateLimit-Remaining', '0'],
              ['X-RateLimit-Reset', String(Math.ceil(Date.now() / 1000) + 5)],
              ['Retry-After', '5'],
            ];
            return answer(429, { code: 'key_banned', message: 'Key temporarily banned', status: 429 }, base);
          }
          return req;
        },
        response(res, req) {
          const token = tokenOf(req);
          if (token && res.status === 429) limited.add(token);
          return res;
        },
      };
    },
  },
  {
    name: 'ratelimit-remaining-static',
    description:
      '`X-RateLimit-Remaining` never falls: a cached header shows the full Limit on every admitted response, while the limiter behind it refuses at the limit (10 a window, so that a drive one request at a time reaches it on a slow runner).',
    expect: ['RL-10'],
    store: () => smallMinuteLimitStore(10),
    proxy: () =>
      respond(
        (res) => res.status !== 429,
        (res) => mapHeader(res, 'x-ratelimit-remaining', (v) => headers.get(res.headers, 'x-ratelimit-limit') ?? v),
      ),
  },
];
