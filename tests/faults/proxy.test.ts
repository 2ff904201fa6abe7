import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, expect } from '@playwright/test';
import { startFaultProxy, headers, throughProxy, type FaultHooks } from '../../faults/proxy.ts';

/** A tiny upstream that echoes what it received and sets case-sensitive headers and a fixed Date. */
async function echoUpstream() {
  const seen: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: string }> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      if (req.url?.startsWith('/big')) {
        res.writeHead(200, ['Content-Type', 'application/octet-stream', 'Date', 'Tue, 01 Jan 2030 00:00:00 GMT']);
        for (let i = 0; i < 64; i++) res.write(Buffer.alloc(64 * 1024, 97));
        return res.end();
      }
      res.sendDate = false;
      res.writeHead(200, ['Content-Type', 'application/json', 'Date', 'Tue, 01 Jan 2030 00:00:00 GMT', 'X-RateLimit-Limit', '60']);
      res.end(JSON.stringify({ url: req.url, body }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, close: () => new Promise<void>((r) => { server.close(() => r()); server.closeAllConnections(); }) };
}

/** Raw response head, to see header-name case as sent on the wire. */
function rawGet(url: string): Promise<{ status: number; rawHeaders: string[]; body: string }> {
  return new Promise((resolve, reject) => {
    http.get(url, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks).toString() }));
    }).on('error', reject);
  });
}

test('transparent proxy forwards /v1 and /quickstart, keeps Date and header case', async () => {
  const up = await echoUpstream();
  const proxy = await startFaultProxy({ upstream: up.url });
  try {
    const a = await rawGet(`${proxy.url}/v1/inventory?x=1`);
    expect(a.status).toBe(200);
    expect(JSON.parse(a.body).url).toBe('/v1/inventory?x=1');
    expect(a.rawHeaders).toContain('X-RateLimit-Limit');
    expect(a.rawHeaders.filter((h) => h.toLowerCase() === 'date')).toHaveLength(1);
    expect(a.rawHeaders).toContain('Tue, 01 Jan 2030 00:00:00 GMT');
    const b = await fetch(`${proxy.url}/quickstart/messages`, {
      method: 'POST', headers: { authorization: 'Bearer secret-key', 'content-type': 'application/json' }, body: '{"message":"hi"}',
    });
    expect(await b.json()).toEqual({ url: '/quickstart/messages', body: '{"message":"hi"}' });
    expect(up.seen.at(-1)!.headers.authorization).toBe('Bearer secret-key');
    const big = await fetch(`${proxy.url}/big`);
    expect((await big.arrayBuffer()).byteLength).toBe(64 * 64 * 1024);
  } finally {
    await proxy.close();
    await up.close();
  }
});

test('request rewriting, answering itself, response rewriting, delay and swallow', async () => {
  const up = await echoUpstream();
  const hooks: FaultHooks = {
    request(req) {
      if (req.path === '/self') return { status: 418, headers: [['Content-Type', 'text/plain']], body: Buffer.from('teapot') };
      if (req.path === '/hang') return 'swallow';
      return { ...req, body: Buffer.from(req.body.toString().toUpperCase()) };
    },
    response(res) {
      return { ...res, status: 201, headers: headers.set(res.headers, 'x-ratelimit-limit', '300'), body: Buffer.from(res.body.toString() + ' ') };
    },
    delayMs: (req) => (req.path === '/slow' ? 300 : 0),
  };
  const proxy = await startFaultProxy({ upstream: up.url, fault: hooks });
  try {
    const r = await fetch(`${proxy.url}/v1/x`, { method: 'POST', body: 'abc' });
    expect(r.status).toBe(201);
    expect(r.headers.get('x-ratelimit-limit')).toBe('300');
    expect(r.headers.get('date')).toBe('Tue, 01 Jan 2030 00:00:00 GMT');
    expect(JSON.parse(await r.text()).body).toBe('ABC');
    const self = await fetch(`${proxy.url}/self`);
    expect(self.status).toBe(418);
    expect(await self.text()).toBe('teapot');
    const t0 = Date.now();
    await fetch(`${proxy.url}/slow`);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(280);
    const hung = await fetch(`${proxy.url}/hang`, { signal: AbortSignal.timeout(300) }).then(() => 'answered', (e) => e.name);
    expect(hung).toBe('TimeoutError');
  } finally {
    await proxy.close();
    await up.close();
  }
});

test('an unreachable upstream yields a 502 Error body, not a crash', async () => {
  const up = await echoUpstream();
  await up.close();
  const proxy = await startFaultProxy({ upstream: up.url });
  try {
    const r = await fetch(`${proxy.url}/v1/inventory`);
    expect(r.status).toBe(502);
    expect((await r.json()).status).toBe(502);
  } finally {
    await proxy.close();
  }
});

test('throughProxy keeps the paths of BASE_URL and API_URL', () => {
  const env = throughProxy({ BASE_URL: 'http://127.0.0.1:1/v1', API_URL: 'http://127.0.0.1:1/quickstart', API_KEY: 'k' }, 'http://127.0.0.1:2');
  expect(env).toEqual({ BASE_URL: 'http://127.0.0.1:2/v1', API_URL: 'http://127.0.0.1:2/quickstart', API_KEY: 'k' });
});

test('HEAD through a rewriting proxy keeps the upstream Content-Length and sends no body', async () => {
  const up = await echoUpstream();
  const proxy = await startFaultProxy({ upstream: up.url, fault: { response: (res) => res } });
  try {
    const direct = await fetch(`${up.url}/v1/inventory`, { method: 'HEAD' });
    const r = await fetch(`${proxy.url}/v1/inventory`, { method: 'HEAD' });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-length')).toBe(direct.headers.get('content-length'));
    expect(await r.text()).toBe('');
  } finally {
    await proxy.close();
    await up.close();
  }
});
