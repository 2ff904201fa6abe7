import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { RetryWatch, type RetryStats } from './retry-watch.ts';

/**
 * A fault-injecting HTTP proxy: it forwards every request (`/v1/...`, `/quickstart/...`, anything)
 * to one upstream and applies one named fault on the way. See `faults/README.md` and the
 * architecture page (docs/architecture.md, "Faults").
 *
 * It never logs: the `Authorization` header only ever lives in memory, on its way upstream.
 *
 * In every run it counts, per key, requests sent while a 429's `Retry-After` was pending, and bans
 * (`stats()`, see `retry-watch.ts`). Staging conditions (the staging simulator, `faults/staging/`)
 * are options: https with a given certificate, `Connection: close` on every response, and a strict
 * ban on the first early request.
 */

/** A header list in wire order with the names' original case (`[name, value]` pairs). */
export type HeaderList = Array<[string, string]>;

/** A request as the proxy holds it before forwarding. */
export interface ProxyRequest {
  method: string;
  /** Path and query, e.g. `/v1/inventory/12`. */
  path: string;
  headers: HeaderList;
  body: Buffer;
}

/** A response as the proxy holds it before answering. */
export interface ProxyResponse {
  status: number;
  headers: HeaderList;
  body: Buffer;
}

/** What a fault may read about the run it is part of. */
export interface FaultContext {
  /** The upstream origin (plus optional path prefix). */
  upstream: URL;
  /** The run's environment (`API_KEY`, `API_PLAN`, ...), when the caller gave it. */
  env: Record<string, string | undefined>;
  /** Sends a request straight to the upstream, bypassing the fault (for faults that need a side look). */
  forward(request: ProxyRequest): Promise<ProxyResponse>;
}

/**
 * The hooks of one fault instance. Every hook is optional; a fault without `response` streams the
 * upstream's answer through untouched, a fault without `request` streams the request body.
 */
export interface FaultHooks {
  /**
   * Rewrites the request, answers it (return a `ProxyResponse`), or swallows it (return `'swallow'`:
   * the client's connection is left hanging until the proxy closes).
   */
  request?(
    req: ProxyRequest,
    ctx: FaultContext,
  ): ProxyRequest | ProxyResponse | 'swallow' | Promise<ProxyRequest | ProxyResponse | 'swallow'>;
  /** Rewrites the upstream's response (buffered) before it reaches the client. */
  response?(res: ProxyResponse, req: ProxyRequest, ctx: FaultContext): ProxyResponse | Promise<ProxyResponse>;
  /** Milliseconds to hold each request before forwarding it. */
  delayMs?(req: ProxyRequest): number;
}

/** A fault: its hooks are created once per proxy, so per-run state stays inside the closure. */
export interface ProxyFault {
  name: string;
  create(): FaultHooks;
}

export interface FaultProxyOptions {
  /** Upstream origin, e.g. `http://127.0.0.1:8080` (a path prefix is kept: `https://host/api`). */
  upstream: string;
  /** The fault to apply; omit for a transparent proxy. */
  fault?: ProxyFault | FaultHooks;
  /** Exposed to the fault as `ctx.env` (e.g. the run's `API_KEY`). Never logged. */
  env?: Record<string, string | undefined>;
  port?: number;
  host?: string;
  /** Serve https with this certificate and key (PEM) instead of http. */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** Send `Connection: close` on every response and close the connection after it. */
  connectionClose?: boolean;
  /** Ban a key on its first request sent while a 429's `Retry-After` is pending, for this long (ms). */
  strictBanMs?: number;
}

export interface RunningFaultProxy {
  /** Origin of the proxy, e.g. `http://127.0.0.1:40123` (no trailing slash). */
  url: string;
  /** Early requests, bans and 429s so far, per key label (never a key). */
  stats(): RetryStats;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);

function pairs(raw: string[]): HeaderList {
  const out: HeaderList = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i]!, raw[i + 1]!]);
  return out;
}

function flat(headers: HeaderList): string[] {
  return headers.flat();
}

/** Case-insensitive header helpers over a `HeaderList`. */
export const headers = {
  get(list: HeaderList, name: string): string | undefined {
    const n = name.toLowerCase();
    return list.find(([k]) => k.toLowerCase() === n)?.[1];
  },
  set(list: HeaderList, name: string, value: string): HeaderList {
    const n = name.toLowerCase();
    const i = list.findIndex(([k]) => k.toLowerCase() === n);
    const out = list.filter(([k], j) => j === i || k.toLowerCase() !== n);
    if (i >= 0) return out.map(([k, v]) => (k.toLowerCase() === n ? [k, value] : [k, v]));
    return [...out, [name, value]];
  },
  remove(list: HeaderList, name: string): HeaderList {
    const n = name.toLowerCase();
    return list.filter(([k]) => k.toLowerCase() !== n);
  },
};

function isResponse(x: unknown): x is ProxyResponse {
  return typeof x === 'object' && x !== null && 'status' in x;
}

function readBody(stream: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/** The upstream's client: `send`, which forwards one request, and `close`, which drops its connections. */
interface Upstream {
  send(req: ProxyRequest, body?: NodeJS.ReadableStream): Promise<http.IncomingMessage>;
  close(): void;
}

/**
 * Connects to the upstream. A kept-alive socket the upstream closed just as it was reused fails
 * with ECONNRESET before any answer (an HTTP/1.1 race, not the upstream's answer): a buffered
 * request is then sent again once on a fresh connection, as HTTP clients do (never on the next idle
 * socket: sockets that went idle together reach the upstream's idle timeout together); a streamed
 * one always goes on a connection of its own.
 */
function upstreamOf(upstream: URL): Upstream {
  const prefix = upstream.pathname.replace(/\/$/, '');
  const client = upstream.protocol === 'https:' ? https : http;
  const agent = new client.Agent({ keepAlive: true, maxSockets: 64 });
  // A streamed body cannot be sent again, so it never goes on a reused connection: the upstream
  // may close an idle one just as it is reused (its keep-alive timeout), and on a busy runner that
  // race is common. A reset there would be the proxy's 502, never the deployment's answer.
  const fresh = new client.Agent({ keepAlive: false, maxSockets: 64 });
  const send = (req: ProxyRequest, body?: NodeJS.ReadableStream, retried = false): Promise<http.IncomingMessage> =>
    new Promise<http.IncomingMessage>((resolve, reject) => {
      const outHeaders = req.headers.filter(([k]) => !HOP_BY_HOP.has(k.toLowerCase()));
      const up = client.request(
        {
          protocol: upstream.protocol,
          hostname: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: prefix + req.path,
          headers: [...flat(outHeaders), 'Host', upstream.host],
          agent: body || retried ? fresh : agent,
        } as http.RequestOptions,
        resolve,
      );
      up.on('error', (err: NodeJS.ErrnoException) => {
        if (!body && !retried && up.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE'))
          resolve(send(req, undefined, true));
        else reject(err);
      });
      if (body) body.pipe(up);
      else up.end(req.body);
    });
  return {
    send,
    close() {
      agent.destroy();
      fresh.destroy();
    },
  };
}

/** Writes a buffered response; HEAD and bodiless statuses keep the upstream's Content-Length. */
function writeBuffered(res: http.ServerResponse, r: ProxyResponse, closing: HeaderList, method = 'GET'): void {
  const bodiless = method.toUpperCase() === 'HEAD' || r.status === 204 || r.status === 304;
  const list = [
    ...r.headers.filter(([k]) => !HOP_BY_HOP.has(k.toLowerCase()) && (bodiless || k.toLowerCase() !== 'content-length')),
    ...closing,
  ];
  res.sendDate = false;
  res.writeHead(r.status, bodiless ? flat(list) : [...flat(list), 'Content-Length', String(r.body.length)]);
  res.end(bodiless ? undefined : r.body);
}

/** What one proxied exchange needs: the fault's hooks and context, the upstream, the 429 watcher, the requests held open. */
interface ProxyParts {
  hooks: FaultHooks;
  ctx: FaultContext;
  upstream: Upstream;
  watch: RetryWatch;
  hanging: Set<http.ServerResponse>;
  closing: HeaderList;
}

/**
 * Once the answer is sent, the rest of a body nobody read is read and dropped, as node's server
 * does for a body its handler never read: an upstream may refuse a body unread (413 on its declared
 * length) and close, which ends the pipe into it; left paused, the rest stalls the client's
 * kept-alive connection until the idle timeout resets it (nginx then answers its own 502).
 */
function drainRest(inc: http.IncomingMessage): void {
  if (inc.readableEnded || inc.destroyed) return;
  inc.unpipe();
  inc.resume();
}

/**
 * Proxies one request through the fault's hooks: a banned key is answered at once; a request hook
 * may swallow, answer or rewrite; a response hook (or a 429, for the watcher) buffers the answer;
 * anything else streams. A failure before the answer started is a 502 Error body.
 */
async function proxyOne(p: ProxyParts, inc: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const { hooks, ctx, watch, closing } = p;
  const arrived: ProxyRequest = {
    method: inc.method ?? 'GET',
    path: inc.url ?? '/',
    headers: pairs(inc.rawHeaders),
    body: Buffer.alloc(0),
  };
  /** Every answer passes here: the watcher sees each 429 as it leaves. */
  const answer = (r: ProxyResponse, method = 'GET') => {
    watch.response(arrived.headers, r.status, r.headers, r.body);
    watch.answered(arrived.method, arrived.path, r.status);
    writeBuffered(res, r, closing, method);
  };
  try {
    const banned = watch.request(arrived.headers);
    if (banned) {
      inc.resume();
      return writeBuffered(res, banned, closing, arrived.method);
    }
    let req: ProxyRequest = arrived;
    // A request without a body is not streamed, so that it can be sent again (see `upstreamOf`).
    const bodiless = !inc.headers['content-length'] && !inc.headers['transfer-encoding'];
    if (!bodiless) res.once('finish', () => drainRest(inc));
    let stream: NodeJS.ReadableStream | undefined = bodiless ? undefined : inc;
    if (bodiless && !hooks.request) inc.resume();
    if (hooks.request) {
      req.body = await readBody(inc);
      stream = undefined;
      const out = await hooks.request(req, ctx);
      if (out === 'swallow') {
        p.hanging.add(res);
        res.on('close', () => p.hanging.delete(res));
        return;
      }
      if (isResponse(out)) return answer(out, req.method);
      req = withLength(out);
    }
    const delay = hooks.delayMs?.(req) ?? 0;
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));
    const upRes = await p.upstream.send(req, stream);
    const status = upRes.statusCode ?? 502;
    if (hooks.response || status === 429) {
      const buffered: ProxyResponse = { status, headers: pairs(upRes.rawHeaders), body: await readBody(upRes) };
      return answer(hooks.response ? await hooks.response(buffered, req, ctx) : buffered, req.method);
    }
    watch.answered(arrived.method, arrived.path, status);
    res.sendDate = false;
    res.writeHead(status, flat([...pairs(upRes.rawHeaders).filter(([k]) => !HOP_BY_HOP.has(k.toLowerCase())), ...closing]));
    upRes.pipe(res);
  } catch (err) {
    if (!res.headersSent) {
      const body = Buffer.from(JSON.stringify({ code: 'bad_gateway', message: `fault proxy: ${(err as Error).message}`, status: 502 }));
      answer({
        status: 502,
        headers: [
          ['Content-Type', 'application/json'],
          ['Date', new Date().toUTCString()],
        ],
        body,
      });
    } else res.destroy();
  }
}

/**
 * Starts the proxy on `host:port` (default 127.0.0.1, any free port).
 * Requests are buffered only when the fault has a `request` hook, responses only when it has a
 * `response` hook; otherwise both stream. The upstream's `Date` header is kept (the proxy never
 * adds its own), as are the upstream's header names in their original case.
 */
export async function startFaultProxy(options: FaultProxyOptions): Promise<RunningFaultProxy> {
  const url = new URL(options.upstream);
  const upstream = upstreamOf(url);
  const hooks: FaultHooks = options.fault && 'create' in options.fault ? options.fault.create() : (options.fault ?? {});
  const ctx: FaultContext = {
    upstream: url,
    env: options.env ?? {},
    async forward(req) {
      const res = await upstream.send(withLength(req));
      return { status: res.statusCode ?? 502, headers: pairs(res.rawHeaders), body: await readBody(res) };
    },
  };
  const parts: ProxyParts = {
    hooks,
    ctx,
    upstream,
    watch: new RetryWatch({ env: options.env, strictBanMs: options.strictBanMs }),
    hanging: new Set<http.ServerResponse>(),
    closing: options.connectionClose ? [['Connection', 'close']] : [],
  };
  const handler = (inc: http.IncomingMessage, res: http.ServerResponse) => void proxyOne(parts, inc, res);
  const server = options.tls ? https.createServer({ cert: options.tls.cert, key: options.tls.key }, handler) : http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${options.tls ? 'https' : 'http'}://${options.host ?? '127.0.0.1'}:${port}`,
    stats: () => parts.watch.report(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of parts.hanging) res.destroy();
        upstream.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Drops any stale `Content-Length` of a rewritten request; `send` ends it with the exact body. */
function withLength(req: ProxyRequest): ProxyRequest {
  const hs = headers.remove(req.headers, 'content-length');
  if (req.body.length > 0 || ['POST', 'PUT', 'PATCH'].includes(req.method.toUpperCase()))
    hs.push(['Content-Length', String(req.body.length)]);
  return { ...req, headers: hs };
}

/**
 * Rewrites a run's target addresses so the run goes through the proxy: the origin of `BASE_URL`
 * and `API_URL` is replaced by the proxy's; their paths are kept.
 */
export function throughProxy(env: Record<string, string | undefined>, proxyUrl: string): Record<string, string | undefined> {
  const swap = (u: string | undefined) => {
    if (!u) return u;
    const parsed = new URL(u);
    return proxyUrl.replace(/\/$/, '') + parsed.pathname.replace(/\/$/, '') + parsed.search;
  };
  return { ...env, BASE_URL: swap(env.BASE_URL), API_URL: swap(env.API_URL) };
}
