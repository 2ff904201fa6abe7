/** The transport layer (suites/fixtures/pipeline/transport.ts): which connection a request goes on; an answer or why none, never a rejection. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, expect } from '../../test.ts';
import { reusesConnection, sendOnWire } from '../../../suites/fixtures/pipeline/transport.ts';
import type { PipelineRequest } from '../../../suites/fixtures/pipeline/types.ts';
import { connectionsOf, isTimeout } from '../../../suites/fixtures/transport.ts';
import type { Lease } from '../../../suites/pacing/client.ts';

const KEY = 'pipeline-test-key-0123456789abcdef';

function request(url: string, method = 'GET', lease?: Lease): PipelineRequest {
  return {
    s: { method, base: 'inventory', path: '/inventory', ...(lease ? { lease } : {}) },
    method,
    url: new URL(url),
    authorization: `Bearer ${KEY}`,
    bucket: '<API_KEY>',
    carriesKey: true,
    headers: { authorization: `Bearer ${KEY}` },
    body: undefined,
    what: 'INV-01: GET /v1/inventory',
  };
}

test('only a safe request on a lease of its own, sent the first time, goes on the kept-alive connections', () => {
  const lease = { granted: 2 } as Lease;
  expect(reusesConnection(request('http://x/'), false)).toBe(true);
  expect(reusesConnection(request('http://x/'), true)).toBe(false);
  expect(reusesConnection(request('http://x/', 'PATCH'), false)).toBe(false);
  expect(reusesConnection(request('http://x/', 'GET', lease), false)).toBe(false);
});

test('an answer comes back with its record redacted; no answer comes back as the error, in time', async () => {
  let ports = new Set<number>();
  const server = http.createServer((req, res) => {
    ports.add(req.socket.remotePort ?? 0);
    if (req.url === '/hang') return;
    res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const connections = connectionsOf(false);
  const wire = { timeoutMs: 500, insecureTls: false, secrets: [{ name: 'API_KEY' as const, value: KEY }], connections };
  try {
    const sent = await sendOnWire(request(`${origin}/v1/inventory`), false, wire);
    expect('raw' in sent && sent.raw.status).toBe(200);
    if ('raw' in sent) expect(JSON.stringify(sent.exchange)).not.toContain(KEY);
    await sendOnWire(request(`${origin}/v1/inventory`), false, wire);
    expect(ports.size).toBe(1);
    ports = new Set();
    await sendOnWire(request(`${origin}/v1/inventory`), true, wire);
    await sendOnWire(request(`${origin}/v1/inventory`), true, wire);
    expect(ports.size).toBe(2);
    const started = Date.now();
    const hung = await sendOnWire(request(`${origin}/hang`), true, wire);
    expect('error' in hung && isTimeout(hung.error)).toBe(true);
    expect(Date.now() - started).toBeLessThan(5000);
  } finally {
    connections.close();
    server.closeAllConnections();
    server.close();
  }
});
