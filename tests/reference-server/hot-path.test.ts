/**
 * The shortcuts of the PATCH hot path give the answers of the general path: the canonical
 * InventoryUpdate body read from its bytes, the router's recent matches, and the body reader's one
 * shared deadline timer (each body gets its 408 at its own deadline, never earlier; a body cut
 * short is let go at once).
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { test, expect } from '../test.ts';
import fc from 'fast-check';
import { createReferenceApp, MemoryRateLimitStore, routes } from '../../reference-server/app.ts';
import { resolveConfig } from '../../reference-server/config.ts';
import { ApiError } from '../../reference-server/errors/api-error.ts';
import { parseJson } from '../../reference-server/http/json-body.ts';
import { Router } from '../../reference-server/http/router.ts';
import { parseInventoryUpdate, quantityOfBody } from '../../reference-server/inventory/update.ts';
import { bearer, call, expectErrorBody, origin, parseRaw, withServer } from './helpers.ts';

/** The outcome of a step: its value, or the status, code and message of the ApiError it threw. */
function outcome<T>(step: () => T): T | string {
  try {
    return step();
  } catch (error) {
    if (error instanceof ApiError) return `${error.status} ${error.code}: ${error.message}`;
    throw error;
  }
}

const generalPath = (body: Buffer): number | string => outcome(() => parseInventoryUpdate(parseJson(body)));

test.describe('reference server: hot path', () => {
  test('HOT-PATH the canonical body is read from its bytes with the outcome JSON.parse and the checks give', () => {
    const digits = fc.stringMatching(/^[0-9]{1,20}$/);
    const near = fc.oneof(
      digits.map((d) => `{"quantity":${d}}`),
      fc.tuple(digits, fc.constantFrom('', ' ', '.0', '.5', 'e1', '-', '}', ',"x":1', '"')).map(([d, tail]) => `{"quantity":${d}${tail}}`),
      fc
        .tuple(fc.constantFrom('{"quantity":', '{"quantity" :', '{"Quantity":', '{"quantity":-', '{"quantity":+', ' {"quantity":'), digits)
        .map(([head, d]) => `${head}${d}}`),
      fc.json(),
      fc.string(),
    );
    fc.assert(
      fc.property(near, (text) => {
        const body = Buffer.from(text);
        // node:assert, not expect: in 2000 calls expect's bookkeeping (about 1 ms a call) was most of this test's time.
        assert.deepStrictEqual(
          outcome(() => quantityOfBody(body)),
          generalPath(body),
          text,
        );
      }),
      { numRuns: 2000 },
    );
    for (const text of [
      '{"quantity":0}',
      '{"quantity":9007199254740991}',
      '{"quantity":9007199254740992}',
      '{"quantity":007}',
      '{"quantity":}',
      '',
    ]) {
      const body = Buffer.from(text);
      expect(
        outcome(() => quantityOfBody(body)),
        text,
      ).toEqual(generalPath(body));
    }
  });

  test('HOT-PATH a router answers a repeated target as a fresh router does, also past its memory', () => {
    const router = new Router(routes(Date.now()));
    const targets = [
      '/v1/inventory',
      '/v1/inventory/1',
      '/v1/inventory/%31',
      '/v1/inventory/',
      '/v1/nope',
      '/v1/pets/7?x=1',
      '/quickstart/messages',
    ];
    const methods = ['GET', 'PATCH', 'POST', 'HEAD', 'DELETE'];
    const view = (r: Router, method: string, target: string) =>
      outcome(() => {
        const m = r.match(method, target);
        return m && { path: m.route.path, handler: m.handler?.name, allow: m.allow, params: [...m.params] };
      });
    for (let round = 0; round < 3; round++) {
      for (const method of methods)
        for (const target of targets)
          expect(view(router, method, target), `${method} ${target}`).toEqual(view(new Router(routes(Date.now())), method, target));
    }
    for (let i = 0; i < 3000; i++) router.match('PATCH', `/v1/inventory/${i}`);
    expect(router.match('PATCH', '/v1/inventory/2999')?.params).toEqual(['2999']);
    expect(router.match('GET', '/v1/inventory/2999')?.handler).toBeUndefined();
    expect(view(router, 'GET', '/v1/inventory/%zz')).toMatch(/^400 /);
    expect(view(router, 'GET', '/v1/inventory/%zz')).toMatch(/^400 /);
  });

  test('HOT-PATH bodies that stall get their 408 at their own deadline, one after the other, and a body in pieces is read whole', async () => {
    const timeoutMs = 1000;
    await withServer({ bodyTimeoutMs: timeoutMs }, async (server) => {
      const o = new URL(origin(server));
      const stalled = (): Promise<{ sentAt: number; answeredAt: number; raw: string }> =>
        new Promise((resolve) => {
          const socket = connect(Number(o.port), o.hostname);
          const chunks: Buffer[] = [];
          const sentAt = Date.now();
          let answeredAt = 0;
          socket.on('data', (c: Buffer) => {
            answeredAt ||= Date.now();
            chunks.push(c);
          });
          socket.on('error', () => undefined);
          socket.on('close', () => resolve({ sentAt, answeredAt, raw: Buffer.concat(chunks).toString('latin1') }));
          socket.write(
            `PATCH /v1/inventory/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.keys.business}\r\nContent-Length: 20\r\n\r\n{"quan`,
          );
        });
      const first = stalled();
      await new Promise((resolve) => setTimeout(resolve, timeoutMs / 2));
      const second = stalled();
      const [a, b] = await Promise.all([first, second]);
      for (const r of [a, b]) {
        const reply = parseRaw(r.raw);
        expectErrorBody({ status: reply.status, headers: reply.headers, text: reply.body }, 408, 'request_timeout');
        expect(r.answeredAt - r.sentAt, 'a 408 never comes before the body deadline').toBeGreaterThanOrEqual(timeoutMs);
        expect(r.answeredAt - r.sentAt).toBeLessThan(timeoutMs + 5_000);
      }
      expect(b.answeredAt - a.answeredAt, 'the later body expires later').toBeGreaterThan(0);

      const pieces = ['{"qua', 'ntity"', ':', '31}'];
      const reply = await new Promise<string>((resolve) => {
        const socket = connect(Number(o.port), o.hostname);
        const chunks: Buffer[] = [];
        socket.on('data', (c: Buffer) => chunks.push(c));
        socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
        socket.write(
          `PATCH /v1/inventory/1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${server.keys.business}\r\nContent-Length: ${pieces.join('').length}\r\n\r\n`,
        );
        let i = 0;
        const next = (): void => {
          if (i < pieces.length) socket.write(pieces[i++], () => setTimeout(next, 20));
        };
        next();
      });
      const parsed = parseRaw(reply);
      expect(parsed.status, reply).toBe(200);
      expect(parsed.body).toBe('{"petId":1,"quantity":31,"status":"available"}');
      const listed = await call(origin(server), 'GET', '/v1/inventory', { headers: bearer(server.keys.business) });
      expect(listed.text).toContain('{"petId":1,"quantity":31,');
    });
  });

  test('HOT-PATH a body cut short by the client is let go at once, not at its deadline, and the server keeps serving', async () => {
    const app = createReferenceApp(
      resolveConfig({ port: 0, host: '127.0.0.1', redisUrl: 'none', bodyTimeoutMs: 60_000 }),
      new MemoryRateLimitStore(),
    );
    const server = createServer((req, res) => app.onRequest(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const until = async (what: string, done: () => boolean): Promise<void> => {
      for (const end = Date.now() + 5_000; !done(); await new Promise((r) => setTimeout(r, 10))) {
        if (Date.now() > end) throw new Error(`not within 5 s: ${what} (pending bodies: ${app.state.body.pending})`);
      }
    };
    try {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write(
        `PATCH /v1/inventory/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${app.keys.business}\r\nContent-Length: 20\r\n\r\n{"quan`,
      );
      await until('the body is being read', () => app.state.body.pending === 1);
      socket.destroy();
      await until('the cut body is let go', () => app.state.body.pending === 0);
      const reply = await call(`http://127.0.0.1:${port}`, 'PATCH', '/v1/inventory/1', {
        headers: { ...bearer(app.keys.business), 'content-type': 'application/json' },
        body: '{"quantity":3}',
      });
      expect(reply.status).toBe(200);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
