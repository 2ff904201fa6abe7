/**
 * Small deviant servers for the load tests, on 127.0.0.1 and port 0. Each answers the inventory
 * endpoints in one way the load checks must catch (slow, 5xx, invalid bodies, lost updates).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeApi {
  /** e.g. `http://127.0.0.1:40000/v1` */
  baseUrl: string;
  /** Requests received, by method. */
  counts: Record<string, number>;
  close(): Promise<void>;
}

export type Handler = (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void;

/** Rate-limit headers of a key that never runs out. */
export function rateHeaders(): Record<string, string> {
  return { 'X-RateLimit-Limit': '1000000', 'X-RateLimit-Remaining': '999999', 'X-RateLimit-Reset': String(Math.ceil(Date.now() / 1000) + 60) };
}

export function json(res: http.ServerResponse, status: number, value: unknown, extra: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...rateHeaders(), ...extra });
  res.end(JSON.stringify(value));
}

export async function fakeApi(handler: Handler): Promise<FakeApi> {
  const counts: Record<string, number> = {};
  const server = http.createServer((req, res) => {
    counts[req.method ?? '?'] = (counts[req.method ?? '?'] ?? 0) + 1;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handler(req, Buffer.concat(chunks).toString('utf8'), res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    counts,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A conformant-looking inventory: list and update of a few pets, optionally with a twist. */
export function inventoryHandler(options: { delayMs?: number; brokenUpdate?: boolean; badItem?: boolean; status?: number } = {}): Handler {
  const items = [
    { petId: 1, quantity: 12, status: 'available' },
    { petId: 2, quantity: 0, status: 'sold' },
  ];
  return (req, body, res) => {
    const answer = () => {
      if (options.status) return json(res, options.status, { code: 'boom', message: 'failed', status: options.status });
      const path = (req.url ?? '').split('?')[0];
      if (req.method === 'GET' && path === '/v1/inventory') {
        return json(res, 200, options.badItem ? [{ petId: 1, quantity: '12', status: 'available' }] : items);
      }
      const m = /^\/v1\/inventory\/(\d+)$/.exec(path);
      if (req.method === 'PATCH' && m) {
        const item = items.find((i) => String(i.petId) === m[1]);
        if (!item) return json(res, 404, { code: 'not_found', message: 'no such pet', status: 404 });
        const quantity = (JSON.parse(body) as { quantity: number }).quantity;
        item.quantity = options.brokenUpdate ? quantity + 1 : quantity;
        return json(res, 200, item);
      }
      return json(res, 404, { code: 'not_found', message: 'no route', status: 404 });
    };
    if (options.delayMs) setTimeout(answer, options.delayMs);
    else answer();
  };
}
