/**
 * Faults the generated checks must catch (suites/generated, ledger GEN-*): inputs of each
 * generated request class answered with a 500 (a handler that throws instead of refusing),
 * a response kind no hand-written check provokes without its rate-limit headers, path ids rounded
 * through a double, and a cached list served after an update. Each condition is written from the
 * server's side (what a real handler would trip on), never from the generator's internals. The
 * default matrix keeps one 500 fault per kind of input (body text, number representation); the
 * other classes' 500 faults are `extended` (each shown caught with `npx tsx faults/cli.ts <name>`).
 */
import { headers, type FaultHooks, type ProxyRequest, type ProxyResponse } from '../proxy.ts';
import { crash, isList, isMessages, isPatch, pathOf, readJson, respond, tokenOf } from '../lib.ts';
import type { FaultDefinition } from '../fault.ts';

/** The documented operations by path (inventory and quickstart): which methods each has. */
function documentedMethod(req: ProxyRequest): string | undefined {
  const p = pathOf(req);
  if (/\/v1\/inventory$/.test(p)) return 'GET';
  if (/\/v1\/inventory\/[^/]+$/.test(p)) return 'PATCH';
  if (/\/messages$/.test(p)) return 'POST';
  if (/\/v1\/pets\/[^/]+$/.test(p) || /\/v1\/store\/orders$/.test(p)) return 'GET';
  return undefined;
}

/** Answers 500 (keeping the upstream's rate-limit headers) when `when(req)` holds; the request is buffered so `when` can read its body. */
function crashWhen(message: string, when: (req: ProxyRequest) => boolean): FaultHooks {
  return {
    request: (req) => req,
    ...respond(
      (_res, req) => tokenOf(req) !== undefined && when(req),
      (res) => crash(message, res.headers),
    ),
  };
}

/** The routes of the spec, as a canonical path (`{petId}` any segment without a slash). */
const KNOWN_ROUTES = [
  /^\/v1\/inventory$/,
  /^\/v1\/inventory\/[^/;%]+$/,
  /^\/quickstart\/messages$/,
  /^\/v1\/pets\/[^/;%]+$/,
  /^\/v1\/store\/orders$/,
];

const hasBody = (req: ProxyRequest) => isPatch(req) || isMessages(req);
const text = (req: ProxyRequest) => req.body.toString('utf8');
const INT64_MAX = 2n ** 63n - 1n;

/** The raw last path segment of an update or pet request. */
function idSegment(req: ProxyRequest): string | undefined {
  const m = /\/v1\/(?:inventory|pets)\/([^/?]+)/.exec(req.path);
  return m?.[1];
}

/** The path of a request without its query. */
const rawPath = (req: ProxyRequest) => req.path.split('?')[0]!;

export const faults: FaultDefinition[] = [
  {
    name: 'gen-boolean-quantity-accepted',
    description:
      'The update handler reads the quantity with `Number(body.quantity)`: `true` and `false` become 1 and 0 and are stored (200) instead of refused with 400.',
    expect: ['GEN-03'],
    proxy: () => ({
      request(req) {
        if (!isPatch(req)) return req;
        const body = text(req).replace(/("quantity"\s*:\s*)(true|false)/, (_m, k: string, b: string) => `${k}${b === 'true' ? 1 : 0}`);
        return body === text(req)
          ? req
          : { ...req, body: Buffer.from(body), headers: headers.set(req.headers, 'Content-Length', String(Buffer.byteLength(body))) };
      },
    }),
  },
  {
    name: 'gen-500-message-null-or-long',
    description:
      'Messages go into a NOT NULL varchar(1000) column without validation: `"message": null` or a message over 1,000 characters makes the insert fail (500 instead of 400 or 2xx).',
    expect: ['GEN-01'],
    proxy: () =>
      crashWhen('ER_BAD_NULL_ERROR: Column message cannot be null', (req) => {
        if (!isMessages(req)) return false;
        const m = (readJson(req.body) as { message?: unknown } | undefined)?.message;
        return m === null || (typeof m === 'string' && m.length > 1_000);
      }),
  },
  {
    name: 'gen-500-long-bearer-token',
    description:
      'The key lookup copies the bearer token into a 256-byte buffer: a token of a few hundred characters throws (500 instead of 401).',
    expect: ['GEN-01'],
    proxy: () => ({
      request: (req) => req,
      ...respond(
        (_res, req) => (/^\s*bearer\s+(\S+)/i.exec(headers.get(req.headers, 'authorization') ?? '')?.[1]?.length ?? 0) > 256,
        (res) => crash('RangeError: token longer than 256 bytes', res.headers),
      ),
    }),
  },
  {
    name: 'gen-500-broken-percent-path',
    description:
      'The router calls `decodeURIComponent` on the path without a guard: a segment with a truncated or non-hex escape, or one that decodes to invalid UTF-8, throws URIError (500 instead of 400 or 404).',
    expect: ['GEN-01'],
    proxy: () =>
      crashWhen('URIError: URI malformed', (req) => {
        try {
          decodeURIComponent(rawPath(req));
          return false;
        } catch {
          return true;
        }
      }),
  },
  {
    name: 'gen-500-head',
    description:
      'HEAD is routed to the GET handlers, which then write a body on a response that may not have one and throw (500 on every HEAD, although RFC 9110 §9.1 requires GET and HEAD).',
    expect: ['GEN-01'],
    proxy: () => crashWhen('Error [ERR_HTTP_BODY_NOT_ALLOWED]', (req) => req.method === 'HEAD'),
  },
  {
    name: 'gen-500-odd-path-id',
    extended: true,
    description:
      'The id segment goes straight into BigInt() after decodeURIComponent(): letters, signs, fractions, escapes, other digits or ids beyond int64 throw and answer 500 instead of 400/404.',
    expect: ['GEN-01'],
    proxy: () =>
      crashWhen('SyntaxError: Cannot convert to a BigInt', (req) => {
        const seg = idSegment(req);
        if (seg === undefined) return false;
        if (!/^(0|-?[1-9]\d*)$/.test(seg)) return true;
        const id = BigInt(seg);
        return id > INT64_MAX || id < -INT64_MAX - 1n;
      }),
  },
  {
    name: 'gen-500-unparsable-body',
    description:
      'The body parser throws on anything but one plain JSON object with known, unique members (truncated or trailing text, a BOM, comments, NaN, wrappers, unknown or duplicate members): 500 instead of 400.',
    expect: ['GEN-01'],
    proxy: () =>
      crashWhen('SyntaxError: Unexpected token in JSON', (req) => {
        if (!hasBody(req)) return false;
        const known = isPatch(req) ? ['quantity'] : ['message'];
        let parsed: unknown;
        try {
          parsed = JSON.parse(text(req));
        } catch {
          return true;
        }
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return true;
        const keys = Object.keys(parsed);
        if (keys.some((k) => !known.includes(k))) return true;
        if (known.some((k) => text(req).split(`"${k}"`).length > 2)) return true;
        return Object.values(parsed).some((v) => typeof v === 'number' && !Number.isFinite(v));
      }),
  },
  {
    name: 'gen-500-wrong-member-type',
    extended: true,
    description:
      'The update and message handlers read members before validating them: a non-object body, a missing member or a member of another JSON type throws (500 instead of 400).',
    expect: ['GEN-01'],
    proxy: () =>
      crashWhen('TypeError: Cannot read properties of undefined', (req) => {
        if (!hasBody(req)) return false;
        const body = readJson(req.body) as Record<string, unknown> | undefined;
        if (body === undefined) return false;
        if (body === null || typeof body !== 'object' || Array.isArray(body)) return true;
        return isPatch(req) ? typeof body.quantity !== 'number' : typeof body.message !== 'string';
      }),
  },
  {
    name: 'gen-500-message-encoding',
    extended: true,
    description:
      'Messages go into a latin1 varchar(255) column through string-built SQL: non-ASCII or control characters, quotes, markup, an empty or an over-long message make the insert fail (500 instead of 201).',
    expect: ['GEN-01'],
    proxy: () =>
      crashWhen('ER_TRUNCATED_WRONG_VALUE_FOR_FIELD', (req) => {
        if (!isMessages(req)) return false;
        const m = (readJson(req.body) as { message?: unknown } | undefined)?.message;
        return typeof m === 'string' && (m === '' || m.length > 255 || /[^\x20-\x7e]|['"<\\]/.test(m));
      }),
  },
  {
    name: 'gen-500-number-representation',
    description:
      'A hand-written integer reader accepts only plain digits: a quantity written `5.0`, `1e2` or `50e-1` (integers by JSON Schema) throws (500 instead of 200 or 400).',
    expect: ['GEN-01'],
    proxy: () => crashWhen('NumberFormatException', (req) => isPatch(req) && /"quantity"\s*:\s*-?\d+(\.\d+|[eE][+-]?\d+)/.test(text(req))),
  },
  {
    name: 'gen-500-boundary-quantity',
    extended: true,
    description:
      'The stock column is a signed 32-bit integer read with `if (!quantity)`: 0, negative quantities and quantities of 2^31 or more throw (500 instead of 200 or 400).',
    expect: ['GEN-01'],
    // Its cases are the boundary quantities of updateInventory's coverage, which come after the
    // other operations' coverage: the matrix's budget of 300 ends before them (a default run's fits).
    env: { GENERATED_BUDGET: '1000' },
    proxy: () =>
      crashWhen('out of range value for column quantity', (req) => {
        if (!isPatch(req)) return false;
        const m = /"quantity"\s*:\s*(-?\d+)\s*[,}]/.exec(text(req));
        if (!m) return false;
        const q = BigInt(m[1]!);
        return q <= 0n || q >= 2n ** 31n;
      }),
  },
  {
    name: 'gen-500-other-methods',
    extended: true,
    description:
      'The method dispatcher has no fallback: OPTIONS, TRACE, HEAD or a method the path does not have throws (500 instead of 405 or 404).',
    expect: ['GEN-01'],
    proxy: () =>
      crashWhen('TypeError: handler is not a function', (req) => {
        const documented = documentedMethod(req);
        return documented !== undefined && req.method !== documented;
      }),
  },
  {
    name: 'gen-500-url-forms',
    extended: true,
    description:
      'The router throws on a target it does not know verbatim: a query string, a trailing or doubled slash, a matrix parameter, upper case or an escaped letter (500 instead of 200 or 404).',
    expect: ['GEN-01'],
    proxy: () =>
      crashWhen('RouteError: unmatched target', (req) => {
        const [raw, query] = [req.path.split('?')[0]!, req.path.includes('?')];
        let normal = raw;
        try {
          normal = decodeURIComponent(raw);
        } catch {
          return false;
        }
        normal = normal
          .toLowerCase()
          .replace(/\/{2,}/g, '/')
          .replace(/;[^/]*/g, '')
          .replace(/\/$/, '');
        const known = KNOWN_ROUTES.some((r) => r.test(normal));
        return known && (query || !KNOWN_ROUTES.some((r) => r.test(raw)));
      }),
  },
  {
    name: 'gen-500-header-values',
    extended: true,
    description:
      'Content negotiation and logging middleware throw on headers they did not expect: an Accept other than application/json, a non-ASCII or 4 KB+ value, the scheme spelled other than `Bearer`, a malformed X-Forwarded-For, Accept-Language, If-None-Match or Range (500).',
    expect: ['GEN-01'],
    proxy: () =>
      crashWhen('TypeError: cannot negotiate', (req) => {
        const accept = headers.get(req.headers, 'accept');
        if (accept !== undefined && accept !== 'application/json') return true;
        if (req.headers.some(([, v]) => v.length > 4_000 || /[^\x20-\x7e]/.test(v))) return true;
        const auth = headers.get(req.headers, 'authorization');
        if (auth !== undefined && !auth.startsWith('Bearer ')) return true;
        return ['x-forwarded-for', 'accept-language', 'if-none-match', 'range'].some((h) => headers.get(req.headers, h) !== undefined);
      }),
  },
  {
    name: 'gen-500-content-types',
    extended: true,
    description:
      'The body parser is chosen by an exact Content-Type lookup: a charset parameter, another case, another type or none throws (500 instead of 200, 400 or 415).',
    expect: ['GEN-01'],
    proxy: () =>
      crashWhen(
        'TypeError: no parser for content type',
        (req) => hasBody(req) && headers.get(req.headers, 'content-type') !== 'application/json',
      ),
  },
  {
    name: 'gen-405-without-ratelimit-headers',
    description:
      'A 405 (a method the path does not have) is written by the router before the limiter runs: no X-RateLimit-* headers on it.',
    expect: ['GEN-04'],
    proxy: () =>
      respond(
        (res) => res.status === 405,
        (res) => ({ ...res, headers: res.headers.filter(([k]) => !/^x-ratelimit-/i.test(k)) }),
      ),
  },
  {
    name: 'gen-hang-on-unnormalised-target',
    description:
      'The router normalises the target in a loop that never ends on a query string, a trailing slash or a doubled slash: the request is never answered.',
    expect: ['GEN-02'],
    env: { REQUEST_TIMEOUT_MS: '2000' },
    proxy: () => ({
      request(req) {
        const p = req.path.split('?')[0]!;
        return req.path.includes('?') || (p.length > 1 && p.endsWith('/')) || p.includes('//') ? 'swallow' : req;
      },
    }),
  },
  {
    name: 'gen-invalid-body-accepted',
    description:
      'A lenient update handler ignores what it cannot read: a body that is not an object, lacks `quantity` or holds it as another type gets 200 with the item unchanged instead of 400.',
    expect: ['GEN-03'],
    proxy: () => ({
      request: (req) => req,
      ...respond(
        (res, req) => isPatch(req) && res.status === 400 && /^-?\d+$/.test(idSegment(req) ?? ''),
        (res, req) => {
          const body = `{"petId":${idSegment(req)},"quantity":0,"status":"available"}`;
          return { status: 200, headers: headers.set(res.headers, 'Content-Type', 'application/json'), body: Buffer.from(body) };
        },
      ),
    }),
  },
  {
    name: 'gen-plain-text-errors',
    description:
      'Errors raised by the framework rather than the handlers (405, 413, 414, 415, 431) are written as `text/plain` reason phrases, not Error bodies. The 415 to a content type of an operation fails; the same page to a request outside the API (a method the spec does not define, a body over 64 KiB) is what a front door may send, and warns.',
    expect: ['GEN-08'],
    // The content-type cases come late in the coverage order: a budget that reaches them.
    env: { GENERATED_BUDGET: '1000' },
    proxy: () =>
      respond(
        (res) => res.status >= 400 && res.status < 500 && ![400, 401, 404, 429].includes(res.status),
        (res) => ({
          ...res,
          headers: headers.set(res.headers, 'Content-Type', 'text/plain; charset=utf-8'),
          body: Buffer.from(`${res.status} Error`),
        }),
      ),
  },
  {
    name: 'gen-int64-path-rounded',
    description:
      'The update route parses the path id as a double: an id beyond 2^53 updates (or misses) a neighbouring id, so a listed pet cannot be updated by the id the list shows.',
    expect: ['GEN-05', 'GEN-06'],
    proxy: () => ({
      request(req) {
        if (!isPatch(req)) return req;
        const seg = idSegment(req);
        if (!seg || !/^-?\d+$/.test(seg)) return req;
        const rounded = BigInt(Number(seg)).toString();
        return rounded === seg ? req : { ...req, path: req.path.replace(`/${seg}`, `/${rounded}`) };
      },
    }),
  },
  {
    name: 'gen-stale-list-after-update',
    description:
      'A response cache in front of the list is not invalidated by an update: the first list after an acknowledged PATCH is the one cached before it.',
    expect: ['GEN-06', 'GEN-07'],
    proxy: () => {
      const cached = new Map<string, ProxyResponse>();
      const stale = new Set<string>();
      return {
        request(req) {
          const key = tokenOf(req) ?? '';
          if (isList(req) && stale.has(key) && cached.has(key)) {
            stale.delete(key);
            const old = cached.get(key)!;
            return { ...old, headers: headers.set(old.headers, 'Date', new Date().toUTCString()) };
          }
          return req;
        },
        response(res, req) {
          const key = tokenOf(req) ?? '';
          if (isList(req) && res.status === 200) cached.set(key, res);
          if (isPatch(req) && res.status === 200) stale.add(key);
          return res;
        },
      };
    },
  },
];
