/**
 * The suites' client and its connections (suites/fixtures/api.ts, `connectionsOf`): a server
 * closing an idle kept-alive connection as a request goes out on it (its keep-alive timeout) is
 * never reported as the server's failure. A safe request that meets such a close before any answer
 * goes once more on a new connection, through the pacer; a change never goes on a reused
 * connection, so a reset it meets is the server's own. A pacer that cannot be reached is the
 * harness's limit: nothing is sent, and the check is not certified.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, expect } from '../test.ts';
import { startPacerCoordinator } from '../../suites/pacing/coordinator.ts';
import { pacingClient } from '../../suites/pacing/client.ts';
import { createApi, NotCertified } from '../../suites/fixtures.ts';
import { readEnv } from '../../suites/lib/env.ts';
import { FREE_SOCKET_IDLE_MS } from '../../core/transport.ts';

const KEY = 'connections-test-key-0123456789abcdef';

interface Arrival {
  line: string;
  /** The request's place on its connection: 1 for the first. */
  onConnection: number;
  dropped: boolean;
}

/**
 * A store of one pet that logs each arrival. `dropReused` requests arriving on a connection that
 * an earlier exchange used are dropped before any answer (the socket destroyed), as a server's idle
 * timeout closing the connection just then looks to the client; `dropAll` drops every request.
 */
async function startServer(options: { dropReused?: number; dropAll?: boolean } = {}) {
  const arrivals: Arrival[] = [];
  const perSocket = new WeakMap<object, number>();
  let toDrop = options.dropReused ?? 0;
  let connections = 0;
  const server = http.createServer((req, res) => {
    const onConnection = (perSocket.get(req.socket) ?? 0) + 1;
    perSocket.set(req.socket, onConnection);
    const drop = options.dropAll === true || (onConnection > 1 && toDrop > 0);
    arrivals.push({ line: `${req.method} ${req.url}`, onConnection, dropped: drop });
    if (drop) {
      if (onConnection > 1) toDrop--;
      req.socket.destroy();
      return;
    }
    req.resume();
    req.on('end', () => {
      const body =
        req.method === 'PATCH' ? '{"petId":1,"quantity":3,"status":"available"}' : '[{"petId":1,"quantity":3,"status":"available"}]';
      res.writeHead(200, {
        'Content-Type': 'application/json',
        'X-RateLimit-Limit': '600',
        'X-RateLimit-Remaining': '500',
        'X-RateLimit-Reset': '30',
      });
      res.end(body);
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return {
    url,
    arrivals,
    connections: () => connections,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const it = test.extend<{ setup: (options?: Parameters<typeof startServer>[0]) => Promise<Awaited<ReturnType<typeof build>>> }>({
  setup: async ({}, use) => {
    const built: Awaited<ReturnType<typeof build>>[] = [];
    await use(async (options) => {
      const b = await build(options);
      built.push(b);
      return b;
    });
    for (const b of built) await b.close();
  },
});

async function build(options?: Parameters<typeof startServer>[0]) {
  const server = await startServer(options);
  const coordinator = await startPacerCoordinator();
  const env = readEnv({ BASE_URL: server.url, API_URL: server.url, API_KEY: KEY });
  const api = createApi({ env, pacing: pacingClient(coordinator.url), annotate: () => undefined, requirementId: 'INV-01' });
  return {
    server,
    api,
    close: async () => {
      api.finish();
      await coordinator.close();
      await server.close();
    },
  };
}

it('a list read that meets its kept-alive connection closed before any answer is sent once more, on a new connection', async ({
  setup,
}) => {
  const { server, api } = await setup({ dropReused: 1 });
  expect((await api.listInventory()).status).toBe(200);
  const second = await api.listInventory();
  expect(second.status).toBe(200);
  expect(server.arrivals.map((a) => [a.onConnection, a.dropped])).toEqual([
    [1, false],
    [2, true],
    [1, false],
  ]);
  expect(api.requests).toBe(3);
});

it('a list read dropped on a new connection too fails as the server’s, named, and is not sent a third time', async ({ setup }) => {
  const { server, api } = await setup({ dropAll: true });
  await expect(api.listInventory()).rejects.toThrow(/INV-01: GET \/v1\/inventory: request failed: socket hang up/);
  expect(server.arrivals).toHaveLength(1);
  expect(server.arrivals[0]!.onConnection).toBe(1);
});

it('a change never goes on a reused connection: each PATCH and POST opens its own', async ({ setup }) => {
  const { server, api } = await setup({ dropReused: 5 });
  await api.listInventory();
  expect((await api.updateInventory(1, { quantity: 3 })).status).toBe(200);
  expect((await api.updateInventory(1, { quantity: 3 })).status).toBe(200);
  expect((await api.sendMessage({ message: 'hello' })).status).toBe(200);
  expect(server.arrivals.map((a) => `${a.line} #${a.onConnection}`)).toEqual([
    'GET /v1/inventory #1',
    'PATCH /v1/inventory/1 #1',
    'PATCH /v1/inventory/1 #1',
    'POST /v1/messages #1',
  ]);
  expect(server.arrivals.every((a) => !a.dropped)).toBe(true);
});

it('safe requests share the client’s kept-alive connections', async ({ setup }) => {
  const { server, api } = await setup();
  for (let i = 0; i < 3; i++) await api.listInventory();
  expect(server.connections()).toBe(1);
  expect(server.arrivals.map((a) => a.onConnection)).toEqual([1, 2, 3]);
});

it('a connection idle for FREE_SOCKET_IDLE_MS is closed by the client, before a server’s common 5 s idle timeout', async ({ setup }) => {
  const { server, api } = await setup();
  await api.listInventory();
  await new Promise((r) => setTimeout(r, FREE_SOCKET_IDLE_MS + 500));
  await api.listInventory();
  expect(server.connections()).toBe(2);
  expect(server.arrivals.map((a) => a.onConnection)).toEqual([1, 1]);
});

it('a pacer that cannot be reached leaves the check not certified, never failed, and sends nothing', async ({ setup }) => {
  const { server } = await setup();
  const closed = http.createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const pacerUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
  await new Promise<void>((r) => closed.close(() => r()));
  const env = readEnv({ BASE_URL: server.url, API_URL: server.url, API_KEY: KEY });
  const api = createApi({ env, pacing: pacingClient(pacerUrl), annotate: () => undefined, requirementId: 'INV-01' });
  const err = await api.listInventory().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(NotCertified);
  expect((err as Error).message).toMatch(
    /^not certified: INV-01: GET \/v1\/inventory: the run's pacer could not be reached, so nothing more was sent \(pacer coordinator at .* unreachable/,
  );
  expect(server.arrivals).toEqual([]);
  api.finish();
});
