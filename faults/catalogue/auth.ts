/**
 * Faults of the Authentication section (and RFC 9110 §11 / RFC 6750 on bearer credentials): keys
 * refused or accepted wrongly, the challenge, the scheme's case, side effects of a refused request.
 */
import { headers, type ProxyResponse } from '../proxy.ts';
import { answer, isMessages, isPatch, mapJson, respond, tokenOf, crash, knownKeys, updateQuantity } from '../lib.ts';
import type { FaultDefinition } from '../fault.ts';

/** The response with another status, in the Error body too. */
function setStatus(res: ProxyResponse, status: number): ProxyResponse {
  return mapJson({ ...res, status }, (b) => (b && typeof b === 'object' && 'status' in b ? { ...b, status } : b));
}

export const faults: FaultDefinition[] = [
  {
    name: 'auth-401-as-403',
    description: 'A key that is sent but unknown gets 403 Forbidden (body status 403) instead of 401; only a missing key gets 401.',
    expect: ['AUTH-03'],
    proxy: () =>
      respond(
        (res, req) => res.status === 401 && tokenOf(req) !== undefined,
        (res) => ({ ...setStatus(res, 403), headers: headers.remove(res.headers, 'www-authenticate') }),
      ),
  },
  {
    name: 'auth-any-token-accepted',
    description: 'Any bearer token is accepted (the gateway only checks that a token is present).',
    expect: ['AUTH-03'],
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
    description: 'The bare key without the `Bearer` scheme (`Authorization: <key>`) is accepted.',
    expect: ['AUTH-03'],
    proxy: () => ({
      request(req, ctx) {
        const auth = headers.get(req.headers, 'authorization')?.trim();
        if (auth && knownKeys(ctx.env).includes(auth))
          return { ...req, headers: headers.set(req.headers, 'Authorization', `Bearer ${auth}`) };
        return req;
      },
    }),
  },
  {
    name: 'auth-lowercase-bearer-refused',
    description: 'The scheme is compared case-sensitively: `bearer <key>` gets 401 (RFC 9110 §11.1: schemes are case-insensitive).',
    expect: ['AUTH-05'],
    proxy: () => ({
      request(req) {
        const auth = headers.get(req.headers, 'authorization');
        const scheme = auth?.trim().split(/\s+/)[0];
        if (scheme && scheme !== 'Bearer' && scheme.toLowerCase() === 'bearer')
          return { ...req, headers: headers.set(req.headers, 'Authorization', 'Bearer not-a-key') };
        return req;
      },
    }),
  },
  {
    name: 'auth-no-www-authenticate',
    description: 'A 401 carries no `WWW-Authenticate` challenge (RFC 9110 §15.5.2, RFC 6750 §3).',
    expect: ['AUTH-06'],
    proxy: () =>
      respond(
        (res) => res.status === 401,
        (res) => ({ ...res, headers: headers.remove(res.headers, 'www-authenticate') }),
      ),
  },
  {
    name: 'auth-bearer-ignored-on-quickstart',
    description:
      'The quickstart sits behind a gateway that reads the key only from `X-API-Key`: `Authorization: Bearer <key>` gets 401 there.',
    expect: ['AUTH-01'],
    proxy: () =>
      respond(
        (res, req) => isMessages(req) && res.status < 300 && !headers.get(req.headers, 'x-api-key'),
        (res) => {
          const refused = answer(401, { code: 'missing_credentials', message: 'X-API-Key header required', status: 401 }, res.headers);
          return { ...refused, headers: [...refused.headers, ['WWW-Authenticate', 'Bearer realm="inventory"']] };
        },
      ),
  },
  {
    name: 'auth-token-case-insensitive',
    description: 'The key is compared case-insensitively (a lower-cased lookup), so the key with swapped letter case is accepted.',
    expect: ['AUTH-07'],
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
    description: '`Authorization: Bearer` with no token crashes the auth middleware: 500.',
    expect: ['AUTH-09'],
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
    description: 'PATCH applies the write before checking the key: the caller gets 401, but the stock changed.',
    expect: ['AUTH-12'],
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
];
