import { headers, type FaultHooks, type ProxyRequest, type ProxyResponse, type HeaderList } from './proxy.ts';
import {
  answer, dateSeconds, intHeader, isError, isJson, isList, isMessages, isPatch, jsonBody, mapHeader, mapJson,
  mapRequestJson, petIdOf, readJson, respond, tokenOf, PLAN_LIMITS,
} from './lib.ts';
import { lateByOneStore, racyStore, unenforcedStore } from './stores.ts';
import type { RateLimitStore } from '../reference-server/rate-limit/store.ts';
import { REQ } from './requirements.ts';

/**
 * The fault catalogue: realistic deviations a vendor or a regressed staging deployment could ship.
 * Each names the ledger ids (`suites/requirements.yaml`) whose checks must fail when it is injected.
 *
 * A fault is either proxy hooks (`proxy`, applied by `startFaultProxy` in front of any upstream) or,
 * for behaviour a proxy cannot fake (limiter races), a `RateLimitStore` for `startReferenceServer`.
 */

export type Area =
  | 'auth' | 'error-body' | 'list' | 'update' | 'messages' | 'rate-limit-headers' | '429' | 'ban' | 'malformed-input' | 'versioning' | 'load';

export interface Fault {
  /** Unique, kebab-case; selects the fault (`FAULT=<name>`). */
  name: string;
  description: string;
  area: Area;
  /** Ledger ids that must be among the failing requirements. */
  expect: string[];
  /** Proxy hooks, created fresh for each proxy (state lives in the closure). */
  proxy?: () => FaultHooks;
  /** A limiter store for the reference server, for faults a proxy cannot fake. */
  store?: () => RateLimitStore;
  /** Certify settings this fault's run needs (e.g. a shorter `REQUEST_TIMEOUT_MS` for a hang). */
  env?: Record<string, string>;
  /** The path the faulty deployment serves the inventory under, in place of `/v1`: `BASE_URL` points there. */
  basePath?: string;
  /**
   * A further variant of a deviation whose requirement other faults already prove caught: kept
   * for vendors and run by `MATRIX_EXTENDED=1` or `faults/cli.ts all-faults`, left out of the
   * default `npm test` matrix to keep it within CI time.
   */
  extended?: boolean;
}

const isRateLimited = (res: ProxyResponse) => res.status === 429;

/** Error bodies only: JSON responses with status >= 400. */
function mapErrorBody(fn: (body: Record<string, unknown>, res: ProxyResponse) => unknown): FaultHooks {
  return respond(
    (res) => isError(res) && isJson(res.headers),
    (res) => mapJson(res, (b) => (b && typeof b === 'object' && !Array.isArray(b) ? fn(b, res) : b)),
  );
}

/** List responses only (a 200 JSON array), item by item. */
function mapItems(fn: (item: Record<string, unknown>, index: number) => unknown): FaultHooks {
  return respond(
    (res, req) => isList(req) && res.status === 200,
    (res) => mapJson(res, (b) => (Array.isArray(b) ? b.map((item, i) => fn(item, i)) : b)),
  );
}

/** The successful message response only. */
function mapMessage(fn: (m: Record<string, unknown>) => unknown): FaultHooks {
  return respond((res, req) => isMessages(req) && res.status >= 200 && res.status < 300, (res) => mapJson(res, fn));
}

function setStatus(res: ProxyResponse, status: number): ProxyResponse {
  const next = mapJson({ ...res, status }, (b) => (b && typeof b === 'object' && 'status' in b ? { ...b, status } : b));
  return next;
}

/** A handler that crashed: 500 with an `internal_error` Error body (rate-limit headers kept from `base`). */
function crash(message: string, base?: ProxyResponse['headers']): ProxyResponse {
  return answer(500, { code: 'internal_error', message, status: 500 }, base);
}

/** The known keys of the run; a fault that "accepts any token" swaps an unknown one for `API_KEY`. */
function knownKeys(env: Record<string, string | undefined>): string[] {
  return [env.API_KEY, env.RATE_LIMIT_KEY, env.LOAD_KEY].filter((k): k is string => !!k);
}

/** GET the list with the same credentials (a side look, for faults that need the old quantity). */
async function quantityBefore(req: ProxyRequest, forward: (r: ProxyRequest) => Promise<ProxyResponse>): Promise<number | undefined> {
  const listPath = req.path.split('?')[0]!.replace(/\/[^/]+$/, '');
  const res = await forward({ method: 'GET', path: listPath, headers: req.headers.filter(([k]) => /^authorization$/i.test(k)), body: Buffer.alloc(0) });
  const list = readJson(res.body);
  if (res.status !== 200 || !Array.isArray(list)) return undefined;
  const item = list.find((i: any) => String(i?.petId) === petIdOf(req));
  return typeof item?.quantity === 'number' ? item.quantity : undefined;
}

function updateQuantity(req: ProxyRequest): unknown {
  const b = readJson(req.body) as any;
  return b && typeof b === 'object' ? b.quantity : undefined;
}

export const faults: Fault[] = [
  // --- auth -------------------------------------------------------------------------------------
  {
    name: 'auth-401-as-403',
    area: 'auth',
    description: 'A key that is sent but unknown gets 403 Forbidden (body status 403) instead of 401; only a missing key gets 401.',
    expect: [REQ.auth401],
    proxy: () => respond(
      (res, req) => res.status === 401 && tokenOf(req) !== undefined,
      (res) => ({ ...setStatus(res, 403), headers: headers.remove(res.headers, 'www-authenticate') }),
    ),
  },
  {
    name: 'auth-any-token-accepted',
    area: 'auth',
    description: 'Any bearer token is accepted (the gateway only checks that a token is present).',
    expect: [REQ.auth401],
    proxy: () => ({
      request(req, ctx) {
        const token = tokenOf(req);
        const keys = knownKeys(ctx.env);
        if (token === undefined || keys.includes(token) || !ctx.env.API_KEY) return req;
        return { ...req, headers: headers.set(req.headers, 'Authorization', `Bearer ${ctx.env.API_KEY}`) };
      },
    }),
  },
  {
    name: 'auth-key-without-scheme-accepted',
    area: 'auth',
    description: 'The bare key without the `Bearer` scheme (`Authorization: <key>`) is accepted.',
    expect: [REQ.auth401],
    proxy: () => ({
      request(req, ctx) {
        const auth = headers.get(req.headers, 'authorization')?.trim();
        if (auth && knownKeys(ctx.env).includes(auth)) return { ...req, headers: headers.set(req.headers, 'Authorization', `Bearer ${auth}`) };
        return req;
      },
    }),
  },
  {
    name: 'auth-lowercase-bearer-refused',
    area: 'auth',
    description: 'The scheme is compared case-sensitively: `bearer <key>` gets 401 (RFC 9110 §11.1: schemes are case-insensitive).',
    expect: [REQ.authSchemeCase],
    proxy: () => ({
      request(req) {
        const auth = headers.get(req.headers, 'authorization');
        const scheme = auth?.trim().split(/\s+/)[0];
        if (scheme && scheme !== 'Bearer' && scheme.toLowerCase() === 'bearer') return { ...req, headers: headers.set(req.headers, 'Authorization', 'Bearer not-a-key') };
        return req;
      },
    }),
  },
  {
    name: 'auth-no-www-authenticate',
    area: 'auth',
    description: 'A 401 carries no `WWW-Authenticate` challenge (RFC 9110 §15.5.2, RFC 6750 §3).',
    expect: [REQ.authChallenge],
    proxy: () => respond((res) => res.status === 401, (res) => ({ ...res, headers: headers.remove(res.headers, 'www-authenticate') })),
  },

  // --- Error body -------------------------------------------------------------------------------
  {
    name: 'error-missing-code',
    area: 'error-body',
    description: 'The not-found handler writes `{ message, status }`: 404 Error bodies lack the required `code`.',
    expect: [REQ.errorBody],
    proxy: () => mapErrorBody(({ code, ...rest }, res) => (res.status === 404 ? rest : { code, ...rest })),
  },
  {
    name: 'error-status-string',
    area: 'error-body',
    description: 'The quickstart service (a separate deployment) writes the Error `status` as a string (`"400"`), not an integer.',
    expect: [REQ.errorBody],
    proxy: () => respond(
      (res, req) => isMessages(req) && isError(res) && isJson(res.headers),
      (res) => mapJson(res, (b) => (b && typeof b === 'object' ? { ...b, status: String(b.status) } : b)),
    ),
  },
  {
    name: 'error-status-mismatch',
    area: 'error-body',
    description: 'The not-found handler was copied from the validation handler: a 404 carries an Error body with `status: 400`.',
    expect: [REQ.errorStatusMatches],
    proxy: () => mapErrorBody((b, res) => (res.status === 404 ? { ...b, status: 400 } : b)),
  },
  {
    name: 'error-text-plain',
    area: 'error-body',
    description: 'The quickstart service labels its 400 Error bodies `text/plain` (a framework default) although they are JSON.',
    expect: [REQ.errorContentType],
    proxy: () => respond((res, req) => isMessages(req) && res.status === 400, (res) => ({ ...res, headers: headers.set(res.headers, 'Content-Type', 'text/plain; charset=utf-8') })),
  },

  // --- list shape and types ----------------------------------------------------------------------
  {
    name: 'list-petid-string',
    area: 'list',
    description: 'The list serializes `petId` as a string (a common int64 workaround) instead of an integer.',
    expect: [REQ.listSchema, REQ.listInt64],
    proxy: () => mapItems((item) => ({ ...item, petId: String(item.petId) })),
  },
  {
    name: 'list-status-outside-enum',
    area: 'list',
    description: '`status` uses a value outside PetStatus (`sold` renamed to `out_of_stock`).',
    expect: [REQ.listSchema, REQ.listStatusEnum],
    proxy: () => mapItems((item) => (item.status === 'sold' ? { ...item, status: 'out_of_stock' } : item)),
  },
  {
    name: 'list-quantity-missing',
    area: 'list',
    description: 'Zero quantities are omitted from items (Go-style `omitempty`), so the required `quantity` is missing.',
    expect: [REQ.listSchema],
    proxy: () => mapItems((item) => {
      if (item.quantity !== 0) return item;
      const { quantity: _q, ...rest } = item;
      return rest;
    }),
  },
  {
    name: 'list-int64-rounded',
    area: 'list',
    description: 'Ids above 2^53 are rounded as a JavaScript server would (JSON.parse/JSON.stringify): 9007199254740993 becomes 9007199254740992.',
    expect: [REQ.listInt64],
    proxy: () => respond(
      (res, req) => (isList(req) || isPatch(req)) && res.status === 200 && isJson(res.headers),
      (res) => ({ ...res, body: Buffer.from(JSON.stringify(JSON.parse(res.body.toString('utf8')))) }),
    ),
  },

  // --- update semantics --------------------------------------------------------------------------
  {
    name: 'update-not-persisted',
    area: 'update',
    description: 'PATCH answers 200 with the new quantity but the write is lost (the list keeps the old quantity).',
    expect: [REQ.updatePersisted],
    proxy: () => ({
      async request(req, ctx) {
        if (!isPatch(req) || typeof updateQuantity(req) !== 'number') return req;
        const before = await quantityBefore(req, ctx.forward);
        const res = await ctx.forward(req);
        if (res.status === 200 && before !== undefined) {
          await ctx.forward({ ...req, body: jsonBody({ quantity: before }) });
        }
        return res;
      },
    }),
  },
  {
    name: 'update-stale-response',
    area: 'update',
    description: 'PATCH persists the new quantity but answers with the item as it was before (a read-before-write cache).',
    expect: [REQ.updateResponse],
    proxy: () => ({
      async request(req, ctx) {
        if (!isPatch(req) || typeof updateQuantity(req) !== 'number') return req;
        const before = await quantityBefore(req, ctx.forward);
        const res = await ctx.forward(req);
        if (res.status !== 200 || before === undefined) return res;
        return mapJson(res, (b) => ({ ...b, quantity: before }));
      },
    }),
  },
  {
    name: 'update-string-quantity-coerced',
    area: 'update',
    description: 'A string quantity (`"5"`) is coerced to a number and accepted instead of 400.',
    expect: [REQ.update400],
    proxy: () => ({
      request: (req) => (isPatch(req) ? mapRequestJson(req, (b) => {
        if (b && typeof b === 'object' && typeof b.quantity === 'string') {
          const n = Number.parseInt(b.quantity, 10);
          return { ...b, quantity: Number.isNaN(n) ? 0 : n };
        }
        return b;
      }) : req),
    }),
  },
  {
    name: 'update-float-truncated',
    extended: true,
    area: 'update',
    description: 'A fractional quantity (`2.5`) is truncated to an integer and accepted instead of 400.',
    expect: [REQ.update400],
    proxy: () => ({
      request: (req) => (isPatch(req) ? mapRequestJson(req, (b) =>
        b && typeof b === 'object' && typeof b.quantity === 'number' && !Number.isInteger(b.quantity) ? { ...b, quantity: Math.trunc(b.quantity) } : b) : req),
    }),
  },
  {
    name: 'update-upsert',
    area: 'update',
    description: 'PATCH of an unknown pet creates it (200) instead of answering 404.',
    expect: [REQ.update404],
    proxy: () => respond(
      (res, req) => isPatch(req) && res.status === 404,
      (res, req) => {
        const q = updateQuantity(req);
        const id = petIdOf(req);
        const body = Buffer.from(`{"petId":${/^\d+$/.test(id) ? id : JSON.stringify(id)},"quantity":${JSON.stringify(q ?? 0)},"status":"available"}`);
        return { status: 200, headers: headers.set(res.headers, 'Content-Type', 'application/json'), body };
      },
    ),
  },

  // --- messages ------------------------------------------------------------------------------------
  {
    name: 'messages-createdat-local-offset',
    area: 'messages',
    description: '`createdAt` is written in the server\'s local time with an offset (`2026-01-01T11:00:00+02:00`), not UTC.',
    expect: [REQ.messageCreatedAt],
    proxy: () => mapMessage((m) => {
      const t = Date.parse(String(m.createdAt));
      if (Number.isNaN(t)) return m;
      const local = new Date(t + 2 * 3600_000).toISOString().replace(/\.\d+Z$|Z$/, '+02:00');
      return { ...m, createdAt: local };
    }),
  },
  {
    name: 'messages-id-number',
    area: 'messages',
    description: 'The message `id` is a number (an auto-increment column) instead of a string.',
    expect: [REQ.messageResponse],
    proxy: () => {
      let next = 1000;
      return mapMessage((m) => ({ ...m, id: next++ }));
    },
  },
  {
    name: 'messages-missing-content-type-accepted',
    area: 'messages',
    description: 'A message POST without `Content-Type` is parsed as JSON anyway and accepted instead of 400.',
    expect: [REQ.message400],
    proxy: () => ({
      request: (req) => (isMessages(req) && !headers.get(req.headers, 'content-type') ? { ...req, headers: [...req.headers, ['Content-Type', 'application/json']] } : req),
    }),
  },
  {
    name: 'messages-missing-message-accepted',
    area: 'messages',
    description: 'A message request without `message` is accepted (an empty message is queued) instead of 400.',
    expect: [REQ.message400],
    proxy: () => ({
      request: (req) => (isMessages(req) ? mapRequestJson(req, (b) =>
        b && typeof b === 'object' && !Array.isArray(b) && !('message' in b) ? { ...b, message: '(empty)' } : b) : req),
    }),
  },

  {
    name: 'messages-plain-json-refused',
    area: 'messages',
    description: 'The quickstart insists on `Content-Type: application/json; charset=utf-8`: the documented `application/json` gets 400.',
    expect: [REQ.messageHeaders],
    proxy: () => respond(
      (res, req) => isMessages(req) && res.status < 300 && !/charset/i.test(headers.get(req.headers, 'content-type') ?? 'charset'),
      (res) => answer(400, { code: 'invalid_content_type', message: 'Content-Type must declare charset=utf-8', status: 400 }, res.headers),
    ),
  },

  // --- rate-limit headers ------------------------------------------------------------------------
  {
    name: 'ratelimit-headers-missing-on-errors',
    area: 'rate-limit-headers',
    description: 'A 401 carries no `X-RateLimit-*` headers: the auth middleware answers before the limiter runs.',
    expect: [REQ.rlHeadersPresent],
    proxy: () => respond((res) => res.status === 401, (res) => ({ ...res, headers: res.headers.filter(([k]) => !/^x-ratelimit-/i.test(k)) })),
  },
  {
    name: 'ratelimit-headers-missing-on-quickstart',
    extended: true,
    area: 'rate-limit-headers',
    description: 'The quickstart messages operation sends no `X-RateLimit-*` headers (it sits behind another gateway).',
    expect: [REQ.rlHeadersPresent],
    proxy: () => respond((_res, req) => isMessages(req), (res) => ({ ...res, headers: res.headers.filter(([k]) => !/^x-ratelimit-/i.test(k)) })),
  },
  {
    name: 'ratelimit-reset-milliseconds',
    area: 'rate-limit-headers',
    description: '`X-RateLimit-Reset` is in epoch milliseconds (`Date.now()`-style) instead of seconds.',
    expect: [REQ.rlReset],
    proxy: () => ({ response: (res) => mapHeader(res, 'x-ratelimit-reset', (v) => String(Number(v) * 1000)) }),
  },
  {
    name: 'ratelimit-reset-delta',
    area: 'rate-limit-headers',
    description: '`X-RateLimit-Reset` is the number of seconds until the reset (a delta) instead of a Unix timestamp.',
    expect: [REQ.rlReset],
    proxy: () => ({ response: (res) => mapHeader(res, 'x-ratelimit-reset', (v) => String(Math.max(0, Number(v) - dateSeconds(res.headers)))) }),
  },
  {
    name: 'ratelimit-remaining-above-limit',
    area: 'rate-limit-headers',
    description: '`X-RateLimit-Remaining` counts the day window while `X-RateLimit-Limit` shows the minute limit, so Remaining exceeds Limit.',
    expect: [REQ.rlRemainingRange],
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
    area: 'rate-limit-headers',
    description: '`X-RateLimit-Limit` shows the figure of another plan (a free key reports the pro limit 300).',
    expect: [REQ.rlPlanLimit],
    proxy: () => ({
      response: (res) => mapHeader(res, 'x-ratelimit-limit', (v) => {
        const n = Number(v);
        const plan = Object.values(PLAN_LIMITS).find((p) => p.minute === n || p.day === n);
        if (!plan) return v;
        const order = Object.values(PLAN_LIMITS);
        const other = order[(order.indexOf(plan) + 1) % order.length]!;
        return String(plan.minute === n ? other.minute : other.day);
      }),
    }),
  },

  // --- 429 ---------------------------------------------------------------------------------------
  {
    name: '429-no-retry-after',
    area: '429',
    description: 'A 429 carries no `Retry-After` header.',
    expect: [REQ.retryAfterPresent],
    proxy: () => respond(isRateLimited, (res) => ({ ...res, headers: headers.remove(res.headers, 'retry-after') })),
  },
  {
    name: '429-retry-after-milliseconds',
    area: '429',
    description: '`Retry-After` is given in milliseconds (`2000` for two seconds).',
    expect: [REQ.retryAfterFormat],
    proxy: () => respond(isRateLimited, (res) => mapHeader(res, 'retry-after', (v) => (/^\d+$/.test(v) ? String(Number(v) * 1000) : v))),
  },
  {
    name: '429-retry-after-decimal',
    area: '429',
    description: '`Retry-After` is a decimal (`2.0`), which is neither delta-seconds nor an HTTP-date.',
    expect: [REQ.retryAfterFormat],
    proxy: () => respond(isRateLimited, (res) => mapHeader(res, 'retry-after', (v) => (/^\d+$/.test(v) ? `${v}.0` : v))),
  },
  {
    name: '429-retry-after-rounded-down',
    area: '429',
    description: '`Retry-After` is one second short of the lockout the server enforces, so a client that waits exactly that long still gets 429.',
    expect: [REQ.retryAfterSuffices],
    proxy: () => {
      // The server's own lockout per key: it ends a whole second after what Retry-After says.
      const lockedUntil = new Map<string, { until: number; res: ProxyResponse }>();
      return {
        request(req) {
          const key = tokenOf(req);
          const lock = key === undefined ? undefined : lockedUntil.get(key);
          if (!lock || Date.now() >= lock.until) return req;
          const left = Math.ceil((lock.until - Date.now()) / 1000);
          const hs = headers.set(headers.set(lock.res.headers, 'Retry-After', String(Math.max(0, left - 1))), 'Date', new Date().toUTCString());
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
    area: '429',
    description: 'Off by one: the request that brings Remaining to 0 is already refused, so only Limit-1 requests are admitted.',
    expect: [REQ.limitOffByOne],
    proxy: () => respond(
      (res) => res.status < 300 && intHeader(res.headers, 'x-ratelimit-remaining') === 0,
      (res) => {
        const reset = intHeader(res.headers, 'x-ratelimit-reset');
        const retry = Math.max(1, (reset ?? dateSeconds(res.headers) + 1) - dateSeconds(res.headers));
        return answer(429, { code: 'rate_limited', message: 'Too many requests', status: 429 }, headers.set(res.headers, 'Retry-After', String(retry)));
      },
    ),
  },
  {
    name: '429-late-by-one',
    area: '429',
    description: 'Off by one the other way (`count > limit`): Limit+1 requests are admitted in one window.',
    expect: [REQ.limitEnforced, REQ.limitOffByOne],
    store: () => lateByOneStore(),
  },
  {
    name: '429-limit-not-enforced',
    area: '429',
    description: 'The limiter runs in monitor-only mode: headers count down but no request is ever refused.',
    expect: [REQ.limitEnforced],
    store: () => unenforcedStore(),
  },
  {
    name: '429-over-admission-under-concurrency',
    area: '429',
    description: 'The limiter reads and writes its counter in separate steps, so concurrent requests are over-admitted.',
    expect: [REQ.limitConcurrent],
    store: () => racyStore(),
  },
  {
    name: '429-remaining-not-zero',
    area: '429',
    description: 'A 429 reports `X-RateLimit-Remaining: 1` (computed before the refused request was counted).',
    expect: [REQ.remainingZeroOn429],
    proxy: () => respond(isRateLimited, (res) => mapHeader(res, 'x-ratelimit-remaining', () => '1')),
  },

  // --- bans --------------------------------------------------------------------------------------
  {
    name: 'ban-after-honest-wait',
    area: 'ban',
    description: 'A key that waited the full `Retry-After` after a 429 is banned anyway on its next request.',
    expect: [REQ.retryAfterSuffices],
    proxy: () => {
      const limited = new Set<string>();
      return {
        request(req) {
          const token = tokenOf(req);
          if (token && limited.has(token)) {
            limited.delete(token);
            const base: HeaderList = [['X-RateLimit-Limit', '60'], ['X-RateLimit-Remaining', '0'], ['X-RateLimit-Reset', String(Math.ceil(Date.now() / 1000) + 5)], ['Retry-After', '5']];
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

  // --- malformed input ---------------------------------------------------------------------------
  {
    name: 'malformed-json-500',
    area: 'malformed-input',
    description: 'Invalid JSON in a PATCH body crashes the handler: 500 instead of 400.',
    expect: [REQ.update400],
    proxy: () => ({
      request(req) {
        if (!isPatch(req) || readJson(req.body) !== undefined || tokenOf(req) === undefined) return req;
        return crash('Unexpected token in JSON');
      },
    }),
  },
  {
    name: 'messages-invalid-json-500',
    extended: true,
    area: 'malformed-input',
    description: 'Invalid JSON in a message POST crashes the handler: 500 instead of 400.',
    expect: [REQ.message400],
    proxy: () => ({
      request(req) {
        if (!isMessages(req) || readJson(req.body) !== undefined || tokenOf(req) === undefined) return req;
        return crash('Unexpected token in JSON');
      },
    }),
  },
  {
    name: 'update-negative-quantity-500',
    area: 'malformed-input',
    description: 'A negative quantity reaches an unsigned database column: 500 instead of 200 or 400.',
    expect: [REQ.updateQuantityBounds],
    proxy: () => ({
      request: (req) => req, // buffers the request body, which the response hook reads
      ...respond(
        (_res, req) => isPatch(req) && tokenOf(req) !== undefined && (updateQuantity(req) as number) < 0,
        (res) => crash('out of range value for column quantity', res.headers),
      ),
    }),
  },
  {
    name: 'update-null-quantity-500',
    extended: true,
    area: 'malformed-input',
    description: '`{"quantity": null}` or a non-object body reaches the database layer: 500 instead of 400.',
    expect: [REQ.update400],
    proxy: () => ({
      request(req) {
        if (!isPatch(req) || tokenOf(req) === undefined) return req;
        const b = readJson(req.body) as any;
        if (b === undefined) return req;
        if (b === null || typeof b !== 'object' || Array.isArray(b) || b.quantity === null) {
          return crash('TypeError: cannot read properties of null');
        }
        return req;
      },
    }),
  },
  // --- more auth -----------------------------------------------------------------------------------
  {
    name: 'auth-bearer-ignored-on-quickstart',
    area: 'auth',
    description: 'The quickstart sits behind a gateway that reads the key only from `X-API-Key`: `Authorization: Bearer <key>` gets 401 there.',
    expect: [REQ.bearerScheme],
    proxy: () => respond(
      (res, req) => isMessages(req) && res.status < 300 && !headers.get(req.headers, 'x-api-key'),
      (res) => {
        const refused = answer(401, { code: 'missing_credentials', message: 'X-API-Key header required', status: 401 }, res.headers);
        return { ...refused, headers: [...refused.headers, ['WWW-Authenticate', 'Bearer realm="inventory"']] };
      },
    ),
  },
  {
    name: 'auth-token-case-insensitive',
    area: 'auth',
    description: 'The key is compared case-insensitively (a lower-cased lookup), so the key with swapped letter case is accepted.',
    expect: [REQ.authTokenCase],
    proxy: () => ({
      request(req, ctx) {
        const token = tokenOf(req);
        const key = knownKeys(ctx.env).find((k) => token !== undefined && k !== token && k.toLowerCase() === token.toLowerCase());
        return key ? { ...req, headers: headers.set(req.headers, 'Authorization', `Bearer ${key}`) } : req;
      },
    }),
  },
  {
    name: 'auth-empty-bearer-500',
    area: 'malformed-input',
    description: '`Authorization: Bearer` with no token crashes the auth middleware: 500.',
    expect: [REQ.authMalformed],
    proxy: () => ({
      request(req) {
        const auth = headers.get(req.headers, 'authorization');
        if (auth !== undefined && /^\s*bearer\s*$/i.test(auth)) return crash('Cannot read token');
        return req;
      },
    }),
  },
  {
    name: 'auth-checked-after-write',
    area: 'auth',
    description: 'PATCH applies the write before checking the key: the caller gets 401, but the stock changed.',
    expect: [REQ.authNoSideEffect],
    proxy: () => ({
      async request(req, ctx) {
        if (!isPatch(req) || !ctx.env.API_KEY) return req;
        const token = tokenOf(req);
        if (token !== undefined && knownKeys(ctx.env).includes(token)) return req;
        const refused = await ctx.forward(req);
        if (refused.status === 401 && typeof updateQuantity(req) === 'number') {
          await ctx.forward({ ...req, headers: headers.set(req.headers, 'Authorization', `Bearer ${ctx.env.API_KEY}`) });
        }
        return refused;
      },
    }),
  },

  {
    name: 'messages-auth-not-enforced',
    area: 'auth',
    description: 'The quickstart route was mounted before the auth middleware: a message without any key is accepted.',
    expect: [REQ.message401, REQ.authRequired],
    proxy: () => ({
      request(req, ctx) {
        if (!isMessages(req) || headers.get(req.headers, 'authorization') !== undefined || !ctx.env.API_KEY) return req;
        return { ...req, headers: [...req.headers, ['Authorization', `Bearer ${ctx.env.API_KEY}`]] };
      },
    }),
  },

  // --- more list and update ------------------------------------------------------------------------
  {
    name: 'update-404-html',
    area: 'error-body',
    description: 'An unknown pet gets the web framework\'s HTML "Not Found" page instead of an Error body.',
    expect: [REQ.update404, REQ.errorContentType],
    proxy: () => respond(
      (res, req) => isPatch(req) && res.status === 404,
      (res) => ({ ...res, headers: headers.set(res.headers, 'Content-Type', 'text/html; charset=utf-8'), body: Buffer.from('<!DOCTYPE html><html><body><h1>Not Found</h1></body></html>') }),
    ),
  },
  {
    name: 'list-duplicate-entry',
    area: 'list',
    description: 'A join in the list query returns one pet twice.',
    expect: [REQ.listUnique],
    proxy: () => respond((res, req) => isList(req) && res.status === 200, (res) => mapJson(res, (b) => (Array.isArray(b) && b.length ? [...b, b[0]] : b))),
  },
  {
    name: 'list-text-plain',
    area: 'list',
    description: 'The list is served as `text/plain` (a framework default) although the body is JSON.',
    expect: [REQ.listContentType],
    proxy: () => respond((res, req) => isList(req) && res.status === 200, (res) => ({ ...res, headers: headers.set(res.headers, 'Content-Type', 'text/plain') })),
  },
  {
    name: 'update-path-id-500',
    area: 'malformed-input',
    description: 'A path id that is not an int64 (`/inventory/abc`) reaches the database: 500.',
    expect: [REQ.updatePathId],
    proxy: () => ({
      request(req) {
        if (!isPatch(req) || tokenOf(req) === undefined) return req;
        const id = petIdOf(req);
        const valid = /^-?\d{1,19}$/.test(id) && BigInt(id) <= 2n ** 63n - 1n && BigInt(id) >= -(2n ** 63n);
        return valid ? req : crash('invalid input syntax for type bigint');
      },
    }),
  },

  // --- HTTP and versioning ---------------------------------------------------------------------------
  {
    name: 'versioning-no-v1-segment',
    area: 'versioning',
    description: 'The deployment serves the inventory under `/api` with no version segment; `/v1/...` is 404.',
    expect: [REQ.basePathV1],
    basePath: '/api',
    proxy: () => ({
      request(req) {
        if (req.path === '/api' || req.path.startsWith('/api/')) return { ...req, path: `/v1${req.path.slice(4)}` };
        if (req.path === '/v1' || req.path.startsWith('/v1/')) return answer(404, { code: 'not_found', message: 'no such route', status: 404 });
        return req;
      },
    }),
  },
  {
    name: 'http-no-date',
    area: 'rate-limit-headers',
    description: 'Error responses carry no `Date` header (the error writer turns it off; RFC 9110 §6.6.1 requires it on 4xx).',
    expect: [REQ.dateHeader],
    proxy: () => respond((res) => res.status >= 400 && res.status < 500, (res) => ({ ...res, headers: headers.remove(res.headers, 'date') })),
  },
  {
    name: 'deprecation-sunset-iso-date',
    area: 'versioning',
    description: 'The deprecated `GET /pets/{petId}` carries `Sunset` as an ISO 8601 date instead of an HTTP-date.',
    expect: [REQ.sunset],
    proxy: () => ({ response: (res) => mapHeader(res, 'sunset', (v) => new Date(Date.parse(v)).toISOString()) }),
  },
  {
    name: 'deprecation-sunset-before-deprecation',
    area: 'versioning',
    description: '`Sunset` is earlier than `Deprecation` (RFC 9745 §3).',
    expect: [REQ.sunset],
    proxy: () => ({
      response(res) {
        const dep = headers.get(res.headers, 'deprecation')?.match(/^@(\d+)$/);
        if (!dep) return res;
        return mapHeader(res, 'sunset', () => new Date((Number(dep[1]) - 86_400 * 30) * 1000).toUTCString());
      },
    }),
  },
  {
    name: 'deprecation-malformed',
    area: 'versioning',
    description: '`Deprecation` is neither a structured date nor an obsolete form: `Deprecation: yes`.',
    expect: [REQ.deprecation],
    proxy: () => ({ response: (res) => mapHeader(res, 'deprecation', () => 'yes') }),
  },

  {
    name: 'update-hangs-on-invalid-json',
    area: 'malformed-input',
    description: 'A PATCH whose body is not JSON is never answered (the handler waits for a body it cannot parse): the client hangs.',
    expect: [REQ.update400],
    env: { REQUEST_TIMEOUT_MS: '3000' },
    proxy: () => ({
      request: (req) => (isPatch(req) && tokenOf(req) !== undefined && req.body.length > 0 && readJson(req.body) === undefined ? 'swallow' : req),
    }),
  },

  // --- load ----------------------------------------------------------------------------------------
  {
    name: 'load-slow-under-concurrency',
    area: 'load',
    description: 'Requests queue behind a single database connection: with two or more in flight, each waits 1.2 s, so p99 latency under load is above the threshold.',
    expect: [REQ.noErrorsUnderLoad],
    // The default threshold, and runs long enough for the slow responses to complete inside them.
    env: { LOAD_P99_MS: '1000', LOAD_DURATION_S: '3' },
    proxy: () => {
      let inflight = 0;
      return {
        request(req) {
          inflight++;
          return req;
        },
        delayMs: () => (inflight >= 2 ? 1200 : 0),
        response(res) {
          inflight--;
          return res;
        },
      };
    },
  },
  {
    name: 'load-503-when-busy',
    area: 'load',
    description: 'A too-small connection pool: with 3 requests in flight, further ones get 503 (sequential checks never notice).',
    expect: [REQ.noErrorsUnderLoad],
    proxy: () => {
      let inflight = 0;
      return {
        request(req) {
          if (inflight >= 3) return answer(503, { code: 'unavailable', message: 'Service busy', status: 503 });
          inflight++;
          return req;
        },
        response(res) {
          inflight--;
          return res;
        },
      };
    },
  },
];

/** The fault named `name`, or an error listing the names. */
export function faultByName(name: string): Fault {
  const f = faults.find((x) => x.name === name);
  if (!f) throw new Error(`unknown fault "${name}"; known: ${faults.map((x) => x.name).join(', ')}`);
  return f;
}
