/**
 * Spec "Send message (quickstart)": 201 `{id, message, status: "queued", createdAt}` with an ISO
 * 8601 UTC timestamp; 400 for invalid JSON, a missing or non-string `message`, a missing or
 * non-JSON content type; served under the separate {api_url}.
 */
import { test, expect } from '../test.ts';
import { bearer, call, expectErrorBody, origin, validate, withServer } from './helpers.ts';

test.describe('reference server: quickstart messages', () => {
  test('MESSAGES a message is queued: 201 with id, message, status and a UTC createdAt', async () => {
    await withServer({}, async (server) => {
      expect(server.apiUrl).toBe(`${origin(server)}/quickstart`);
      expect(server.baseUrl).toBe(`${origin(server)}/v1`);
      const path = `${new URL(server.apiUrl).pathname}/messages`;
      const ids = new Set<string>();
      for (const [type, message] of [
        ['application/json', 'hello'],
        ['application/json; charset=utf-8', 'grüße 🐈'],
        ['Application/JSON', ''],
      ] as const) {
        const before = Date.now();
        const reply = await call(origin(server), 'POST', path, {
          headers: { ...bearer(server.keys.free), 'content-type': type },
          body: JSON.stringify({ message }),
        });
        expect(reply.status, reply.text).toBe(201);
        expect(String(reply.headers['content-type'])).toMatch(/^application\/json/);
        const body = reply.json() as Record<string, unknown>;
        expect(validate('MessageResponse', body).errors).toEqual([]);
        expect(body.message).toBe(message);
        expect(body.status).toBe('queued');
        expect(typeof body.id).toBe('string');
        ids.add(body.id as string);
        expect(body.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
        const at = Date.parse(body.createdAt as string);
        expect(at).toBeGreaterThanOrEqual(before - 1000);
        expect(at).toBeLessThanOrEqual(Date.now() + 1000);
      }
      expect(ids.size).toBe(3);
    });
  });

  test('MESSAGES invalid requests are 400 with an Error body', async () => {
    await withServer({}, async (server) => {
      const json = 'application/json';
      const cases: [string, string | undefined, string, string][] = [
        ['no content type', undefined, '{"message":"m"}', 'invalid_content_type'],
        ['text/plain', 'text/plain', '{"message":"m"}', 'invalid_content_type'],
        ['form', 'application/x-www-form-urlencoded', 'message=m', 'invalid_content_type'],
        ['not a media type', 'json', '{"message":"m"}', 'invalid_content_type'],
        ['invalid JSON', json, '{"message":', 'invalid_json'],
        ['empty body', json, '', 'invalid_json'],
        ['null', json, 'null', 'invalid_body'],
        ['array', json, '["m"]', 'invalid_body'],
        ['string', json, '"m"', 'invalid_body'],
        ['missing message', json, '{}', 'invalid_body'],
        ['misspelt', json, '{"msg":"m"}', 'invalid_body'],
        ['null message', json, '{"message":null}', 'invalid_body'],
        ['number message', json, '{"message":5}', 'invalid_body'],
        ['array message', json, '{"message":["m"]}', 'invalid_body'],
        ['object message', json, '{"message":{"text":"m"}}', 'invalid_body'],
        ['boolean message', json, '{"message":true}', 'invalid_body'],
      ];
      for (const [label, type, body, code] of cases) {
        const headers: Record<string, string> = { authorization: `Bearer ${server.keys.business}` };
        if (type) headers['content-type'] = type;
        const reply = await call(origin(server), 'POST', '/quickstart/messages', { headers, body });
        expect(reply.status, label).toBe(400);
        expectErrorBody(reply, 400, code);
      }
    });
  });

  test('MESSAGES the quickstart is not under /v1 and needs a key', async () => {
    await withServer({}, async (server) => {
      const headers = { ...bearer(server.keys.free), 'content-type': 'application/json' };
      expectErrorBody(await call(origin(server), 'POST', '/v1/messages', { headers, body: '{"message":"m"}' }), 404);
      expectErrorBody(
        await call(origin(server), 'POST', '/quickstart/messages', {
          headers: { 'content-type': 'application/json' },
          body: '{"message":"m"}',
        }),
        401,
      );
    });
  });
});
