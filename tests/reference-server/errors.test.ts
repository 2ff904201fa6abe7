/**
 * Spec "Errors": every failure is a 4xx Error body whose `status` equals the HTTP status (never a
 * 5xx, a hang or a crash): unknown routes, wrong methods, bad targets, oversized and slow bodies,
 * malformed HTTP, duplicate headers.
 */
import { connect } from 'node:net';
import { test, expect } from '../test.ts';
import { bearer, call, expectErrorBody, expectRateHeaders, origin, parseRaw, rawExchange, sleep, validate, withServer } from './helpers.ts';

test.describe('reference server: errors', () => {
  test('ERRORS unknown paths are 404 route_not_found', async () => {
    await withServer({}, async (server) => {
      for (const path of [
        '/',
        '/v1',
        '/v1/',
        '/inventory',
        '/V1/inventory',
        '/v1/Inventory',
        '/v1/inventory/',
        '/v1/inventory/1/extra',
        '/v2/inventory',
        '/quickstart',
        '/quickstart/messages/1',
        '/v1/pets',
        '/v1/store',
        '/v1/store/orders/1',
        '//v1/inventory',
      ]) {
        expectErrorBody(await call(origin(server), 'GET', path, { headers: bearer(server.keys.business) }), 404, 'route_not_found');
      }
    });
  });

  test('ERRORS wrong methods are 405 with Allow', async () => {
    await withServer({}, async (server) => {
      const cases: [string, string, string][] = [
        ['POST', '/v1/inventory', 'GET, HEAD'],
        ['PUT', '/v1/inventory', 'GET, HEAD'],
        ['DELETE', '/v1/inventory', 'GET, HEAD'],
        ['OPTIONS', '/v1/inventory', 'GET, HEAD'],
        ['GET', '/v1/inventory/1', 'PATCH'],
        ['PUT', '/v1/inventory/1', 'PATCH'],
        ['GET', '/quickstart/messages', 'POST'],
        ['PATCH', '/v1/pets/1', 'GET, HEAD'],
        ['POST', '/v1/store/orders', 'GET, HEAD'],
      ];
      for (const [method, path, allow] of cases) {
        const reply = await call(origin(server), method, path, { headers: bearer(server.keys.business) });
        expectErrorBody(reply, 405, 'method_not_allowed');
        expect(reply.headers.allow, `${method} ${path}`).toBe(allow);
      }
    });
  });

  test('ERRORS bad targets: bad percent-encoding 400, very long target 414, huge header section 431', async () => {
    await withServer({}, async (server) => {
      const o = origin(server);
      const key = bearer(server.keys.business);
      expectErrorBody(await call(o, 'GET', '/v1/inventory%zz', { headers: key }), 400, 'invalid_request');
      expectErrorBody(await call(o, 'PATCH', '/v1/inventory/%E0%A4%A', { headers: key, body: '{"quantity":1}' }), 400, 'invalid_request');
      expectErrorBody(await call(o, 'GET', `/v1/${'a'.repeat(10_000)}`, { headers: key }), 414, 'uri_too_long');
      const raw = parseRaw(await rawExchange(o, `GET /v1/${'a'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`));
      expectErrorBody({ status: raw.status, headers: raw.headers, text: raw.body }, 431, 'headers_too_large');
      const ok = await call(o, 'GET', '/v1/inventory?page=2&x=%zz', { headers: key });
      expect(ok.status, 'the query string is ignored').toBe(200);
    });
  });

  test('ERRORS bodies over maxBodyBytes are 413 and the connection is closed', async () => {
    await withServer({ maxBodyBytes: 100 }, async (server) => {
      const o = origin(server);
      const headers = { ...bearer(server.keys.business), 'content-type': 'application/json' };
      const big = `{"quantity":1,"pad":"${'x'.repeat(5_000_000)}"}`;
      for (const [path, body] of [
        ['/v1/inventory/1', big],
        ['/quickstart/messages', `{"message":"${'m'.repeat(200)}"}`],
      ] as const) {
        const reply = await call(o, path.includes('inventory') ? 'PATCH' : 'POST', path, { headers, body });
        expectErrorBody(reply, 413, 'payload_too_large');
        expect(reply.headers.connection).toBe('close');
        expectRateHeaders(reply.headers);
      }
      const chunked = await new Promise<string>((resolve) => {
        const socket = connect(Number(new URL(o).port), '127.0.0.1');
        const chunks: Buffer[] = [];
        socket.on('data', (c: Buffer) => chunks.push(c));
        socket.on('error', () => undefined);
        socket.on('close', () => resolve(Buffer.concat(chunks).toString()));
        socket.write(
          `PATCH /v1/inventory/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.keys.business}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
        );
        const chunk = 'a'.repeat(64);
        let sent = 0;
        const timer = setInterval(() => {
          if (socket.destroyed || sent++ > 100) return clearInterval(timer);
          socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
        }, 5);
      });
      const parsed = parseRaw(chunked);
      expectErrorBody({ status: parsed.status, headers: parsed.headers, text: parsed.body }, 413, 'payload_too_large');
      const after = await call(o, 'GET', '/v1/inventory', { headers: bearer(server.keys.business) });
      expect(after.text).toContain('{"petId":1,"quantity":12,');
    });
  });

  test('ERRORS a body that does not arrive in time is 408, then the connection closes', async () => {
    await withServer({ bodyTimeoutMs: 300 }, async (server) => {
      const o = origin(server);
      const started = Date.now();
      const raw = await rawExchange(
        o,
        `PATCH /v1/inventory/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.keys.business}\r\nContent-Type: application/json\r\nContent-Length: 30\r\n\r\n{"quan`,
        { timeoutMs: 5_000 },
      );
      const reply = parseRaw(raw);
      expectErrorBody({ status: reply.status, headers: reply.headers, text: reply.body }, 408, 'request_timeout');
      expectRateHeaders(reply.headers);
      expect(Date.now() - started).toBeLessThan(3_000);
      const headersOnly = parseRaw(await rawExchange(o, 'GET /v1/inventory HTTP/1.1\r\nHost: x\r\n', { timeoutMs: 5_000 }));
      expectErrorBody({ status: headersOnly.status, headers: headersOnly.headers, text: headersOnly.body }, 408, 'request_timeout');
    });
  });

  test('ERRORS malformed HTTP is a 4xx Error body and the server keeps serving', async () => {
    await withServer({}, async (server) => {
      const o = origin(server);
      const key = server.keys.business;
      const garbage = [
        'GARBAGE\r\n\r\n',
        'GET /v1/inventory HTTP/9.9\r\nHost: x\r\n\r\n',
        'GET /v1/inventory HTTP/1.1\r\nHost: x\r\nBad Header Name: 1\r\n\r\n',
        `PATCH /v1/inventory/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n{}`,
        `PATCH /v1/inventory/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Length: abc\r\n\r\n{}`,
        `PATCH /v1/inventory/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n`,
        'GET /v1/inventory HTTP/1.1\r\nHost: x\r\nX: a\u0000b\r\n\r\n',
      ];
      for (const request of garbage) {
        const reply = parseRaw(await rawExchange(o, request, { timeoutMs: 5_000 }));
        expect(reply.status, JSON.stringify(request)).toBeGreaterThanOrEqual(400);
        expect(reply.status, JSON.stringify(request)).toBeLessThan(500);
        expectErrorBody({ status: reply.status, headers: reply.headers, text: reply.body }, reply.status);
      }
      const noHost = parseRaw(
        await rawExchange(o, `GET /v1/inventory HTTP/1.1\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`),
      );
      expect(noHost.status, "a missing Host is not this server's concern").toBe(200);
      const http10 = parseRaw(await rawExchange(o, `GET /v1/inventory HTTP/1.0\r\nAuthorization: Bearer ${key}\r\n\r\n`));
      expect(http10.status).toBe(200);
      expect((await call(o, 'GET', '/v1/inventory', { headers: bearer(key) })).status).toBe(200);
    });
  });

  test('ERRORS a client that disconnects mid-body does not disturb the server', async () => {
    await withServer({}, async (server) => {
      const o = origin(server);
      await new Promise<void>((resolve) => {
        const socket = connect(Number(new URL(o).port), '127.0.0.1', () => {
          socket.write(
            `PATCH /v1/inventory/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.keys.business}\r\nContent-Length: 50\r\n\r\n{"quantity":`,
          );
          setTimeout(() => {
            socket.destroy();
            resolve();
          }, 50);
        });
      });
      await sleep(50);
      const reply = await call(o, 'GET', '/v1/inventory', { headers: bearer(server.keys.business) });
      expect(reply.status).toBe(200);
      expect(reply.text).toContain('{"petId":1,"quantity":12,');
    });
  });

  test('ERRORS Expect other than 100-continue is 417; 100-continue is honoured', async () => {
    await withServer({}, async (server) => {
      const o = origin(server);
      expectErrorBody(
        await call(o, 'GET', '/v1/inventory', { headers: { ...bearer(server.keys.business), expect: 'something' } }),
        417,
        'expectation_failed',
      );
      const raw = await rawExchange(
        o,
        `PATCH /v1/inventory/2 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.keys.business}\r\nContent-Type: application/json\r\nContent-Length: 14\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n{"quantity":4}`,
      );
      expect(raw.startsWith('HTTP/1.1 100 Continue')).toBe(true);
      expect(raw).toContain('{"petId":2,"quantity":4,"status":"sold"}');
    });
  });

  test('ERRORS 400 seeded random requests: every answer is 2xx or a 4xx Error body with rate-limit headers', async () => {
    let seed = 20261122;
    const random = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
    const methods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND'];
    const paths = [
      '/v1/inventory',
      '/v1/inventory/1',
      '/v1/inventory/9223372036854775807',
      '/v1/inventory/-0',
      '/v1/inventory/%00',
      '/v1/inventory/1?x=%',
      '/quickstart/messages',
      '/v1/pets/42',
      '/v1/pets/%ff',
      '/v1/store/orders',
      '/v1/../v1/inventory',
      '/%2e%2e/etc/passwd',
      '/v1/inventory/1;a=b',
      '/v1//inventory',
      '/\u00e9',
    ];
    const types = [undefined, 'application/json', 'text/plain', 'application/json; charset=latin1', ';;;', 'application/', '*/*'];
    const bodies = [
      undefined,
      '',
      '{}',
      '{"quantity":3}',
      '{"message":"m"}',
      '{"quantity":"3"}',
      'null',
      '[',
      '\u0000',
      '{"quantity":1e999}',
      `{"message":"${'x'.repeat(3000)}"}`,
      Buffer.from([0xff, 0xfe, 0x00]).toString('latin1'),
    ];
    await withServer({ maxBodyBytes: 2048, anonymousLimits: { minute: 10_000, day: 100_000 } }, async (server) => {
      const auths = [undefined, `Bearer ${server.keys.business}`, `bearer ${server.keys.load}`, 'Bearer', 'Basic x', server.keys.free];
      const problems: string[] = [];
      for (let i = 0; i < 400; i++) {
        const method = pick(methods);
        const path = encodeURI(pick(paths)).replace(/%25/g, '%');
        const headers: Record<string, string> = {};
        const auth = pick(auths);
        if (auth !== undefined) headers.authorization = auth;
        const type = pick(types);
        if (type !== undefined) headers['content-type'] = type;
        const body = pick(bodies);
        const reply = await call(origin(server), method, path, { headers, body: method === 'GET' || method === 'HEAD' ? undefined : body });
        const context = `#${i} ${method} ${path} ${JSON.stringify(headers)} ${JSON.stringify(body)?.slice(0, 60)} → ${reply.status} ${reply.text.slice(0, 120)}`;
        // Plain checks (one expect at the end): thousands of expect() calls would dominate the run time.
        if (reply.status < 200 || reply.status >= 500) problems.push(`${context}: status`);
        for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
          if (!/^[0-9]+$/.test(String(reply.headers[name]))) problems.push(`${context}: ${name}`);
        }
        if (reply.status >= 400 && method !== 'HEAD') {
          let error: Record<string, unknown> = {};
          try {
            error = JSON.parse(reply.text) as Record<string, unknown>;
          } catch {
            problems.push(`${context}: body is not JSON`);
          }
          if (!validate('Error', error).valid || error.status !== reply.status)
            problems.push(`${context}: not an Error body with status ${reply.status}`);
          if (!/^application\/json/.test(String(reply.headers['content-type']))) problems.push(`${context}: content type`);
        }
      }
      expect(problems).toEqual([]);
      expect((await call(origin(server), 'GET', '/v1/inventory', { headers: bearer(server.keys.business) })).status).toBe(200);
    });
  });
});
