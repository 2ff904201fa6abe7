/**
 * The one outbound client (core/transport.ts) against tiny local servers (127.0.0.1, port 0): each
 * policy it holds for every user (the suites, the load engine, the preflight) fails visibly when a
 * server breaks it: a deadline to the last byte, the body cap, no content coding asked for or
 * decoded, no redirect followed, TLS verified whatever the environment says with one
 * classification of a refused certificate, and a record that holds no key in any encoding.
 */
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { test, expect } from '../test.ts';
import type { RecordedExchange } from '../../core/results.ts';
import { secretNeedles, findNeedle, secretsOf } from '../../core/secrets.ts';
import { agentFor, isStaleConnection, isTlsFailure, send, TransportError, type SendOptions } from '../../core/transport.ts';
import { stallVoidsDeadline } from '../../core/stall.ts';

const KEY = 'sk_live_c0re_tr4nsport_5Yh8';
const SECRETS = secretsOf({ API_KEY: KEY });
const TLS = path.resolve(import.meta.dirname, '..', 'fixtures', 'tls');

interface Local {
  origin: string;
  /** Request lines (`GET /path`) and the headers of each request, as received. */
  seen: { line: string; headers: http.IncomingHttpHeaders }[];
  close(): Promise<void>;
}

async function serve(handler: http.RequestListener, selfSigned = false): Promise<Local> {
  const seen: Local['seen'] = [];
  const timers = new Set<NodeJS.Timeout>();
  const wrapped: http.RequestListener = (req, res) => {
    seen.push({ line: `${req.method} ${req.url}`, headers: req.headers });
    handler(req, res);
  };
  const server = selfSigned
    ? https.createServer(
        { cert: fs.readFileSync(path.join(TLS, 'untrusted.pem')), key: fs.readFileSync(path.join(TLS, 'untrusted-key.pem')) },
        wrapped,
      )
    : http.createServer(wrapped);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `${selfSigned ? 'https' : 'http'}://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        for (const t of timers) clearInterval(t);
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const get = (origin: string, p = '/v1/inventory') => ({
  url: new URL(`${origin}${p}`),
  method: 'GET',
  headers: { authorization: `Bearer ${KEY}` },
});

async function failureOf(promise: Promise<unknown>): Promise<TransportError> {
  try {
    await promise;
  } catch (e) {
    expect(e).toBeInstanceOf(TransportError);
    return e as TransportError;
  }
  throw new Error('the request did not fail');
}

test('the deadline runs to the last byte: a body trickled a byte every 50 ms fails at it, named', async () => {
  const s = await serve((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    const t = setInterval(() => (res.destroyed ? clearInterval(t) : res.write(' ')), 50);
  });
  try {
    const started = Date.now();
    const e = await failureOf(send(get(s.origin), { deadlineMs: 400, deadlineName: 'REQUEST_TIMEOUT_MS' }));
    expect(Date.now() - started).toBeLessThan(3000);
    expect(e.kind).toBe('timeout');
    expect(e.message).toBe('no complete response within 400 ms (REQUEST_TIMEOUT_MS)');
  } finally {
    await s.close();
  }
});

test('a body beyond the cap fails the request, or with overflow "truncate" ends with the bytes up to the cap', async () => {
  const s = await serve((_req, res) => res.writeHead(200).end('x'.repeat(5000)));
  try {
    const e = await failureOf(send(get(s.origin), { deadlineMs: 2000, maxBodyBytes: 1000 }));
    expect(e.kind).toBe('too-large');
    const cut = await send(get(s.origin), { deadlineMs: 2000, maxBodyBytes: 1000, overflow: 'truncate' });
    expect({ length: cut.body.length, truncated: cut.truncated }).toEqual({ length: 1000, truncated: true });
    const whole = await send(get(s.origin), { deadlineMs: 2000, maxBodyBytes: 5000 });
    expect({ length: whole.body.length, truncated: whole.truncated }).toEqual({ length: 5000, truncated: false });
  } finally {
    await s.close();
  }
});

test('no content coding is asked for or decoded: a gzip body sent anyway arrives as its bytes', async () => {
  const gz = gzipSync('{"a":1}');
  const s = await serve((_req, res) => res.writeHead(200, { 'Content-Encoding': 'gzip' }).end(gz));
  try {
    const r = await send(get(s.origin), { deadlineMs: 2000 });
    expect(s.seen[0]!.headers['accept-encoding']).toBeUndefined();
    expect(r.body).toBe(gz.toString('utf8'));
    expect(r.body).not.toBe('{"a":1}');
  } finally {
    await s.close();
  }
});

test('a redirect is an answer, never followed: the key reaches only the URL it was sent to', async () => {
  const s = await serve((req, res) =>
    req.url === '/v1/inventory' ? res.writeHead(307, { Location: '/elsewhere' }).end() : res.writeHead(200).end('followed'),
  );
  try {
    const r = await send(get(s.origin), { deadlineMs: 2000 });
    expect(r.status).toBe(307);
    expect(r.headers.location).toBe('/elsewhere');
    expect(s.seen.map((x) => x.line)).toEqual(['GET /v1/inventory']);
  } finally {
    await s.close();
  }
});

test('TLS is verified with NODE_TLS_REJECT_UNAUTHORIZED=0 in the environment: a self-signed peer is a tls failure and gets no request; insecure is the one opt-out', async () => {
  const s = await serve((_req, res) => res.writeHead(401).end('{}'), true);
  const before = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
  try {
    for (const options of [
      { deadlineMs: 2000 },
      { deadlineMs: 2000, tls: { insecure: false } },
      { deadlineMs: 2000, agent: false },
    ] as SendOptions[]) {
      const e = await failureOf(send(get(s.origin), options));
      expect(e.kind).toBe('tls');
      expect(e.code).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
    }
    expect(s.seen).toEqual([]);
    expect((await send(get(s.origin), { deadlineMs: 2000, tls: { insecure: true } })).status).toBe(401);
  } finally {
    if (before === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    else process.env.NODE_TLS_REJECT_UNAUTHORIZED = before;
    await s.close();
  }
});

const CLASSIFIED: [string, { code?: string; message?: string }, boolean][] = [
  ['a self-signed leaf', { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }, true],
  ['a self-signed CA in the chain', { code: 'SELF_SIGNED_CERT_IN_CHAIN' }, true],
  ['an unknown issuer', { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' }, true],
  ['a missing local issuer', { code: 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY' }, true],
  ['an expired certificate', { code: 'CERT_HAS_EXPIRED' }, true],
  ['a certificate not yet valid', { code: 'CERT_NOT_YET_VALID' }, true],
  ['a wrong host name', { code: 'ERR_TLS_CERT_ALTNAME_INVALID' }, true],
  ['an untrusted certificate', { code: 'CERT_UNTRUSTED' }, true],
  ['a TLS protocol failure', { code: 'ERR_SSL_WRONG_VERSION_NUMBER' }, true],
  ['a handshake protocol error', { code: 'EPROTO' }, true],
  ['a handshake timeout', { code: 'ERR_TLS_HANDSHAKE_TIMEOUT' }, true],
  ['a certificate error without a code', { message: 'unable to verify the first certificate' }, true],
  ['a refused connection', { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:1' }, false],
  ['a reset connection', { code: 'ECONNRESET', message: 'socket hang up' }, false],
  ['a DNS failure', { code: 'ENOTFOUND' }, false],
  ['a deadline', { code: 'ETIMEDOUT' }, false],
];
for (const [what, error, tls] of CLASSIFIED) {
  test(`one classification: ${what} is ${tls ? '' : 'not '}a TLS failure`, () => {
    expect(isTlsFailure(error)).toBe(tls);
  });
}

test('the record reaches the hook redacted: the key in the URL, a request header, the body, a response header and the response body is its placeholder', async () => {
  const s = await serve((req, res) => {
    res.writeHead(401, { 'X-Echo': String(req.headers.authorization), 'Content-Type': 'application/json' });
    res.end(
      JSON.stringify({ code: 'x', message: `bad key ${Buffer.from(KEY).toString('base64')} ${encodeURIComponent(KEY)}`, status: 401 }),
    );
  });
  try {
    const records: RecordedExchange[] = [];
    const r = await send(
      {
        url: new URL(`${s.origin}/v1/inventory?k=${KEY}`),
        method: 'PATCH',
        headers: { authorization: `Bearer ${KEY}` },
        body: `{"note":"${KEY}"}`,
      },
      { deadlineMs: 2000, record: { secrets: SECRETS, onExchange: (e) => records.push(e) } },
    );
    expect(r.body, 'the answer itself is the raw bytes').toContain(Buffer.from(KEY).toString('base64'));
    expect(records).toHaveLength(1);
    const text = JSON.stringify(records[0]);
    expect(secretNeedles(SECRETS).flatMap((n) => findNeedle(text, n))).toEqual([]);
    expect(records[0]!.request.url).toBe(`${s.origin}/v1/inventory?k=<API_KEY>`);
    expect(records[0]!.request.headers).toEqual([{ name: 'authorization', value: 'Bearer <API_KEY>' }]);
    expect(records[0]!.response.headers).toContainEqual({ name: 'X-Echo', value: 'Bearer <API_KEY>' });
    expect(records[0]!.response).toMatchObject({ status: 401, statusText: 'Unauthorized' });
  } finally {
    await s.close();
  }
});

test('a recording hook that throws fails the request instead of leaving it pending', async () => {
  const s = await serve((_req, res) => res.writeHead(200).end('{}'));
  try {
    const failing = send(get(s.origin), {
      deadlineMs: 2000,
      record: {
        secrets: SECRETS,
        onExchange: () => {
          throw new Error('disk full');
        },
      },
    });
    await expect(failing).rejects.toThrow('disk full');
  } finally {
    await s.close();
  }
});

test('isStaleConnection: only a reused connection closed before any answer is a stale one, never a reset on a new connection or mid-answer', async () => {
  const perSocket = new WeakMap<object, number>();
  let mode: 'drop' | 'mid-answer' = 'drop';
  const s = await serve((req, res) => {
    const n = (perSocket.get(req.socket) ?? 0) + 1;
    perSocket.set(req.socket, n);
    if (n === 1 && req.url !== '/first') return req.socket.destroy();
    if (n === 1) return res.end('[]');
    if (mode === 'drop') return req.socket.destroy();
    res.writeHead(200, { 'Content-Length': '100' });
    res.write('[');
    setTimeout(() => req.socket.destroy(), 20);
  });
  const agent = agentFor(s.origin);
  try {
    const onNew = await failureOf(send(get(s.origin), { deadlineMs: 2000, agent }));
    expect([onNew.reusedConnection, isStaleConnection(onNew)]).toEqual([false, false]);
    await send(get(s.origin, '/first'), { deadlineMs: 2000, agent });
    const reused = await failureOf(send(get(s.origin), { deadlineMs: 2000, agent }));
    expect([reused.reusedConnection, reused.answerStarted, reused.code, isStaleConnection(reused)]).toEqual([
      true,
      false,
      'ECONNRESET',
      true,
    ]);
    mode = 'mid-answer';
    await send(get(s.origin, '/first'), { deadlineMs: 2000, agent });
    const mid = await failureOf(send(get(s.origin), { deadlineMs: 2000, agent }));
    expect([mid.reusedConnection, mid.answerStarted, isStaleConnection(mid)]).toEqual([true, true, false]);
  } finally {
    agent.destroy();
    await s.close();
  }
});

/** Holds this process from running for `ms` (a runner too busy to schedule it). */
function holdProcess(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    /* busy: no timer, no socket is served meanwhile */
  }
}

test('an answer that arrived while the process was held is read before the deadline that passed meanwhile is judged', async () => {
  const s = await serve((_req, res) => {
    // The answer goes out at once; then the process is held 600 ms, past the 300 ms deadline. The
    // hold starts only once the server has the request, so it falls inside the wait, however late
    // a busy runner let the request through.
    res.writeHead(200, { 'Content-Type': 'application/json' }).end('[]');
    setImmediate(() => holdProcess(600));
  });
  try {
    const res = await send(get(s.origin), { deadlineMs: 300, watchStalls: true });
    expect(res.status).toBe(200);
    expect(res.body).toBe('[]');
  } finally {
    await s.close();
  }
});

test('a timeout carries how long the process was held while it waited: a hold of 1.2 s shows, a wait not held shows none of that', async () => {
  const s = await serve(() => {
    /* never answers */
  });
  try {
    setTimeout(() => holdProcess(1200), 100);
    const held = await failureOf(send(get(s.origin), { deadlineMs: 1500, watchStalls: true }));
    expect(held.kind).toBe('timeout');
    expect(held.stalledMs, 'the hold of 1.2 s').toBeGreaterThanOrEqual(1100);
    expect(stallVoidsDeadline(held.stalledMs, 1500), 'a hold of a second leaves the timeout unjudgeable').toBe(true);
    const kept = await failureOf(send(get(s.origin), { deadlineMs: 300, watchStalls: true }));
    expect(kept.kind).toBe('timeout');
    expect(kept.stalledMs, 'no hold').toBeLessThan(held.stalledMs);
    const unwatched = await failureOf(send(get(s.origin), { deadlineMs: 300 }));
    expect(unwatched.stalledMs, 'without watchStalls nothing is measured').toBe(0);
  } finally {
    await s.close();
  }
});
