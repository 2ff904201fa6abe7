import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { test, expect } from '../test.ts';
import { startFaultProxy, headers, throughProxy, type FaultHooks } from '../../faults/proxy.ts';
import { retryAfterMs } from '../../faults/retry-watch.ts';
import { REPO_ROOT } from '../../faults/harness.ts';

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
  return {
    url,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/** Raw response head, to see header-name case as sent on the wire. */
function rawGet(url: string): Promise<{ status: number; rawHeaders: string[]; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks).toString() }));
      })
      .on('error', reject);
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
      method: 'POST',
      headers: { authorization: 'Bearer secret-key', 'content-type': 'application/json' },
      body: '{"message":"hi"}',
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
      return {
        ...res,
        status: 201,
        headers: headers.set(res.headers, 'x-ratelimit-limit', '300'),
        body: Buffer.from(`${res.body.toString()} `),
      };
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
    const hung = await fetch(`${proxy.url}/hang`, { signal: AbortSignal.timeout(300) }).then(
      () => 'answered',
      (e) => e.name,
    );
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
  const env = throughProxy(
    { BASE_URL: 'http://127.0.0.1:1/v1', API_URL: 'http://127.0.0.1:1/quickstart', API_KEY: 'k' },
    'http://127.0.0.1:2',
  );
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

/** An upstream limiter in miniature: `/limited` answers 429 with the given Retry-After, `/banned` a ban, anything else 200. */
async function limitingUpstream(retryAfter = '1') {
  const server = http.createServer((req, res) => {
    req.resume();
    const rate = ['X-RateLimit-Limit', '60', 'X-RateLimit-Remaining', '0', 'X-RateLimit-Reset', String(Math.ceil(Date.now() / 1000) + 1)];
    if (req.url === '/limited') {
      res.writeHead(429, [...rate, 'Retry-After', retryAfter, 'Content-Type', 'application/json']);
      return res.end('{"code":"rate_limited","message":"slow down","status":429}');
    }
    if (req.url === '/banned') {
      res.writeHead(429, [...rate, 'Retry-After', '2', 'Content-Type', 'application/json']);
      return res.end('{"code":"key_banned","message":"banned","status":429}');
    }
    res.writeHead(200, ['X-RateLimit-Limit', '60', 'X-RateLimit-Remaining', '59', 'Content-Type', 'application/json']);
    res.end('[]');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

const keyed = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });

test("the proxy counts requests sent on a key while its 429's Retry-After is pending, per key label, and bans", async () => {
  const up = await limitingUpstream('1');
  const env = { API_KEY: 'key-a', RATE_LIMIT_KEY: 'key-b' };
  const proxy = await startFaultProxy({ upstream: up.url, env });
  try {
    expect((await fetch(`${proxy.url}/limited`, keyed('key-b'))).status).toBe(429);
    await fetch(`${proxy.url}/v1/inventory`, keyed('key-b')); // early: Retry-After 1 s has not passed
    await fetch(`${proxy.url}/v1/inventory`, keyed('key-a')); // another key: not early
    await fetch(`${proxy.url}/v1/inventory`); // no key: not counted
    await new Promise((r) => setTimeout(r, 1050));
    await fetch(`${proxy.url}/v1/inventory`, keyed('key-b')); // waited: not early
    await fetch(`${proxy.url}/banned`, keyed('key-x'));
    await fetch(`${proxy.url}/banned`, keyed('key-x')); // same ban, and early
    const stats = proxy.stats();
    expect(stats.early).toEqual({ RATE_LIMIT_KEY: 1, other: 1 });
    expect(stats.bans).toEqual({ other: 1 });
    expect(stats.refusals).toEqual({ RATE_LIMIT_KEY: 1, other: 2 });
    expect(stats.requests).toEqual({ RATE_LIMIT_KEY: 3, API_KEY: 1, other: 2 });
    expect(JSON.stringify(stats)).not.toMatch(/key-[abx]/);
  } finally {
    await proxy.close();
    await up.close();
  }
});

test('Retry-After as an HTTP-date is judged against the response Date; strict ban: the first early request bans the key', async () => {
  expect(
    retryAfterMs([
      ['Retry-After', 'Tue, 01 Jan 2030 00:00:05 GMT'],
      ['Date', 'Tue, 01 Jan 2030 00:00:00 GMT'],
    ]),
  ).toBe(5000);
  expect(retryAfterMs([['Retry-After', '2']])).toBe(2000);
  expect(retryAfterMs([['Retry-After', 'soon']])).toBeUndefined();
  const up = await limitingUpstream('1');
  const proxy = await startFaultProxy({ upstream: up.url, env: { RATE_LIMIT_KEY: 'key-b' }, strictBanMs: 600_000 });
  try {
    await fetch(`${proxy.url}/limited`, keyed('key-b'));
    const early = await fetch(`${proxy.url}/v1/inventory`, keyed('key-b'));
    expect(early.status).toBe(429);
    expect(await early.json()).toMatchObject({ code: 'key_banned', status: 429 });
    expect(Number(early.headers.get('retry-after'))).toBeGreaterThan(590);
    expect(early.headers.get('x-ratelimit-remaining')).toBe('0');
    await new Promise((r) => setTimeout(r, 1050));
    expect((await fetch(`${proxy.url}/v1/inventory`, keyed('key-b'))).status, 'still banned after the first Retry-After').toBe(429);
    expect((await fetch(`${proxy.url}/v1/inventory`, keyed('key-c'))).status, 'another key is not').toBe(200);
    expect(proxy.stats().bans).toEqual({ RATE_LIMIT_KEY: 1 });
  } finally {
    await proxy.close();
    await up.close();
  }
});

test('staging transport: https with a private CA (verified) and Connection: close on every response', async () => {
  const tlsDir = path.join(REPO_ROOT, 'tests', 'fixtures', 'tls');
  const up = await echoUpstream();
  const proxy = await startFaultProxy({
    upstream: up.url,
    tls: { cert: fs.readFileSync(path.join(tlsDir, 'server.pem')), key: fs.readFileSync(path.join(tlsDir, 'server-key.pem')) },
    connectionClose: true,
  });
  try {
    expect(proxy.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const get = (ca?: Buffer) =>
      new Promise<{ status: number; connection?: string; closed: boolean }>((resolve, reject) => {
        const req = https.get(`${proxy.url}/v1/inventory`, { ca, agent: new https.Agent({ keepAlive: true, ca }) }, (res) => {
          res.resume();
          res.on('end', () =>
            res.socket.once('close', () => resolve({ status: res.statusCode!, connection: res.headers.connection, closed: true })),
          );
        });
        req.on('error', reject);
      });
    const ok = await get(fs.readFileSync(path.join(tlsDir, 'ca.pem')));
    expect(ok).toEqual({ status: 200, connection: 'close', closed: true });
    await expect(get(undefined), 'without the private CA the certificate is refused').rejects.toThrow(
      /self[- ]signed|unable to (get|verify)/i,
    );
  } finally {
    await proxy.close();
    await up.close();
  }
});

/**
 * An upstream that drops a kept-alive connection when a second request arrives on it (as a server
 * does whose idle timeout fires just then), answering each first request after `delayMs`.
 */
async function droppingUpstream(delayMs = 0) {
  const counts = { answered: 0, dropped: 0 };
  const used = new WeakSet<object>();
  const server = http.createServer((req, res) => {
    req.resume();
    if (used.has(req.socket)) {
      counts.dropped++;
      return req.socket.destroy();
    }
    used.add(req.socket);
    counts.answered++;
    setTimeout(() => res.writeHead(200, ['Content-Type', 'application/json', 'Content-Length', '2']).end('[]'), delayMs);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

test('the request sent again after a reused socket was closed goes on a fresh connection: idle sockets that all close at once are never a 502', async () => {
  // Sockets that went idle together reach the upstream's idle timeout together: a retry on the
  // next pooled socket would meet the same close. The upstream answers after a short pause, so
  // that concurrent requests each open a connection of their own.
  const up = await droppingUpstream(50);
  const proxy = await startFaultProxy({ upstream: up.url });
  try {
    const first = await Promise.all([1, 2, 3].map(() => fetch(`${proxy.url}/v1/inventory`).then((r) => r.status)));
    expect(first).toEqual([200, 200, 200]);
    const next = (await fetch(`${proxy.url}/v1/inventory`)).status;
    expect(up.counts.dropped, 'the first reused socket was closed').toBe(1);
    expect(next, 'the retry went on a fresh connection, not on the next idle socket').toBe(200);
  } finally {
    await proxy.close();
    await up.close();
  }
});

test('a kept-alive upstream socket closed as it is reused is retried once, not answered 502; a request with a body never goes on a reused socket', async () => {
  const up = await droppingUpstream();
  const proxy = await startFaultProxy({ upstream: up.url });
  try {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await fetch(`${proxy.url}/v1/inventory`)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expect(up.counts.dropped, 'the race happened').toBeGreaterThan(0);
    expect(up.counts.answered).toBe(5);
    // A streamed body cannot be sent again: after a bodiless request left a socket in the pool,
    // each request with a body still reaches the upstream as the first on its connection.
    const posted: number[] = [];
    for (let i = 0; i < 3; i++) {
      await fetch(`${proxy.url}/v1/inventory`);
      const r = await fetch(`${proxy.url}/quickstart/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"message":"hi"}',
      });
      posted.push(r.status);
    }
    expect(posted, 'requests with a body, each after a kept-alive socket went back to the pool').toEqual([200, 200, 200]);
  } finally {
    await proxy.close();
    await up.close();
  }
});

/** An upstream that, like the reference server, refuses a declared body over 64 KiB at once with 413 and `Connection: close`, unread. */
async function refusingUpstream() {
  const server = http.createServer((req, res) => {
    if (Number(req.headers['content-length'] ?? 0) > 65_536) {
      res.writeHead(413, { 'Content-Type': 'application/json', Connection: 'close' });
      return res.end('{"code":"payload_too_large"}');
    }
    req.resume();
    req.on('end', () => res.end('{"ok":true}'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/**
 * Writes `pieces` on one kept-alive connection to `origin`, 20 ms apart (as a proxy sends a body in
 * buffers), and collects the status lines of the `expected` answers that come back within `ms`, and how it ended.
 */
function onOneConnection(origin: string, pieces: string[], expected: number, ms: number): Promise<{ statuses: string[]; ended: string }> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve) => {
    let received = '';
    const socket = net.connect(Number(port), hostname, async () => {
      for (const piece of pieces) {
        if (socket.destroyed) return;
        socket.write(piece);
        await new Promise((r) => setTimeout(r, 20));
      }
    });
    const done = (ended: string) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ statuses: received.match(/^HTTP\/1\.1 \d{3}/gm) ?? [], ended });
    };
    const timer = setTimeout(() => done('still open'), ms);
    socket.on('data', (c: Buffer) => {
      received += c.toString('latin1');
      if ((received.match(/^HTTP\/1\.1 \d{3}/gm) ?? []).length === expected) done('answered');
    });
    socket.on('error', (e: NodeJS.ErrnoException) => done(e.code ?? e.message));
    socket.on('close', () => done('closed'));
  });
}

test("a body the upstream refused unread (413, Connection: close) is drained: the client's next request on its kept-alive connection is answered, never reset", async () => {
  // nginx sends a whole body before it reads the answer and keeps its upstream connections alive:
  // an unread rest of a refused body stalled the connection until its idle timeout reset it.
  const up = await refusingUpstream();
  const proxy = await startFaultProxy({ upstream: up.url });
  try {
    const head = 'POST /quickstart/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n';
    const body = Array.from({ length: 10 }, () => 'a'.repeat(10_000));
    const small = 'PATCH /v1/inventory/1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}';
    const seen = await onOneConnection(proxy.url, [head, ...body, small], 2, 3_000);
    expect(seen).toEqual({ statuses: ['HTTP/1.1 413', 'HTTP/1.1 200'], ended: 'answered' });
  } finally {
    await proxy.close();
    await up.close();
  }
});
