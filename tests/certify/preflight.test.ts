import { test, expect } from '../test.ts';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { preflight } from '../../certify/steps/preflight.ts';

/**
 * The preflight step against tiny local servers (127.0.0.1, port 0): one clear line within
 * seconds when the target is unreachable, refuses TLS, redirects or does not answer like this
 * API; never a key sent (it sends none).
 */

const TLS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'tls');
const read = (f: string) => fs.readFileSync(path.join(TLS, f));

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

interface Local {
  origin: string;
  /** Authorization headers the server received (must stay empty). */
  authorizations: (string | undefined)[];
  requests: number;
  close(): Promise<void>;
}

async function serve(handler: Handler, tls?: { cert: Buffer; key: Buffer }): Promise<Local> {
  const local = { authorizations: [] as (string | undefined)[], requests: 0 };
  const wrapped: Handler = (req, res) => {
    local.requests++;
    if (req.headers.authorization !== undefined) local.authorizations.push('present');
    handler(req, res);
  };
  const server = tls ? https.createServer(tls, wrapped) : http.createServer(wrapped);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return Object.assign(local, {
    origin: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections?.();
        server.close(() => r());
      }),
  });
}

const conformant: Handler = (req, res) => {
  res.writeHead(401, { 'Content-Type': 'application/json', 'WWW-Authenticate': 'Bearer' });
  res.end(JSON.stringify({ code: 'unauthorized', message: 'missing key', status: 401 }));
};

test('a conformant target passes the preflight, and no request carries a key', async () => {
  const s = await serve(conformant);
  try {
    const r = await preflight({ baseUrl: `${s.origin}/v1`, apiUrl: `${s.origin}/quickstart` });
    expect(r).toEqual({
      ok: true,
      lines: [
        `preflight: GET ${s.origin}/v1/inventory without a key answered 401 with an Error body`,
        `preflight: GET ${s.origin}/quickstart/messages without a key answered 401`,
      ],
    });
    expect(s.requests).toBe(2);
    expect(s.authorizations).toEqual([]);
  } finally {
    await s.close();
  }
});

test('an unreachable target fails within seconds with one line naming it', async () => {
  const s = await serve(conformant);
  const origin = s.origin;
  await s.close();
  const started = Date.now();
  const r = await preflight({ baseUrl: `${origin}/v1` });
  expect(Date.now() - started).toBeLessThan(5000);
  expect(r).toEqual({ ok: false, line: `target unreachable: GET ${origin}/v1/inventory: connection refused (ECONNREFUSED)` });
});

test('a target that never answers fails after the timeout, naming it', async () => {
  const s = await serve(() => {});
  try {
    const r = await preflight({ baseUrl: `${s.origin}/v1` }, { timeoutMs: 300 });
    expect(r).toEqual({ ok: false, line: `target unreachable: GET ${s.origin}/v1/inventory: no complete answer in time (ETIMEDOUT)` });
  } finally {
    await s.close();
  }
});

test('an untrusted TLS certificate fails before any request reaches the server; a trusted private CA passes', async () => {
  const untrusted = await serve(conformant, { cert: read('untrusted.pem'), key: read('untrusted-key.pem') });
  try {
    const r = await preflight({ baseUrl: `${untrusted.origin}/v1` });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.line).toMatch(
        /^TLS certificate of 127\.0\.0\.1:\d+ not verified \([A-Z_]+\); no key was sent\. Trust a private CA with NODE_EXTRA_CA_CERTS=<ca\.pem>$/,
      );
    }
    expect(untrusted.requests, 'no HTTP request reached the untrusted peer').toBe(0);
  } finally {
    await untrusted.close();
  }
  const trusted = await serve(conformant, { cert: read('server.pem'), key: read('server-key.pem') });
  try {
    expect((await preflight({ baseUrl: `${trusted.origin}/v1` }, { ca: read('ca.pem') })).ok).toBe(true);
    const without = await preflight({ baseUrl: `${trusted.origin}/v1` });
    expect(without.ok, 'the private CA is not trusted unless given').toBe(false);
    // The user's explicit opt-in (INSECURE_TLS) runs against it, and says so.
    const optIn = await preflight({ baseUrl: `${trusted.origin}/v1` }, { insecure: true });
    expect(optIn.ok).toBe(true);
    if (optIn.ok)
      expect(optIn.lines).toContain("note: INSECURE_TLS is set: the target's TLS certificate is not verified; the report says so");
  } finally {
    await trusted.close();
  }
});

test('a redirect fails, naming where it goes without its query', async () => {
  const s = await serve((req, res) => {
    res.writeHead(301, { Location: 'https://elsewhere.example/v2/inventory?token=abc' });
    res.end();
  });
  try {
    const r = await preflight({ baseUrl: `${s.origin}/v1` });
    expect(r).toEqual({
      ok: false,
      line: `BASE_URL redirects: GET ${s.origin}/v1/inventory answered 301 to https://elsewhere.example/v2/inventory; no key is sent to a redirect target: set BASE_URL to the final address`,
    });
    expect(s.authorizations).toEqual([]);
  } finally {
    await s.close();
  }
});

const NOT_THIS_API: [string, Handler, RegExp][] = [
  [
    'an HTML page',
    (_q, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end('<html>hello</html>');
    },
    /answered 200, expected 401 with an Error body$/,
  ],
  [
    'a 404 (wrong base path)',
    (_q, res) => {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      res.end('{}');
    },
    /answered 404, expected 401 with an Error body \(is BASE_URL the inventory base address, ending in \/v1\?\)$/,
  ],
  [
    'a 401 without a JSON body',
    (_q, res) => {
      res.writeHead(401, { 'Content-Type': 'text/plain' });
      res.end('Unauthorized');
    },
    /answered 401 without a JSON body, expected 401 with an Error body$/,
  ],
];
for (const [what, handler, line] of NOT_THIS_API) {
  test(`a target answering ${what} to a request without a key does not answer like this API`, async () => {
    const s = await serve(handler);
    try {
      const r = await preflight({ baseUrl: `${s.origin}/v1` });
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.line.startsWith(`target does not answer like the Inventory Service: GET ${s.origin}/v1/inventory without a key`)).toBe(
          true,
        );
        expect(r.line).toMatch(line);
      }
    } finally {
      await s.close();
    }
  });
}

test('an unreachable API_URL is a note (its checks fail); an untrusted one stops the run', async () => {
  const s = await serve(conformant);
  const gone = await serve(conformant);
  const origin = gone.origin;
  await gone.close();
  const untrusted = await serve(conformant, { cert: read('untrusted.pem'), key: read('untrusted-key.pem') });
  try {
    const r = await preflight({ baseUrl: `${s.origin}/v1`, apiUrl: `${origin}/quickstart` });
    expect(r.ok).toBe(true);
    if (r.ok)
      expect(r.lines[1]).toBe(
        `note: API_URL unreachable: GET ${origin}/quickstart/messages: connection refused (ECONNREFUSED); the messages checks will fail, naming it`,
      );
    const t = await preflight({ baseUrl: `${s.origin}/v1`, apiUrl: `${untrusted.origin}/quickstart` });
    expect(t.ok).toBe(false);
    if (!t.ok) expect(t.line).toMatch(/^API_URL: TLS certificate of 127\.0\.0\.1:\d+ not verified/);
    expect(untrusted.requests).toBe(0);
  } finally {
    await s.close();
    await untrusted.close();
  }
});
