/**
 * The 429 fast path writes exactly what the central error handler writes for `refusal()`: same
 * status, body bytes and headers, for a rate-limited and a banned decision, with and without route
 * headers and an unread large body.
 */
import { expect, test } from '../test.ts';
import { ServerResponse, IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { sendError } from '../../reference-server/errors/handler.ts';
import { send } from '../../reference-server/http/response.ts';
import type { RateDecision } from '../../reference-server/rate-limit/policy.ts';
import { refusal, refusalBody } from '../../reference-server/rate-limit/refusal.ts';

/** Captures what `write` does to a ServerResponse: status, raw header list and body. */
function capture(write: (res: ServerResponse) => void): { status: number; headers: string[]; body: string } {
  const req = new IncomingMessage(new Socket());
  const res = new ServerResponse(req);
  let status = 0;
  let headers: string[] = [];
  let body = '';
  res.writeHead = ((code: number, list: string[]) => {
    status = code;
    headers = list;
    return res;
  }) as typeof res.writeHead;
  res.end = ((chunk: string) => {
    body = String(chunk);
    return res;
  }) as typeof res.end;
  write(res);
  return { status, headers, body };
}

test('LIMITS the 429 fast path writes the bytes the central error handler writes for refusal()', () => {
  const decisions: RateDecision[] = [
    { outcome: 'limited', limit: 60, remaining: 0, resetSeconds: 1_795_412_700, retryAfterSeconds: 42 },
    {
      outcome: 'banned',
      limit: 60,
      remaining: 0,
      resetSeconds: 1_795_413_300,
      retryAfterSeconds: 600,
      fields: ['RateLimit', '"minute";r=0;t=600'],
    },
  ];
  for (const decision of decisions) {
    for (const route of [[], ['Deprecation', '@1767225600'], ['Deprecation', '@1767225600', 'Connection', 'close']]) {
      const viaHandler = capture((res) => sendError(res, decision, refusal(decision), route));
      const fast = capture((res) =>
        send(res, 429, refusalBody(decision), decision, [...route, 'Retry-After', String(decision.retryAfterSeconds)]),
      );
      expect(fast, `${decision.outcome} with ${route.join(' ')}`).toEqual(viaHandler);
      expect(JSON.parse(fast.body).code).toBe(decision.outcome === 'banned' ? 'key_banned' : 'rate_limited');
    }
  }
});
