import { headers, type FaultHooks, type HeaderList, type ProxyRequest, type ProxyResponse } from './proxy.ts';
import { dateSeconds, isError, isJson, isList, isMessages, isPatch, jsonBody, mapJson, petIdOf, readJson } from './lib.ts';
import { slidingWindowStore } from './stores.ts';
import { startDeploymentTarget } from './deployment.ts';
import { startCaseReference } from './reference.ts';
import { zooVariants } from './zoo-variants.ts';
import type { Variant } from './variant.ts';

export type { Variant } from './variant.ts';

type HttpDateFormat = 'imf-fixdate' | 'rfc850' | 'asctime';
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n: number) => String(n).padStart(2, '0');

/** Formats epoch seconds as an HTTP-date in one of the three formats of RFC 9110 §5.6.7. */
export function httpDate(seconds: number, format: HttpDateFormat): string {
  const d = new Date(seconds * 1000);
  const time = `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
  const mon = MONTHS[d.getUTCMonth()]!;
  const day = DAYS[d.getUTCDay()]!;
  if (format === 'imf-fixdate') return d.toUTCString();
  if (format === 'rfc850') return `${day}, ${two(d.getUTCDate())}-${mon}-${two(d.getUTCFullYear() % 100)} ${time} GMT`;
  return `${day.slice(0, 3)} ${mon} ${String(d.getUTCDate()).padStart(2, ' ')} ${time} ${d.getUTCFullYear()}`;
}

/**
 * `Retry-After` as an HTTP-date. The date is the response `Date` plus the delta plus one second:
 * `Date` is truncated to the second, so `Date + delta` alone could fall up to a second before the
 * real end of the wait, and the variant must stay truthful.
 */
function retryAfterAsDate(res: ProxyResponse, format: HttpDateFormat): ProxyResponse {
  const v = headers.get(res.headers, 'retry-after');
  if (res.status !== 429 || v === undefined || !/^\d+$/.test(v.trim())) return res;
  return { ...res, headers: headers.set(res.headers, 'Retry-After', httpDate(dateSeconds(res.headers) + Number(v) + 1, format)) };
}

/** Renames every header to `rename(name)` (values and order unchanged). */
function renameHeaders(list: HeaderList, rename: (name: string) => string): HeaderList {
  return list.map(([k, v]) => [rename(k), v]);
}

/** Chains hooks: requests through each in order, responses back in reverse. */
export function chain(...parts: FaultHooks[]): FaultHooks {
  return {
    async request(req, ctx) {
      let current: ProxyRequest = req;
      for (const p of parts) {
        if (!p.request) continue;
        const out = await p.request(current, ctx);
        if (out === 'swallow' || 'status' in out) return out;
        current = out;
      }
      return current;
    },
    async response(res, req, ctx) {
      let current = res;
      for (const p of [...parts].reverse()) if (p.response) current = await p.response(current, req, ctx);
      return current;
    },
  };
}

/**
 * The legacy-style server. Negative quantities: the upstream (the reference server) refuses them,
 * so the variant stores them itself: the PATCH is forwarded with quantity 0 (so auth, the pet's
 * existence and the write all go through the upstream), the negative value is kept per pet and
 * shown in the PATCH response and in every list until the next successful PATCH of that pet.
 */
function legacyStyle(): FaultHooks {
  const negative = new Map<string, number>();
  return {
    async request(req, ctx) {
      if (!isPatch(req)) return req;
      const q = (readJson(req.body) as { quantity?: unknown } | undefined)?.quantity;
      const id = petIdOf(req);
      if (typeof q !== 'number' || !Number.isInteger(q) || q >= 0) return req;
      const res = await ctx.forward({ ...req, body: jsonBody({ quantity: 0 }) });
      if (res.status !== 200) return res;
      negative.set(id, q);
      return legacyResponse(
        mapJson(res, (b) => ({ ...b, quantity: q })),
        req,
      );
    },
    response(res, req) {
      if (isPatch(req) && res.status === 200) negative.delete(petIdOf(req));
      if (isList(req) && res.status === 200 && negative.size) {
        res = mapJson(res, (b) =>
          Array.isArray(b) ? b.map((i) => (negative.has(String(i?.petId)) ? { ...i, quantity: negative.get(String(i.petId)) } : i)) : b,
        );
      }
      return legacyResponse(res, req);
    },
  };
}

function legacyResponse(res: ProxyResponse, req: ProxyRequest): ProxyResponse {
  let out = retryAfterAsDate(res, 'rfc850');
  if (isMessages(req) && out.status === 201) {
    out = mapJson({ ...out, status: 200 }, (b) => ({ ...b, status: 'sent', createdAt: String(b.createdAt).replace(/Z$/, '+00:00') }));
  } else if (isPatch(req) && out.status === 400) {
    const code = (readJson(out.body) as { code?: unknown } | undefined)?.code;
    if (code === 'invalid_pet_id') out = mapJson({ ...out, status: 404 }, (b) => ({ ...b, code: 'NOT_FOUND', status: 404 }));
  }
  const auth = headers.get(req.headers, 'authorization');
  if (out.status === 401 && auth !== undefined && /^\s*bearer\s*$/i.test(auth)) {
    out = mapJson({ ...out, status: 400 }, (b) => ({ ...b, code: 'invalid_request', status: 400 }));
    out = { ...out, headers: headers.set(out.headers, 'WWW-Authenticate', 'Bearer error="invalid_request"') };
  }
  if (isError(out)) out = mapJson(out, (b) => (typeof b?.code === 'string' ? { ...b, code: `E_${b.code.toUpperCase()}` } : b));
  if (isJson(out.headers)) out = { ...out, headers: headers.set(out.headers, 'Content-Type', 'application/json;charset=UTF-8') };
  return { ...out, headers: renameHeaders(out.headers, (k) => k.toUpperCase()) };
}

/**
 * A server that stamps each item with the time of its last update: `updatedAt` changes with every
 * successful PATCH, so after a run has put a count back the item differs from what was first
 * listed in that member only.
 */
function updatedAtStamp(): FaultHooks {
  const stamps = new Map<string, string>();
  const stampOf = (id: string) => stamps.get(id) ?? '2026-01-01T00:00:00.000Z';
  return {
    response(res, req) {
      if (isPatch(req) && res.status === 200) {
        stamps.set(petIdOf(req), new Date().toISOString());
        return mapJson(res, (b) => ({ ...b, updatedAt: stampOf(petIdOf(req)) }));
      }
      if (isList(req) && res.status === 200)
        return mapJson(res, (b) => (Array.isArray(b) ? b.map((i) => ({ ...i, updatedAt: stampOf(String(i?.petId)) })) : b));
      return res;
    },
  };
}

/**
 * A conformant server that another client uses at the same time: the first list read after a
 * change of a pet (a PATCH with a count other than the pet's first listed one) shows that pet at
 * another client's count, as if it wrote the pet just before and put it back just after. Once per
 * pet, and never after a PATCH that writes the first listed count (a restore), so the store the run
 * leaves is the store it found.
 */
function anotherClientOnThePets(): FaultHooks {
  const first = new Map<string, number>();
  const pending = new Set<string>();
  const done = new Set<string>();
  return {
    request: (req) => req, // buffers the request body, which the response hook reads
    response(res, req) {
      if (isPatch(req)) {
        const id = petIdOf(req);
        const q = (readJson(req.body) as { quantity?: unknown } | undefined)?.quantity;
        if (q === first.get(id)) pending.delete(id);
        else if (!done.has(id) && first.has(id)) pending.add(id);
        return res;
      }
      if (!isList(req) || res.status !== 200) return res;
      const list = readJson(res.body);
      if (!Array.isArray(list)) return res;
      for (const i of list) if (typeof i?.quantity === 'number' && !first.has(String(i.petId))) first.set(String(i.petId), i.quantity);
      if (!pending.size) return res;
      const shown = new Set(pending);
      for (const id of shown) done.add(id);
      pending.clear();
      return mapJson(res, (b) => (Array.isArray(b) ? b.map((i) => (shown.has(String(i?.petId)) ? { ...i, quantity: 4242 } : i)) : b));
    },
  };
}

/** nginx's own error page for `status` (as nginx 1.22 writes it): HTML, its Server header, none of the API's headers. */
function frontDoorPage(status: number, reason: string): ProxyResponse {
  const body = `<html>\r\n<head><title>${status} ${reason}</title></head>\r\n<body>\r\n<center><h1>${status} ${reason}</h1></center>\r\n<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n`;
  const list: HeaderList = [
    ['Server', 'nginx/1.22.1'],
    ['Date', new Date().toUTCString()],
    ['Content-Type', 'text/html'],
    ['Connection', 'close'],
  ];
  return { status, headers: list, body: Buffer.from(body) };
}

/** A front door that answers TRACE (405) and a target that is not valid HTTP or encodes a NUL (400) itself, as nginx does. */
function frontDoorPages(): FaultHooks {
  return {
    request(req) {
      if (req.method.toUpperCase() === 'TRACE') return frontDoorPage(405, 'Not Allowed');
      if (/%(?![0-9A-Fa-f]{2})|%00/.test(req.path)) return frontDoorPage(400, 'Bad Request');
      return req;
    },
  };
}

export const variants: Variant[] = [
  {
    name: 'gateway-style',
    description:
      'An API-gateway style deployment: lowercase header names, JSON with charset, extra fields, 202 for messages, an empty 429 body, Retry-After as an IMF-fixdate.',
    choices: [
      'header names all lowercase (RFC 9110 §5.1: names are case-insensitive)',
      'Content-Type `application/json; charset=utf-8` (RFC 8259 §11, RFC 9110 §8.3.1)',
      'extra fields in items, Error bodies and message responses (the spec lists required fields only)',
      'messages answer 202 Accepted (the spec names no success code)',
      'message `status` "accepted" (values other than `queued`: not shown)',
      '`createdAt` without fractional seconds (`2026-01-01T00:00:00Z` is ISO 8601 UTC)',
      'a 429 with an empty body (spec: "Body of the 429 response: not shown")',
      'Retry-After as an IMF-fixdate HTTP-date (RFC 9110 §10.2.3)',
      'a 401 with two challenges, `Basic` before `Bearer` (RFC 9110 §11.6.1 allows several)',
      'further headers: `ratelimit-policy`, `cache-control`, `x-request-id`',
    ],
    proxy: () => ({
      response(res, req) {
        let out = retryAfterAsDate(res, 'imf-fixdate');
        if (isJson(out.headers)) out = { ...out, headers: headers.set(out.headers, 'Content-Type', 'application/json; charset=utf-8') };
        if (out.status === 429) {
          out = { ...out, body: Buffer.alloc(0), headers: headers.remove(out.headers, 'content-type') };
        } else if (isList(req) && out.status === 200) {
          out = mapJson(out, (b) =>
            Array.isArray(b) ? b.map((item) => ({ ...item, warehouse: 'north', updatedAt: '2026-01-01T00:00:00Z' })) : b,
          );
        } else if (isPatch(req) && out.status === 200) {
          out = mapJson(out, (b) => ({ ...b, warehouse: 'north' }));
        } else if (isMessages(req) && out.status === 201) {
          out = mapJson({ ...out, status: 202 }, (b) => ({
            ...b,
            status: 'accepted',
            channel: 'default',
            createdAt: String(b.createdAt).replace(/\.\d+Z$/, 'Z'),
          }));
        } else if (isError(out)) {
          out = mapJson(out, (b) => ({ ...b, requestId: 'req-0001', details: [] }));
        }
        const challenge = headers.get(out.headers, 'www-authenticate');
        if (out.status === 401 && challenge)
          out = { ...out, headers: headers.set(out.headers, 'WWW-Authenticate', `Basic realm="inventory", ${challenge}`) };
        out = {
          ...out,
          headers: [...out.headers, ['RateLimit-Policy', '60;w=60'], ['Cache-Control', 'no-store'], ['X-Request-Id', 'req-0001']],
        };
        return { ...out, headers: renameHeaders(out.headers, (k) => k.toLowerCase()) };
      },
    }),
  },
  {
    name: 'legacy-style',
    description:
      'A server built on another stack: UPPERCASE header names, Retry-After in RFC 850 format, 200 for messages, `+00:00` timestamps, 404 for malformed path ids, other Error codes.',
    choices: [
      'header names all uppercase (RFC 9110 §5.1)',
      'Retry-After as an RFC 850 HTTP-date (obsolete but recipients must accept it, RFC 9110 §5.6.7)',
      'messages answer 200 OK (the spec names no success code)',
      'message `status` "sent" (values other than `queued`: not shown)',
      '`createdAt` with `+00:00` instead of `Z` (both denote UTC, RFC 3339)',
      'a path id that is not an integer (`/inventory/abc`) answers 404 instead of 400 (no pet has that id)',
      'Error `code` values in another style (values of `code`: not shown)',
      '`Authorization: Bearer` without a token answers 400 `invalid_request` (RFC 6750 §3.1) instead of 401',
      '`Content-Type: application/json;charset=UTF-8` (no space, upper-case charset value)',
      'negative quantities are accepted and stored (spec: "Minimum or maximum value of quantity: not shown")',
    ],
    proxy: () => legacyStyle(),
  },
  {
    name: 'sliding-window',
    description:
      'A sliding-log limiter: Reset is when the window is fully free again, Retry-After when the oldest request leaves it, given as an asctime HTTP-date; odd-case header names.',
    choices: [
      'a sliding window instead of fixed windows (the spec does not say which)',
      'Retry-After as an asctime HTTP-date (RFC 9110 §5.6.7)',
      'header names in odd case, e.g. `x-RateLimit-remaining` (RFC 9110 §5.1)',
    ],
    store: () => slidingWindowStore(),
    proxy: () => ({
      response(res) {
        const out = retryAfterAsDate(res, 'asctime');
        const odd: Record<string, string> = {
          'x-ratelimit-limit': 'X-RATELIMIT-limit',
          'x-ratelimit-remaining': 'x-RateLimit-remaining',
          'x-ratelimit-reset': 'X-Ratelimit-RESET',
          'content-type': 'content-TYPE',
        };
        return { ...out, headers: renameHeaders(out.headers, (k) => odd[k.toLowerCase()] ?? k) };
      },
    }),
  },
  {
    name: 'updated-at-stamp',
    description:
      'Items carry `updatedAt`, the time of their last successful update: it changes with every PATCH, also with one that writes the count back.',
    choices: [
      'an extra member `updatedAt` in items that changes with every update (the spec lists required fields only; a restored count leaves a new stamp)',
    ],
    proxy: () => updatedAtStamp(),
  },
  {
    name: 'another-client-on-the-pets',
    description:
      'A conformant server that another client uses at the same time: right after the run changes a pet, the next list shows that pet at a count the run never sent ' +
      '(once per pet), as when a second pipeline or a person writes the same pet and puts it back. Only the functional and generated phases run: their checks read counts back through the list.',
    choices: [
      'another client writes the pets the run writes (a shared deployment; the spec does not make a key exclusive): a count the run never sent proves nothing about the server, so it leaves the check not certified, never failed',
    ],
    proxy: () => anotherClientOnThePets(),
    phases: ['functional', 'generated'],
  },
  {
    name: 'multi-instance-redis',
    description:
      'Three reference-server processes behind one address (node cluster, connections handed round robin), sharing one atomic limiter and the inventory on Redis: ' +
      'the deployment whose per-process variant is the fault multi-instance-per-process-limiter. Only the rate-limit and load phases run: they are the checks ' +
      'whose verdict depends on which process answers (the headers, 429, Retry-After and exhaustion of one key, and the over-admission burst spread over the ' +
      'instances); the functional and generated checks judge one response at a time, and the shared inventory across instances is proven by tests/redis.',
    choices: [
      'several processes answer one key (the spec does not say how many; the limits belong to the key, and hold across them)',
      'a burst is spread over the instances and often straddles a window boundary (fixed windows admit up to twice the limit across one)',
      "each instance writes its own `Date`, while windows, Reset and Retry-After follow the shared store's clock",
    ],
    upstream: () => startDeploymentTarget(),
    phases: ['rate-limit', 'load'],
  },
  {
    name: 'front-door-pages',
    description:
      'The service behind a front door that answers some requests itself, as nginx does by default: TRACE gets its 405 page, a request target with an invalid percent-encoding or %00 its 400 page (HTML, `Server: nginx`, no X-RateLimit headers). Only the generated phase runs: it is the one that sends such requests.',
    choices: [
      'an intermediary answers a method the spec does not define with its own 405 (RFC 9110 §3.7, §15.5.6)',
      'an intermediary refuses a request target that is not valid HTTP (RFC 3986 §2.1) or encodes a NUL (RFC 3986 §7.3) with its own 400 (RFC 9110 §15.5.1)',
    ],
    proxy: () => frontDoorPages(),
    phases: ['generated'],
  },
  {
    name: 'limits-every-form-of-the-key',
    description:
      'A gateway that limits by any key it finds: a request refused with 401 that carries a known key in another form (bare, `bearer` in another case, `Basic`) ' +
      "still counts against that key's limit, so the run's own refused requests lower its X-RateLimit-Remaining. A run alone on it names no other client.",
    choices: [
      'requests refused with 401 count against the limit of the key they carry, whatever its form (the spec does not say what a refused request costs)',
    ],
    upstream: () => startCaseReference({ server: { countRefusedKeys: true } }),
  },
  ...zooVariants,
];

/** The variant named `name`, or an error listing the names. */
export function variantByName(name: string): Variant {
  const v = variants.find((x) => x.name === name);
  if (!v) throw new Error(`unknown variant "${name}"; known: ${variants.map((x) => x.name).join(', ')}`);
  return v;
}
