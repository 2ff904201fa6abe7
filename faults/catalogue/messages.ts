/**
 * Faults of the quickstart (Endpoints 3): the Message response, `createdAt`, the 400 and 401 cases.
 */
import { headers, type FaultHooks } from '../proxy.ts';
import { answer, isMessages, mapJson, mapRequestJson, readJson, respond, tokenOf, crash } from '../lib.ts';
import type { FaultDefinition } from '../fault.ts';

/** The successful message response only. */
function mapMessage(fn: (m: Record<string, unknown>) => unknown): FaultHooks {
  return respond(
    (res, req) => isMessages(req) && res.status >= 200 && res.status < 300,
    (res) => mapJson(res, fn),
  );
}

export const faults: FaultDefinition[] = [
  {
    name: 'messages-createdat-local-offset',
    description: "`createdAt` is written in the server's local time with an offset (`2026-01-01T11:00:00+02:00`), not UTC.",
    expect: ['MSG-02'],
    proxy: () =>
      mapMessage((m) => {
        const t = Date.parse(String(m.createdAt));
        if (Number.isNaN(t)) return m;
        const local = new Date(t + 2 * 3600_000).toISOString().replace(/\.\d+Z$|Z$/, '+02:00');
        return { ...m, createdAt: local };
      }),
  },
  {
    name: 'messages-id-number',
    description: 'The message `id` is a number (an auto-increment column) instead of a string.',
    expect: ['MSG-01'],
    proxy: () => {
      let next = 1000;
      return mapMessage((m) => ({ ...m, id: next++ }));
    },
  },
  {
    name: 'messages-missing-content-type-accepted',
    description: 'A message POST without `Content-Type` is parsed as JSON anyway and accepted instead of 400.',
    expect: ['MSG-03'],
    proxy: () => ({
      request: (req) =>
        isMessages(req) && !headers.get(req.headers, 'content-type')
          ? { ...req, headers: [...req.headers, ['Content-Type', 'application/json']] }
          : req,
    }),
  },
  {
    name: 'messages-missing-message-accepted',
    description: 'A message request without `message` is accepted (an empty message is queued) instead of 400.',
    expect: ['MSG-03'],
    proxy: () => ({
      request: (req) =>
        isMessages(req)
          ? mapRequestJson(req, (b) =>
              b && typeof b === 'object' && !Array.isArray(b) && !('message' in b) ? { ...b, message: '(empty)' } : b,
            )
          : req,
    }),
  },
  {
    name: 'messages-plain-json-refused',
    description: 'The quickstart insists on `Content-Type: application/json; charset=utf-8`: the documented `application/json` gets 400.',
    expect: ['MSG-06'],
    proxy: () =>
      respond(
        (res, req) => isMessages(req) && res.status < 300 && !/charset/i.test(headers.get(req.headers, 'content-type') ?? 'charset'),
        (res) =>
          answer(400, { code: 'invalid_content_type', message: 'Content-Type must declare charset=utf-8', status: 400 }, res.headers),
      ),
  },
  {
    name: 'messages-invalid-json-500',
    extended: true,
    description: 'Invalid JSON in a message POST crashes the handler: 500 instead of 400.',
    expect: ['MSG-03'],
    proxy: () => ({
      request(req) {
        if (!isMessages(req) || readJson(req.body) !== undefined || tokenOf(req) === undefined) return req;
        return crash('Unexpected token in JSON');
      },
    }),
  },
  {
    name: 'messages-auth-not-enforced',
    description: 'The quickstart route was mounted before the auth middleware: a message without any key is accepted.',
    expect: ['MSG-04', 'AUTH-02'],
    proxy: () => ({
      request(req, ctx) {
        if (!isMessages(req) || headers.get(req.headers, 'authorization') !== undefined || !ctx.env.API_KEY) return req;
        return { ...req, headers: [...req.headers, ['Authorization', `Bearer ${ctx.env.API_KEY}`]] };
      },
    }),
  },
];
