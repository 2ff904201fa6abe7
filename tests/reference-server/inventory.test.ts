/**
 * Spec "List inventory" and "Update stock level": the seed, int64 ids handled exactly (above 2^53
 * and at the bounds), the 400 matrix of bodies and ids, 404, Content-Type handling, atomic updates
 * reflected exactly, and a fresh inventory per server.
 */
import { Agent } from 'node:http';
import { test, expect } from '../test.ts';
import { bearer, call, expectErrorBody, origin, parseJson, validate, withServer } from './helpers.ts';

interface Item {
  petId: number | bigint;
  quantity: number;
  status: string;
}

const json = (key: string): Record<string, string> => ({ ...bearer(key), 'content-type': 'application/json' }) as Record<string, string>;

test.describe('reference server: inventory', () => {
  test('INVENTORY the list is the seed: a dozen items, every status, int64 ids exact', async () => {
    await withServer({}, async (server) => {
      const reply = await call(origin(server), 'GET', '/v1/inventory', { headers: bearer(server.keys.free) });
      expect(reply.status).toBe(200);
      expect(String(reply.headers['content-type'])).toMatch(/^application\/json/);
      const items = reply.json() as Item[];
      expect(validate('Inventory', items).errors).toEqual([]);
      expect(items.length).toBeGreaterThanOrEqual(12);
      expect(new Set(items.map((i) => i.status))).toEqual(new Set(['available', 'pending', 'sold']));
      const ids = items.map((i) => i.petId.toString());
      expect(ids).toContain('9007199254740993');
      expect(ids).toContain('9223372036854775807');
      expect(reply.text).toContain('"petId":9007199254740993,');
      expect(reply.text).toContain('"petId":9223372036854775807,');
      expect(new Set(ids).size).toBe(ids.length);
    });
  });

  test('INVENTORY an update returns the stored item and the list reflects it', async () => {
    await withServer({}, async (server) => {
      const o = origin(server);
      const reply = await call(o, 'PATCH', '/v1/inventory/42', { headers: json(server.keys.free), body: '{"quantity":17}' });
      expect(reply.status, reply.text).toBe(200);
      expect(validate('InventoryItem', reply.json()).errors).toEqual([]);
      expect(reply.json()).toEqual({ petId: 42, quantity: 17, status: 'available' });
      const list = (await call(o, 'GET', '/v1/inventory', { headers: bearer(server.keys.free) })).json() as Item[];
      expect(list.find((i) => i.petId === 42)).toEqual({ petId: 42, quantity: 17, status: 'available' });
      expect(list.length).toBe(12);
    });
  });

  test('INVENTORY ids above 2^53 and at the int64 bounds are exact; outside int64 or not numeric is 400', async () => {
    await withServer({}, async (server) => {
      const o = origin(server);
      const patch = (id: string, quantity = 5) =>
        call(o, 'PATCH', `/v1/inventory/${id}`, { headers: json(server.keys.business), body: `{"quantity":${quantity}}` });
      const above = await patch('9007199254740993', 11);
      expect(above.status).toBe(200);
      expect(above.text).toBe('{"petId":9007199254740993,"quantity":11,"status":"available"}');
      const max = await patch('9223372036854775807', 12);
      expect(max.text).toBe('{"petId":9223372036854775807,"quantity":12,"status":"pending"}');
      expectErrorBody(await patch('9007199254740992'), 404, 'not_found'); // the float neighbour of 2^53+1
      expectErrorBody(await patch('9223372036854775806'), 404, 'not_found');
      expectErrorBody(await patch('-9223372036854775808'), 404, 'not_found');
      expectErrorBody(await patch('0'), 404, 'not_found');
      expectErrorBody(await patch('-1'), 404, 'not_found');
      expect((await patch('%34%32')).status, 'percent-encoded digits are the same id').toBe(200);
      expect((await patch('0042')).json()).toMatchObject({ petId: 42 });
      for (const bad of [
        '9223372036854775808',
        '-9223372036854775809',
        '18446744073709551616',
        '9'.repeat(40),
        'abc',
        '1.5',
        '1e3',
        '+1',
        '0x10',
        '%201',
        '1%20',
        '-',
        '4%2B2',
        'NaN',
        '%E2%82%AC',
      ]) {
        expectErrorBody(await patch(bad), 400, 'invalid_pet_id');
      }
      const list = (await call(o, 'GET', '/v1/inventory', { headers: bearer(server.keys.business) })).text;
      expect(list).toContain('{"petId":9007199254740993,"quantity":11,"status":"available"}');
      expect(list).toContain('{"petId":9223372036854775807,"quantity":12,"status":"pending"}');
    });
  });

  test('INVENTORY invalid bodies are 400 with an Error body and change nothing', async () => {
    await withServer({}, async (server) => {
      const o = origin(server);
      const before = (await call(o, 'GET', '/v1/inventory', { headers: bearer(server.keys.business) })).text;
      const cases: [string, string, string][] = [
        ['invalid JSON', '{"quantity":', 'invalid_json'],
        ['empty body', '', 'invalid_json'],
        ['trailing garbage', '{"quantity":1}x', 'invalid_json'],
        ['single quotes', "{'quantity':1}", 'invalid_json'],
        ['null', 'null', 'invalid_body'],
        ['array', '[{"quantity":1}]', 'invalid_body'],
        ['string', '"5"', 'invalid_body'],
        ['number', '5', 'invalid_body'],
        ['empty object', '{}', 'invalid_body'],
        ['misspelt field', '{"qty":5}', 'invalid_body'],
        ['null quantity', '{"quantity":null}', 'invalid_body'],
        ['string quantity', '{"quantity":"5"}', 'invalid_body'],
        ['float quantity', '{"quantity":1.5}', 'invalid_body'],
        ['boolean quantity', '{"quantity":true}', 'invalid_body'],
        ['array quantity', '{"quantity":[1]}', 'invalid_body'],
        ['object quantity', '{"quantity":{"value":1}}', 'invalid_body'],
        ['negative quantity', '{"quantity":-1}', 'invalid_body'],
        ['quantity above 2^53', '{"quantity":9007199254740993}', 'invalid_body'],
        ['huge quantity', '{"quantity":1e300}', 'invalid_body'],
      ];
      for (const [label, body, code] of cases) {
        const reply = await call(o, 'PATCH', '/v1/inventory/1', { headers: json(server.keys.business), body });
        expect(reply.status, label).toBe(400);
        expectErrorBody(reply, 400, code);
        const missing = await call(o, 'PATCH', '/v1/inventory/404404', { headers: json(server.keys.business), body });
        expect(missing.status, `${label} for an unknown pet: the body is judged first`).toBe(400);
      }
      expectErrorBody(
        await call(o, 'PATCH', '/v1/inventory/abc', { headers: json(server.keys.business), body: '{' }),
        400,
        'invalid_pet_id',
      );
      const after = (await call(o, 'GET', '/v1/inventory', { headers: bearer(server.keys.business) })).text;
      expect(after).toBe(before);
    });
  });

  test('INVENTORY accepted bodies and content types', async () => {
    await withServer({}, async (server) => {
      const o = origin(server);
      const key = bearer(server.keys.business) as Record<string, string>;
      const cases: [string, Record<string, string>, string, number][] = [
        ['zero', { 'content-type': 'application/json' }, '{"quantity":0}', 0],
        ['5.0 is the integer 5', { 'content-type': 'application/json' }, '{"quantity":5.0}', 5],
        ['exponent', { 'content-type': 'application/json' }, '{"quantity":1e2}', 100],
        ['extra members are ignored', { 'content-type': 'application/json' }, '{"quantity":6,"status":"sold"}', 6],
        ['charset parameter', { 'content-type': 'application/json; charset=utf-8' }, '{"quantity":7}', 7],
        ['upper-case media type', { 'content-type': 'APPLICATION/JSON' }, '{"quantity":8}', 8],
        ['+json suffix', { 'content-type': 'application/merge-patch+json' }, '{"quantity":9}', 9],
        ['no content type', {}, '{"quantity":10}', 10],
        ['whitespace around', { 'content-type': 'application/json' }, ' \n{"quantity": 11 }\n', 11],
        ['largest safe integer', { 'content-type': 'application/json' }, '{"quantity":9007199254740991}', 9007199254740991],
      ];
      for (const [label, headers, body, quantity] of cases) {
        const reply = await call(o, 'PATCH', '/v1/inventory/3', { headers: { ...key, ...headers }, body });
        expect(reply.status, `${label}: ${reply.text}`).toBe(200);
        expect(reply.json(), label).toEqual({ petId: 3, quantity, status: 'pending' });
      }
      for (const type of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'json',
        'application/xml',
      ]) {
        const reply = await call(o, 'PATCH', '/v1/inventory/3', { headers: { ...key, 'content-type': type }, body: '{"quantity":1}' });
        expectErrorBody(reply, 415, 'unsupported_media_type');
        expect(reply.headers['accept-patch']).toBe('application/json');
      }
      const twice = await call(o, 'PATCH', '/v1/inventory/3', {
        headers: { ...key, 'content-type': ['application/json', 'text/plain'] },
        body: '{"quantity":1}',
      });
      expectErrorBody(twice, 400, 'invalid_content_type');
    });
  });

  test('INVENTORY concurrent updates: each response is exactly what was stored', async () => {
    await withServer({}, async (server) => {
      const o = origin(server);
      const agent = new Agent({ keepAlive: true, maxSockets: 50 });
      try {
        const quantities = Array.from({ length: 200 }, (_, i) => 1000 + i);
        const replies = await Promise.all(
          quantities.map((q) =>
            call(o, 'PATCH', '/v1/inventory/9007199254740993', { headers: json(server.keys.business), body: `{"quantity":${q}}`, agent }),
          ),
        );
        replies.forEach((r, i) => expect(r.text).toBe(`{"petId":9007199254740993,"quantity":${quantities[i]},"status":"available"}`));
        const list = (await call(o, 'GET', '/v1/inventory', { headers: bearer(server.keys.business) })).json() as Item[];
        const stored = list.find((i) => i.petId === 9007199254740993n)!;
        expect(quantities).toContain(stored.quantity);
        const single = await call(o, 'PATCH', '/v1/inventory/9007199254740993', {
          headers: json(server.keys.business),
          body: '{"quantity":1}',
          agent,
        });
        expect(parseJson(single.text)).toEqual({ petId: 9007199254740993n, quantity: 1, status: 'available' });
      } finally {
        agent.destroy();
      }
    });
  });

  test('INVENTORY every server starts from its own copy of the seed', async () => {
    await withServer({}, async (a) => {
      await withServer({}, async (b) => {
        const changed = await call(origin(a), 'PATCH', '/v1/inventory/1', { headers: json(a.keys.free), body: '{"quantity":999}' });
        expect(changed.status).toBe(200);
        const other = (await call(origin(b), 'GET', '/v1/inventory', { headers: bearer(b.keys.free) })).json() as Item[];
        expect(other.find((i) => i.petId === 1)?.quantity).toBe(12);
      });
    });
    await withServer({}, async (c) => {
      const fresh = (await call(origin(c), 'GET', '/v1/inventory', { headers: bearer(c.keys.free) })).json() as Item[];
      expect(fresh.find((i) => i.petId === 1)?.quantity).toBe(12);
    });
  });
});
