/**
 * The 429 sequence of `suites/rate-limit/exhaust.ts` against scripted limiters: it must record
 * over-admission, off-by-one refusals and bad Retry-After values, survive a window reset, and
 * never send after a 429 unless Retry-After allows it.
 */
import { test, expect } from '../test.ts';
import { exhaust, WindowCounter, type Snapshot } from '../../suites/rate-limit/exhaust.ts';
import { limiterStore, zooStore } from '../../faults/limiters/index.ts';
import { slidingCounterRounded } from '../../faults/limiters/sliding-counter.ts';
import type { RateDecision, RatePolicy } from '../../reference-server/rate-limit/policy.ts';

interface Limiter {
  limit: number;
  /** Requests admitted in the current window. */
  used: number;
  reset: number;
  /** Date of the responses, epoch seconds. */
  now: number;
}

function snapshot(l: Limiter, status: number, extra: Record<string, string> = {}): Snapshot {
  return {
    label: `GET /v1/inventory → ${status}`,
    status,
    headers: {
      'x-ratelimit-limit': String(l.limit),
      'x-ratelimit-remaining': String(Math.max(0, l.limit - l.used)),
      'x-ratelimit-reset': String(l.reset),
      date: new Date(l.now * 1000).toUTCString(),
      ...extra,
    },
    text: '',
    receivedAtMs: l.now * 1000,
  };
}

/** A fixed-window limiter; `admitExtra` admits that many requests past the limit, `refuseEarly` refuses at Remaining 1. */
function limiter(
  opts: {
    limit?: number;
    admitExtra?: number;
    refuseEarly?: boolean;
    refuseEarlyOnce?: boolean;
    retryAfter?: string;
    resetAfter?: number;
    usedBefore?: number;
    secondsPerRequest?: number;
    otherClientAt?: number;
  } = {},
) {
  const l: Limiter = { limit: opts.limit ?? 5, used: opts.usedBefore ?? 0, reset: 1_800_000_060, now: 1_800_000_000 };
  let calls = 0;
  const log: number[] = [];
  const send = async (): Promise<Snapshot> => {
    calls++;
    l.now += opts.secondsPerRequest ?? 0;
    if (calls === opts.otherClientAt) l.used += 2; // another client's two requests land before this one
    if (opts.resetAfter !== undefined && calls === opts.resetAfter) {
      l.used = 0;
      l.reset += 60;
    }
    const early = opts.refuseEarly || (opts.refuseEarlyOnce && !log.includes(429));
    const cap = l.limit + (opts.admitExtra ?? 0) - (early ? 1 : 0);
    if (l.used >= cap) {
      log.push(429);
      const s = snapshot(l, 429, { 'retry-after': opts.retryAfter ?? '2' });
      l.used = 0; // the next request (after Retry-After) is in a new window
      l.reset += 60;
      return s;
    }
    l.used++;
    log.push(200);
    return snapshot(l, 200);
  };
  return { send, log, l };
}

const run = (send: () => Promise<Snapshot>) => exhaust({ key: '<RATE_LIMIT_KEY>', maxRequests: 100, maxRetryAfterS: 120, send });

test('a conformant limiter: the request past Remaining is refused, and the one after Retry-After passes', async () => {
  const { send, log } = limiter();
  const r = await run(send);
  expect(r.aborted).toBeUndefined();
  expect(r.earlyRefusal).toBeUndefined();
  expect(r.overAdmission).toBeUndefined();
  expect(r.refused?.status).toBe(429);
  expect(r.retryAfter).toMatchObject({ ok: true, seconds: 2, kind: 'delta' });
  expect(r.after?.status).toBe(200);
  expect(log).toEqual([200, 200, 200, 200, 200, 429, 200]);
});

test('over-admission: a request admitted after Remaining reached 0 is recorded and nothing follows', async () => {
  const { send, log } = limiter({ admitExtra: 1 });
  const r = await run(send);
  // Counted over the whole window from the first request: 6 admitted under one Reset, Limit 5.
  expect(r.overAdmission).toContain('6 requests admitted in the window ending at X-RateLimit-Reset 1800000060');
  expect(r.overAdmission).toContain('more than X-RateLimit-Limit 5');
  expect(r.refused).toBeUndefined();
  expect(log).toEqual([200, 200, 200, 200, 200, 200]);
});

test("the run's earlier answers on the key (the countdown) count in their window: one admitted past the limit shows only with them", async () => {
  const counted = limiter({ admitExtra: 1 });
  const earlier = [await counted.send(), await counted.send(), await counted.send()];
  const r = await exhaust({ key: '<RATE_LIMIT_KEY>', maxRequests: 100, maxRetryAfterS: 120, send: counted.send, earlier });
  expect(r.overAdmission).toContain('6 requests admitted in the window ending at X-RateLimit-Reset 1800000060');
  expect(r.answeredAtMs).toHaveLength(counted.log.length);
  // The same limiter and requests, the earlier answers left out: 3 admitted by the sequence, no evidence.
  const alone = limiter({ admitExtra: 1 });
  for (let i = 0; i < 3; i++) await alone.send();
  expect((await run(alone.send)).overAdmission).toBeUndefined();
});

test('a 2xx past Remaining 0 under a Reset that held still over seconds is probed again, never taken for over-admission alone', async () => {
  // A fixed window that admits one past the limit, two of its requests spent before the sequence:
  // the sequence's own count stays within Limit, and a limiter refilling more than once a second
  // looks the same from here (next test). The request past the limit is sent again, alone.
  const { send, log } = limiter({ admitExtra: 1, usedBefore: 2, secondsPerRequest: 1 });
  const r = await run(send);
  expect(r.overAdmission).toBeUndefined();
  expect(r.refused?.status).toBe(429);
  expect(log).toEqual([200, 200, 200, 200, 429, 200]);
});

/**
 * GCRA with 10 per 5 s (one cell every 500 ms): after Remaining 0 the next cell frees within the
 * second its Reset shows, so a request past 0 is admitted under the same Reset while Date moved on.
 */
for (const START of [1_800_000_000_000, 1_800_000_000_250, 1_800_000_000_500, 1_800_000_000_750])
  for (const everyTime of [false, true])
    test(`GCRA refilling twice a second (first request at ${START % 1000} ms, ${everyTime ? 'every' : 'the first'} request past Remaining 0 slow): admitted past 0 under a Reset that held still is no over-admission`, async () => {
      const policy: RatePolicy = { windows: [{ name: 'minute', limit: 10, ms: 5_000 }], banThreshold: 10, banMs: 5_000 };
      const store = zooStore('gcra');
      let now = START;
      let lastRemaining = 10;
      let slow = true;
      const send = async (): Promise<Snapshot> => {
        // 100 ms between requests; the first one past Remaining 0 leaves 600 ms later (a slow round trip): a cell is free by then.
        now += lastRemaining === 0 && slow ? 600 : 100;
        if (lastRemaining === 0 && !everyTime) slow = false;
        const d = store.hit('k', policy, now) as RateDecision;
        const status = d.outcome === 'admitted' ? 200 : 429;
        lastRemaining = d.remaining;
        return {
          label: `GET /v1/inventory → ${status}`,
          status,
          headers: {
            'x-ratelimit-limit': String(d.limit),
            'x-ratelimit-remaining': String(d.remaining),
            'x-ratelimit-reset': String(d.resetSeconds),
            date: new Date(now).toUTCString(),
            ...(status === 429 ? { 'retry-after': String(d.retryAfterSeconds) } : {}),
          },
          text: '',
          receivedAtMs: now,
        };
      };
      const r = await run(send);
      expect(r.overAdmission).toBeUndefined();
      // A round trip slower than the refill every time: the limit is out of reach, not certified.
      if (everyTime) expect(r.refused?.status === 429 || r.notCertified !== undefined).toBe(true);
      else expect([r.notCertified, r.refused?.status]).toEqual([undefined, 429]);
    });

/**
 * A sliding-log limiter on a millisecond clock: Reset is when the window is fully free (newest
 * request + window), so it moves every second. Requests admitted before the sequence leave the
 * window one by one just as the sequence reaches Remaining 0, within one second.
 */
function slidingLimiter(o: { limit: number; windowMs: number; before: number[]; startMs: number; msPerRequest: number }) {
  const log = [...o.before];
  let now = o.startMs;
  const statuses: number[] = [];
  const send = async (): Promise<Snapshot> => {
    now += o.msPerRequest;
    while (log.length && log[0]! + o.windowMs <= now) log.shift();
    const admitted = log.length < o.limit;
    if (admitted) log.push(now);
    statuses.push(admitted ? 200 : 429);
    return {
      label: `GET /v1/inventory → ${admitted ? 200 : 429}`,
      status: admitted ? 200 : 429,
      headers: {
        'x-ratelimit-limit': String(o.limit),
        'x-ratelimit-remaining': String(o.limit - log.length),
        'x-ratelimit-reset': String(Math.ceil(((admitted ? now : log.at(-1)!) + o.windowMs) / 1000)),
        date: new Date(now).toUTCString(),
        ...(admitted ? {} : { 'retry-after': String(Math.ceil((log[0]! + o.windowMs - now) / 1000)) }),
      },
      text: '',
      receivedAtMs: now,
    };
  };
  return { send, statuses };
}

test('a sliding window that lets one in past Remaining 0 as an old request leaves it, within one second, is no over-admission', async () => {
  const start = 1_800_000_000_000;
  // Five requests admitted just under 5 s before the sequence: they leave the 5 s window one per
  // request, from the first request after the count reached Remaining 0 (at 70 ms).
  const before = [0, 1, 2, 3, 4].map((i) => start - 4_928 + 2 * i);
  const { send, statuses } = slidingLimiter({ limit: 10, windowMs: 5_000, before, startMs: start + 60, msPerRequest: 2 });
  const r = await run(send);
  expect(r.overAdmission).toBeUndefined();
  expect(r.earlyRefusal).toBeUndefined();
  expect(r.refused?.status).toBe(429);
  // The count reached 0 before the old requests left; the probes past it were let in as they left.
  expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(5);
});

test('off by one: a 429 while Remaining said one was left is recorded', async () => {
  const { send } = limiter({ refuseEarly: true });
  const r = await run(send);
  expect(r.earlyRefusal).toContain('while X-RateLimit-Remaining said 1 left');
  expect(r.refused?.status).toBe(429);
});

test('a window reset mid-way restarts the count instead of failing', async () => {
  const { send } = limiter({ resetAfter: 3 });
  const r = await run(send);
  expect(r.restarts).toBe(1);
  expect(r.earlyRefusal).toBeUndefined();
  expect(r.overAdmission).toBeUndefined();
  expect(r.refused?.status).toBe(429);
});

test('windows that keep resetting just as Remaining reaches 0 leave the sequence not certified, never claim over-admission', async () => {
  const l: Limiter = { limit: 3, used: 0, reset: 1_800_000_060, now: 1_800_000_000 };
  const send = async (): Promise<Snapshot> => {
    if (l.used >= l.limit) {
      l.used = 0; // every time the limit is reached, a new window has just begun
      l.reset += 5;
      l.now += 5;
    }
    l.used++;
    return snapshot(l, 200);
  };
  const r = await run(send);
  expect(r.overAdmission).toBeUndefined();
  expect(r.aborted).toBeUndefined();
  expect(r.notCertified).toContain('the limit was not reached inside one window');
});

for (const [value, reason] of [
  ['2.0', 'not delta-seconds'],
  ['-1', 'not delta-seconds'],
  ['soon', 'neither delta-seconds nor an HTTP-date'],
] as const) {
  test(`an invalid Retry-After (${value}) is recorded and no request follows the 429`, async () => {
    const { send, log } = limiter({ retryAfter: value });
    const r = await run(send);
    expect(r.retryAfter?.ok).toBe(false);
    expect(r.retryAfter && !r.retryAfter.ok && r.retryAfter.reason).toContain(reason);
    expect(r.notRetried).toBeDefined();
    expect(r.after).toBeUndefined();
    expect(log.at(-1)).toBe(429);
  });
}

test('a Retry-After longer than MAX_RETRY_AFTER_S is not waited, nothing follows, and the wait is not certified', async () => {
  const { send, log } = limiter({ retryAfter: '3600' });
  const r = await run(send);
  expect(r.notRetried).toBeUndefined();
  expect(r.retryNotCertified).toContain('MAX_RETRY_AFTER_S=120');
  expect(log.at(-1)).toBe(429);
});

test('more Remaining than MAX_EXHAUST_REQUESTS is not certified, before spending the key', async () => {
  const { send, log } = limiter({ limit: 500 });
  const r = await run(send);
  expect(r.aborted).toBeUndefined();
  expect(r.notCertified).toContain('MAX_EXHAUST_REQUESTS=100');
  expect(log).toHaveLength(1);
});

test('another client on the key: a Remaining that falls by more than the run sent stops the sequence, not certified, naming it; no off-by-one is claimed', async () => {
  const { send, log } = limiter({ limit: 10, otherClientAt: 4 });
  const r = await run(send);
  expect(r.anotherClient).toBe('X-RateLimit-Remaining fell from 7 to 4 while this run sent 1 request on it');
  expect(r.notCertified).toMatch(
    /^<RATE_LIMIT_KEY> is used by another client, or its limit is shared with other keys: .*; nothing more is sent on it$/,
  );
  expect(r.earlyRefusal).toBeUndefined();
  expect(r.overAdmission).toBeUndefined();
  expect(log).toEqual([200, 200, 200, 200]);
});

test('a server that refuses at Remaining 1, its Remaining falling by exactly what the run sent, is still recorded as off by one', async () => {
  const { send } = limiter({ limit: 10, refuseEarly: true });
  const r = await run(send);
  expect(r.anotherClient).toBeUndefined();
  expect(r.earlyRefusal).toMatch(/refused with 429 while X-RateLimit-Remaining said 1 left/);
});

test('a 429 while Remaining said one was left that does not recur when the key is driven to its limit once more is not claimed as off by one', async () => {
  // Another client takes the last request of the first window, once.
  const { send, log } = limiter({ limit: 5, refuseEarlyOnce: true });
  const r = await run(send);
  expect(r.earlyRefusal).toBeUndefined();
  expect(r.earlyRefusalUnconfirmed).toMatch(
    /^a 429 came while X-RateLimit-Remaining said some were left \(.*said 1 left.*\), but not when <RATE_LIMIT_KEY> was driven to its limit once more/,
  );
  // The record describes the second drive: its 429 past the limit and the request after Retry-After.
  expect(r.refused?.status).toBe(429);
  expect(r.after?.status).toBe(200);
  expect(log).toEqual([200, 200, 200, 200, 429, 200, 200, 200, 200, 200, 429, 200]);
});

test('refused early and again after waiting Retry-After: neither off by one nor a short Retry-After is claimed', async () => {
  // Another client takes the rest of the window, then the window that Retry-After frees.
  let calls = 0;
  const send = async (): Promise<Snapshot> => {
    calls++;
    const refused = calls >= 3;
    return {
      label: `GET /v1/inventory → ${refused ? 429 : 200}`,
      status: refused ? 429 : 200,
      headers: {
        'x-ratelimit-limit': '5',
        'x-ratelimit-remaining': refused ? '0' : String(5 - calls),
        'x-ratelimit-reset': String(1_800_000_060 + (calls > 3 ? 60 : 0)),
        date: new Date(1_800_000_000_000).toUTCString(),
        ...(refused ? { 'retry-after': '1' } : {}),
      },
      text: '',
      receivedAtMs: 1_800_000_000_000 + calls,
    };
  };
  const r = await run(send);
  expect(r.earlyRefusalUnconfirmed).toMatch(
    /said 3 left.*and the request after its Retry-After was refused too: another client on <RATE_LIMIT_KEY>/,
  );
  expect(r.after?.status).toBe(429);
});

/**
 * A sliding-window counter that rounds Remaining (faults/limiters/sliding-counter.ts,
 * `slidingCounterRounded`), 10 per 10 s, whose previous window still weighs: 5 requests at `atMs`
 * of the window before the sequence, 200 ms between requests, and each request after a 429 sent
 * `lateMs` after its Retry-After (a busy runner). Returns the record and the statuses (0: banned).
 */
async function roundedCounter(atMs: number, lateMs: number) {
  const policy: RatePolicy = { windows: [{ name: 'minute', limit: 10, ms: 10_000 }], banThreshold: 1, banMs: 60_000 };
  const store = limiterStore(slidingCounterRounded);
  const start = 1_800_000_000_000;
  for (let i = 0; i < 5; i++) store.hit('k', policy, start + atMs);
  let now = start + 10_000;
  const statuses: number[] = [];
  const send = async (): Promise<Snapshot> => {
    now += 200;
    const d = store.hit('k', policy, now) as RateDecision;
    const status = d.outcome === 'admitted' ? 200 : 429;
    statuses.push(d.outcome === 'banned' ? 0 : status);
    const headers: Record<string, string> = {
      'x-ratelimit-limit': String(d.limit),
      'x-ratelimit-remaining': String(d.remaining),
      'x-ratelimit-reset': String(d.resetSeconds),
      date: new Date(now).toUTCString(),
    };
    if (status === 429) headers['retry-after'] = String(d.retryAfterSeconds);
    const s: Snapshot = { label: `GET /v1/inventory → ${status}`, status, headers, text: '', receivedAtMs: now };
    if (status === 429) now += d.retryAfterSeconds * 1000 + lateMs; // the next request leaves after Retry-After
    return s;
  };
  return { r: await run(send), statuses };
}

for (const [atMs, lateMs] of [
  [1_000, 600],
  [5_000, 900],
] as const)
  test(`RL-10 a sliding-window counter that rounds Remaining, its previous window still weighing (requests at ${atMs} ms, ${lateMs} ms late after Retry-After): a 429 after Remaining 1, twice, is not certified, never off by one`, async () => {
    const { r, statuses } = await roundedCounter(atMs, lateMs);
    expect(statuses).not.toContain(0); // never banned: nothing was sent early
    expect(r.overAdmission).toBeUndefined();
    expect(r.earlyRefusal).toBeUndefined();
    expect(r.earlyRefusalUnconfirmed).toMatch(
      /said 1 left.*again when driven to the limit once more.*said 1 left.*a sliding-window counter that rounds its weighted count/,
    );
  });

/**
 * `WindowCounter.unconfirmed`: a window counted within its Limit, whose answers in its last second
 * (left out: a sliding window may have freed requests then) would take it past the Limit, cannot
 * tell over-admission; one whose answers all count, or stay within the Limit with the last second
 * too, settles it. Each row: answers before the last second, answers in it, Limit 3.
 */
for (const [before, inLastSecond, told] of [
  [3, 1, false],
  [2, 1, true],
  [2, 2, false],
  [4, 0, true],
  [3, 0, true],
] as const) {
  test(`a window of Limit 3 with ${before} answer(s) counted and ${inLastSecond} in its last second: over-admission ${told ? 'settled by the count' : 'cannot be told'}`, () => {
    const reset = 1_800_000_010;
    const windows = new WindowCounter();
    const at = (now: number) => snapshot({ limit: 3, used: 0, reset, now }, 200);
    let over: string | undefined;
    for (let i = 0; i < before; i++) over ??= windows.add(at(reset - 5));
    for (let i = 0; i < inLastSecond; i++) over ??= windows.add(at(reset - 0.5));
    expect(over !== undefined, 'over-admission counted').toBe(before > 3);
    const unconfirmed = windows.unconfirmed(reset);
    expect(unconfirmed === undefined, String(unconfirmed)).toBe(told);
    if (!told)
      expect(unconfirmed).toMatch(
        new RegExp(
          `^${before} requests counted as admitted in the window ending at X-RateLimit-Reset ${reset} and ${inLastSecond} more answered in its last second`,
        ),
      );
  });
}
