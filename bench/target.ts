/**
 * One benchmark target in its own process (`BENCH_TARGET` in the environment chooses):
 * - `reference`: the reference server (`startReferenceServer`, port 0), configured by the
 *   environment like `npm start` (so `REDIS_URL` puts its state on Redis);
 * - `deployment`: `startDeployment` with `BENCH_INSTANCES` instances on `REDIS_URL`;
 * - `bare`: plain `node:http` answering every request with the bytes in `BENCH_SAMPLE`
 *   (`{"status", "body": <base64>, "headers": [name, value, …], "readBody"}`: a reference
 *   response, same status, body and header names, static values); with `readBody` it reads the
 *   request body before answering, as the reference PATCH does. It loads nothing else.
 * With `BENCH_TLS=1` the `reference` (in memory) and `bare` targets serve https with the test
 * certificate of `tests/fixtures/tls/` (the reference app on an https server with the options
 * `startReferenceServer` gives its http one).
 * Prints one JSON line `{"origin", "keys", "pids"}` on stdout (the pids whose CPU time the bench
 * reads; keys only for the bench's own requests, on a pipe), then serves until stdin ends or a signal.
 * Loopback only.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

const TLS = process.env.BENCH_TLS === '1';
const TLS_DIR = new URL('../tests/fixtures/tls/', import.meta.url);

/** An http server, or with BENCH_TLS=1 an https one with the test certificate; `options` are node:http's. */
function serverOf(options: Record<string, unknown>, listener: RequestListener): Server {
  if (!TLS) return createServer(options, listener);
  const tls = { cert: readFileSync(new URL('server.pem', TLS_DIR)), key: readFileSync(new URL('server-key.pem', TLS_DIR)) };
  return createHttpsServer({ ...options, ...tls }, listener) as unknown as Server;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `${TLS ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The in-memory reference app on an https server (BENCH_TLS=1), with `startReferenceServer`'s server options. */
async function referenceOverTls(): Promise<{ origin: string; keys: Record<string, string>; pids: number[] }> {
  const { createReferenceApp, MemoryRateLimitStore } = await import('../reference-server/app.ts');
  const { resolveConfig } = await import('../reference-server/config.ts');
  const config = resolveConfig({ port: 0, host: '127.0.0.1', redisUrl: 'none' });
  const app = createReferenceApp(config, new MemoryRateLimitStore());
  const options = {
    requireHostHeader: false,
    headersTimeout: Math.min(60_000, config.bodyTimeoutMs),
    requestTimeout: config.bodyTimeoutMs + 5_000,
    connectionsCheckingInterval: 1_000,
    keepAliveTimeout: 5_000,
  };
  const server = serverOf(options, (req: IncomingMessage, res: ServerResponse) => app.onRequest(req, res));
  server.on('clientError', app.onClientError);
  server.on('checkExpectation', app.onExpectation);
  return { origin: await listen(server), keys: keysOf(app.keys), pids: [process.pid] };
}

const keysOf = (keys: Record<string, string>) => ({ load: keys.load, enterprise: keys.enterprise });

async function main(kind: string): Promise<{ origin: string; keys: Record<string, string>; pids: number[] }> {
  if (kind === 'reference' && TLS) return referenceOverTls();
  if (kind === 'reference') {
    const { startReferenceServer } = await import('../reference-server/app.ts');
    const reference = await startReferenceServer({ port: 0, host: '127.0.0.1', redisUrl: process.env.REDIS_URL || undefined });
    return { origin: new URL(reference.baseUrl).origin, keys: keysOf(reference.keys), pids: [process.pid] };
  }
  if (kind === 'deployment') {
    const { startDeployment } = await import('../reference-server/deployment/start.ts');
    const deployment = await startDeployment({ instances: Number(process.env.BENCH_INSTANCES ?? 3), redisUrl: process.env.REDIS_URL! });
    process.once('exit', () => void deployment.close());
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void deployment.close().then(() => process.exit(0)));
    process.stdin.once('end', () => void deployment.close().then(() => process.exit(0)));
    return { origin: new URL(deployment.baseUrl).origin, keys: keysOf(deployment.keys), pids: [deployment.primaryPid, ...deployment.pids] };
  }
  const sample = JSON.parse(process.env.BENCH_SAMPLE ?? '') as { status: number; body: string; headers: string[]; readBody: boolean };
  const body = Buffer.from(sample.body, 'base64');
  const { status, headers, readBody } = sample;
  const bare = serverOf(
    {},
    readBody
      ? (req, res) => {
          req.on('data', () => undefined);
          req.on('end', () => {
            res.writeHead(status, headers);
            res.end(body);
          });
        }
      : (_req, res) => {
          res.writeHead(status, headers);
          res.end(body);
        },
  );
  return { origin: await listen(bare), keys: {}, pids: [process.pid] };
}

const kind = process.env.BENCH_TARGET ?? 'reference';
if (kind !== 'deployment') {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(0));
  process.stdin.once('end', () => process.exit(0));
}
process.stdin.resume();
void main(kind).then((info) => process.stdout.write(`${JSON.stringify(info)}\n`));
