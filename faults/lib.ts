import { parseJson, stringifyJson } from '../suites/lib/json.ts';
import { headers, type FaultHooks, type HeaderList, type ProxyRequest, type ProxyResponse } from './proxy.ts';

/**
 * Small building blocks for faults and variants: request matchers and JSON/header rewriting
 * that keep int64 ids exact (bodies are parsed with the suites' `parseJson`).
 */

/** The request path without its query. */
export const pathOf = (req: ProxyRequest) => req.path.split('?')[0]!.replace(/\/$/, '');

export const isList = (req: ProxyRequest) => req.method === 'GET' && pathOf(req).endsWith('/inventory');
export const isPatch = (req: ProxyRequest) => req.method === 'PATCH' && /\/inventory\/[^/]+$/.test(pathOf(req));
export const isMessages = (req: ProxyRequest) => req.method === 'POST' && pathOf(req).endsWith('/messages');
/** The `{petId}` segment of an update request, decoded (kept as text: it may exceed 2^53); a segment with broken percent-encoding stays as sent. */
export const petIdOf = (req: ProxyRequest) => {
  const raw = pathOf(req).split('/').pop() ?? '';
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
};

export const isError = (res: ProxyResponse) => res.status >= 400;
export const isJson = (hs: HeaderList) => /^application\/([\w.+-]*\+)?json\b/i.test(headers.get(hs, 'content-type') ?? '');

/** Parses a JSON body (int64-safe); `undefined` when it is not JSON. */
export function readJson(body: Buffer): unknown {
  try {
    return parseJson(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

export function jsonBody(value: unknown): Buffer {
  return Buffer.from(stringifyJson(value));
}

/** Returns `res` with its JSON body replaced by `fn(body)` (unchanged when the body is not JSON). */
export function mapJson(res: ProxyResponse, fn: (body: any) => unknown): ProxyResponse {
  const body = readJson(res.body);
  if (body === undefined) return res;
  return { ...res, body: jsonBody(fn(body)) };
}

/** Same for a request body. */
export function mapRequestJson(req: ProxyRequest, fn: (body: any) => unknown): ProxyRequest {
  const body = readJson(req.body);
  if (body === undefined) return req;
  return { ...req, body: jsonBody(fn(body)) };
}

/** A JSON response the proxy writes itself, dated now, with the upstream's rate-limit headers when given. */
export function answer(status: number, body: unknown, base: HeaderList = []): ProxyResponse {
  const hs: HeaderList = base.filter(([k]) => /^x-ratelimit-|^date$|^retry-after$/i.test(k));
  if (!headers.get(hs, 'date')) hs.push(['Date', new Date().toUTCString()]);
  hs.push(['Content-Type', 'application/json']);
  return { status, headers: hs, body: jsonBody(body) };
}

/** A header as an integer, or `undefined`. */
export function intHeader(hs: HeaderList, name: string): number | undefined {
  const v = headers.get(hs, name);
  return v !== undefined && /^\d+$/.test(v.trim()) ? Number(v) : undefined;
}

/** Seconds since the epoch of the response's `Date` header (or now). */
export function dateSeconds(hs: HeaderList): number {
  const d = Date.parse(headers.get(hs, 'date') ?? '');
  return Math.floor((Number.isNaN(d) ? Date.now() : d) / 1000);
}

/** The bearer token of a request (any scheme case), or `undefined`. */
export function tokenOf(req: ProxyRequest): string | undefined {
  const auth = headers.get(req.headers, 'authorization');
  const m = auth?.match(/^\s*bearer\s+(\S+)\s*$/i);
  return m?.[1];
}

/** A response hook applied only when `when(res, req)` holds. */
export function respond(
  when: (res: ProxyResponse, req: ProxyRequest) => boolean,
  fn: (res: ProxyResponse, req: ProxyRequest) => ProxyResponse,
): FaultHooks {
  return { response: (res, req) => (when(res, req) ? fn(res, req) : res) };
}

/** Rewrites one header's value when present. */
export function mapHeader(res: ProxyResponse, name: string, fn: (value: string) => string | undefined): ProxyResponse {
  const v = headers.get(res.headers, name);
  if (v === undefined) return res;
  const next = fn(v);
  return { ...res, headers: next === undefined ? headers.remove(res.headers, name) : headers.set(res.headers, name, next) };
}

/** The plans' per-minute and per-day limits (spec, Limits): the suites' one table. */
export { PLAN_LIMITS } from '../core/plans.ts';

/** A handler that crashed: 500 with an `internal_error` Error body (rate-limit headers kept from `base`). */
export function crash(message: string, base?: ProxyResponse['headers']): ProxyResponse {
  return answer(500, { code: 'internal_error', message, status: 500 }, base);
}

/** The known keys of the run (for faults that swap or recognise a credential); never logged. */
export function knownKeys(env: Record<string, string | undefined>): string[] {
  return [env.API_KEY, env.RATE_LIMIT_KEY, env.LOAD_KEY].filter((k): k is string => !!k);
}

/** The `quantity` member of an update request's JSON body, when there is one. */
export function updateQuantity(req: ProxyRequest): unknown {
  const b = readJson(req.body) as any;
  return b && typeof b === 'object' ? b.quantity : undefined;
}

/** GET the list with the same credentials (a side look, for faults that need the old quantity). */
export async function quantityBefore(req: ProxyRequest, forward: (r: ProxyRequest) => Promise<ProxyResponse>): Promise<number | undefined> {
  const listPath = req.path.split('?')[0]!.replace(/\/[^/]+$/, '');
  const res = await forward({
    method: 'GET',
    path: listPath,
    headers: req.headers.filter(([k]) => /^authorization$/i.test(k)),
    body: Buffer.alloc(0),
  });
  const list = readJson(res.body);
  if (res.status !== 200 || !Array.isArray(list)) return undefined;
  const item = list.find((i: any) => String(i?.petId) === petIdOf(req));
  return typeof item?.quantity === 'number' ? item.quantity : undefined;
}
