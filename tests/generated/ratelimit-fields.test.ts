/**
 * RL-17: the RateLimit field parser and agreement check, on hand-written values and on the
 * reference server with its IETF fields switched on (and a proxy that makes them disagree).
 */
import { test, expect } from '../test.ts';
import { parseSfList, rateLimitFieldWarnings } from '../../suites/rate-limit/ratelimit-fields.ts';
import { startReferenceServer } from '../../reference-server/app.ts';

test('RFC 9651 lists: strings, tokens, integers, booleans, inner lists and parameters', () => {
  expect(parseSfList('"burst";r=50;t=30, "day";r=900;t=3600')).toEqual([
    { value: 'burst', params: { r: 50, t: 30 } },
    { value: 'day', params: { r: 900, t: 3600 } },
  ]);
  const [policy, inner, flag] = parseSfList('default;q=100;w=60;pk=:YWJj:, (a "b");x, ?1');
  expect(String(policy!.value)).toBe('default');
  expect({ q: policy!.params.q, w: policy!.params.w }).toEqual({ q: 100, w: 60 });
  expect(Buffer.from(policy!.params.pk as ArrayBuffer).toString()).toBe('abc');
  expect((inner!.value as unknown[]).map(String)).toEqual(['a', 'b']);
  expect(inner!.params).toEqual({ x: true });
  expect(flag).toEqual({ value: true, params: {} });
  for (const bad of ['"open', 'burst;r=', 'a,', '"x";R=1', 'a b']) expect(() => parseSfList(bad), bad).toThrow();
});

const X = { limit: 100, remaining: 50, reset: 1_800_000_030, date: 1_800_000_000 };

test('fields that agree with X-RateLimit-* give no warning; no fields are not judged', () => {
  expect(rateLimitFieldWarnings({ policy: '"minute";q=100;w=60', rateLimit: '"minute";r=50;t=30' }, X)).toEqual([]);
  expect(
    rateLimitFieldWarnings({ policy: '"day";q=1000;w=86400, "minute";q=100;w=60', rateLimit: '"day";r=900;t=5000, "minute";r=50;t=31' }, X),
  ).toEqual([]);
  expect(rateLimitFieldWarnings({}, X)).toEqual([]);
});

test('disagreeing or malformed fields warn, naming the values', () => {
  expect(rateLimitFieldWarnings({ policy: '"minute";q=300;w=60', rateLimit: '"minute";r=50;t=30' }, X)[0]).toMatch(
    /disagree with X-RateLimit-Limit 100/,
  );
  expect(rateLimitFieldWarnings({ policy: '"minute";q=100;w=60', rateLimit: '"minute";r=49;t=30' }, X)[0]).toMatch(/disagree/);
  expect(rateLimitFieldWarnings({ policy: '"minute";q=100;w=60', rateLimit: '"minute";r=50;t=30000' }, X)[0]).toMatch(/disagree/);
  expect(rateLimitFieldWarnings({ rateLimit: '"minute";remaining=50' }, X)[0]).toMatch(/no non-negative integer r/);
  expect(rateLimitFieldWarnings({ rateLimit: 'limit=100, remaining=50' }, X)[0]).toMatch(/not a Structured Field list/);
  expect(rateLimitFieldWarnings({ rateLimit: '"minute";r=50;t=30.5' }, X)[0]).toMatch(/t that is not/);
  expect(rateLimitFieldWarnings({ rateLimit: '"minute"; r=5 0' }, X)[0]).toMatch(/not a Structured Field list/);
  expect(rateLimitFieldWarnings({ policy: '"minute";q=100' }, X)).toEqual(['RateLimit-Policy is sent without RateLimit']);
});

test('the reference server with RATELIMIT_FIELDS on agrees; off, it sends none', async () => {
  for (const on of [true, false]) {
    const server = await startReferenceServer({ port: 0, host: '127.0.0.1', rateLimitFields: on });
    try {
      for (const path of ['/inventory', '/inventory/1']) {
        const res = await fetch(server.baseUrl + path, {
          method: path === '/inventory' ? 'GET' : 'PATCH',
          headers: { authorization: `Bearer ${server.keys.pro}`, 'content-type': 'application/json' },
          body: path === '/inventory' ? undefined : '{"quantity":"x"}',
        });
        const h = (n: string) => res.headers.get(n) ?? undefined;
        const fields = { rateLimit: h('ratelimit'), policy: h('ratelimit-policy') };
        expect(fields.rateLimit !== undefined, `RateLimit sent with RATELIMIT_FIELDS ${on ? 'on' : 'off'}`).toBe(on);
        const x = {
          limit: Number(h('x-ratelimit-limit')),
          remaining: Number(h('x-ratelimit-remaining')),
          reset: Number(h('x-ratelimit-reset')),
          date: Math.floor(Date.parse(h('date')!) / 1000),
        };
        expect(rateLimitFieldWarnings(fields, x), `${path} → ${res.status}`).toEqual([]);
        // A server whose fields describe another plan disagrees.
        if (on) expect(rateLimitFieldWarnings({ ...fields, policy: fields.policy!.replace(/q=\d+/, 'q=7') }, x)).toHaveLength(1);
      }
    } finally {
      await server.close();
    }
  }
});
