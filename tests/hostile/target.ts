/**
 * A small, deterministic hostile target on 127.0.0.1 for the hostile-target suite: just enough of
 * the Inventory Service for the checks a case runs (`GET /inventory`, `PATCH /inventory/{id}`,
 * `POST /messages`), a fixed-window limit per key or one bucket shared by every key, and a
 * `Retry-After` of the case's choosing.
 *
 * It counts what a server that bans would hold against the run, with the fault proxy's
 * `RetryWatch` (faults/retry-watch.ts): an *early* request is one sent on a key before a 429's
 * Retry-After on it has passed; a bare key without a scheme counts as that key. With a shared
 * bucket, a 429 to a key whose last answer showed Remaining above 0 is a 429 the key could not
 * predict: until its Retry-After every key's request is early too (`earlyShared`), and, with a
 * bucket shared by keyless callers too (`keylessShared`), every request without a key (`earlyKeyless`).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { bearerToken, RetryWatch, total } from '../../faults/retry-watch.ts';

export interface HostileTargetOptions {
  /** The run's keys (labels of the counts): `API_KEY`, `RATE_LIMIT_KEY`, `LOAD_KEY`. */
  keys: Record<string, string>;
  /** Requests admitted per window and bucket. */
  limit: number;
  windowMs: number;
  /** One bucket for every key (else one per key). */
  shared?: boolean;
  /**
   * With `shared`: the bucket is shared by every caller, with a key or without (requests without a
   * key, or with a token that is no key, are charged too and refused with 429 once it is spent).
   */
  keylessShared?: boolean;
  /** The Retry-After of a 429 (default: seconds until the window ends, rounded up). */
  retryAfter?: (secondsLeft: number) => string;
}

export interface HostileCounts {
  /** Requests that reached the target, per key label (`other`: a token that is no key). */
  requests: Record<string, number>;
  refusals: Record<string, number>;
  /** Requests on a key before a 429's Retry-After on it had passed. */
  early: number;
  /** Requests on any key while a 429 its key could not predict was pending (shared bucket). */
  earlyShared: number;
  /** Requests without a valid key (none, or a token that is no key) while such a 429 was pending (`keylessShared`). */
  earlyKeyless: number;
}

export interface HostileTarget {
  /** `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  counts(): HostileCounts;
  close(): Promise<void>;
}

const PETS = [
  { petId: 1, quantity: 5, status: 'available' },
  { petId: 2, quantity: 0, status: 'sold' },
];

function reply(res: http.ServerResponse, status: number, headers: Array<[string, string]>, body: unknown): void {
  res.statusCode = status;
  for (const [k, v] of headers) res.setHeader(k, v);
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(body));
}

const error = (code: string, message: string, status: number) => ({ code, message, status });

export async function startHostileTarget(o: HostileTargetOptions): Promise<HostileTarget> {
  const watch = new RetryWatch({ env: o.keys });
  const valid = new Set(Object.values(o.keys));
  const buckets = new Map<string, { start: number; used: number }>();
  /** What each key was last told: its Remaining (for the shared bucket's "could it predict?"). */
  const lastRemaining = new Map<string, number>();
  let sharedPendingUntil = 0;
  let earlyShared = 0;
  let earlyKeyless = 0;

  const server = http.createServer((req, res) => {
    const now = Date.now();
    const reqHeaders = Object.entries(req.headers).map(([k, v]) => [k, String(v)] as [string, string]);
    const token = bearerToken(reqHeaders);
    if (token !== undefined && valid.has(token) && now < sharedPendingUntil) earlyShared++;
    if ((token === undefined || !valid.has(token)) && now < sharedPendingUntil) earlyKeyless++;
    watch.request(reqHeaders, now);
    req.resume();
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const date: [string, string] = ['Date', new Date(now).toUTCString()];
      const keyless = !token || !valid.has(token);
      if (keyless && !(o.shared && o.keylessShared))
        return reply(res, 401, [date], error('unauthorized', 'A valid API key is required', 401));
      const id = o.shared ? 'shared' : token!;
      let b = buckets.get(id);
      if (!b || now >= b.start + o.windowMs) buckets.set(id, (b = { start: now, used: 0 }));
      const end = b.start + o.windowMs;
      const secondsLeft = Math.max(1, Math.ceil((end - now) / 1000));
      const rate = (remaining: number): Array<[string, string]> => [
        ['X-RateLimit-Limit', String(o.limit)],
        ['X-RateLimit-Remaining', String(remaining)],
        ['X-RateLimit-Reset', String(Math.ceil(end / 1000))],
        date,
      ];
      // A key without the Bearer scheme is refused, uncharged, with the key's rate-limit headers.
      if (!/^\s*bearer\s+\S+\s*$/i.test(req.headers.authorization ?? '')) {
        return reply(res, 401, rate(Math.max(0, o.limit - b.used)), error('unauthorized', 'Use the Bearer scheme', 401));
      }
      if (keyless) {
        // One bucket for every caller: a request without a valid key is charged like any other.
        if (b.used >= o.limit)
          return reply(
            res,
            429,
            [...rate(0), ['Retry-After', o.retryAfter ? o.retryAfter(secondsLeft) : String(secondsLeft)]],
            error('rate_limited', 'Too many requests', 429),
          );
        b.used++;
        return reply(res, 401, rate(o.limit - b.used), error('unauthorized', 'A valid API key is required', 401));
      }
      if (b.used >= o.limit) {
        const headers: Array<[string, string]> = [
          ...rate(0),
          ['Retry-After', o.retryAfter ? o.retryAfter(secondsLeft) : String(secondsLeft)],
        ];
        const ra = Number(headers[headers.length - 1][1]);
        if (o.shared && (lastRemaining.get(token!) ?? 1) > 0) sharedPendingUntil = Math.max(sharedPendingUntil, now + ra * 1000);
        lastRemaining.set(token!, 0);
        watch.response(reqHeaders, 429, headers, undefined, now);
        return reply(res, 429, headers, error('rate_limited', 'Too many requests', 429));
      }
      b.used++;
      lastRemaining.set(token!, o.limit - b.used);
      const headers = rate(o.limit - b.used);
      watch.response(reqHeaders, 200, headers, undefined, now);
      if (req.method === 'GET' && url.pathname.endsWith('/inventory')) return reply(res, 200, headers, PETS);
      if (req.method === 'PATCH' && /\/inventory\/\d+$/.test(url.pathname)) return reply(res, 200, headers, PETS[0]);
      if (req.method === 'POST' && url.pathname.endsWith('/messages')) return reply(res, 202, headers, { id: 'm1' });
      return reply(res, 404, headers, error('not_found', 'Not found', 404));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    counts: () => {
      const s = watch.report();
      return { requests: s.requests, refusals: s.refusals, early: total(s.early), earlyShared, earlyKeyless };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
