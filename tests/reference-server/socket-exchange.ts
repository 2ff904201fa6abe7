/** A reference app on a plain node:http server and raw-socket exchanges with it, for the body reader's tests. */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { createReferenceApp, MemoryRateLimitStore } from '../../reference-server/app.ts';
import { resolveConfig } from '../../reference-server/config.ts';
import type { RateLimitStore } from '../../reference-server/rate-limit/store.ts';
import { sleep } from './helpers.ts';

/** Polls `done` every 10 ms; throws naming `what` after `ms`. */
export async function within(ms: number, what: string, done: () => boolean): Promise<void> {
  for (const end = Date.now() + ms; !done(); await sleep(10)) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
  }
}

export type App = ReturnType<typeof createReferenceApp>;

/** What the server saw of one request: the request and its response. */
export interface Seen {
  req: IncomingMessage;
  res: ServerResponse;
}

/** A reference app on a plain node:http server (port 0); `seen` gets every request object; `seenAll` what the server saw of each. */
export async function serve(
  options: { bodyTimeoutMs: number; store?: RateLimitStore },
  body: (port: number, app: App, seen: IncomingMessage[], seenAll: Seen[]) => Promise<void>,
): Promise<void> {
  const config = resolveConfig({
    port: 0,
    host: '127.0.0.1',
    redisUrl: 'none',
    bodyTimeoutMs: options.bodyTimeoutMs,
    minuteWindowMs: 600_000,
  });
  const app = createReferenceApp(config, options.store ?? new MemoryRateLimitStore());
  const seen: IncomingMessage[] = [];
  const seenAll: Seen[] = [];
  const server: Server = createServer({ requireHostHeader: false }, (req, res) => {
    seen.push(req);
    seenAll.push({ req, res });
    app.onRequest(req, res);
  });
  server.on('clientError', app.onClientError);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await body((server.address() as AddressInfo).port, app, seen, seenAll);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

export const patchHead = (key: string, length: number | 'chunked', extra = ''): string =>
  `PATCH /v1/inventory/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
  `${length === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${length}`}\r\n${extra}\r\n`;

/** A step of `exchange`: bytes to write, a pause in ms, or a condition to wait for (checked every 5 ms, until the deadline). */
export type Step = string | number | (() => boolean);

/** Writes `steps` on a fresh socket; resolves with what came back once `answers` responses arrived or the socket closed. */
export function exchange(port: number, steps: Step[], answers: number, deadlineMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    const count = (): number => (got.match(/HTTP\/1\.1 [1-5]\d\d /g) ?? []).filter((s) => !s.startsWith('HTTP/1.1 100')).length;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no ${answers} answer(s) within ${deadlineMs} ms; got ${JSON.stringify(got)}`));
    }, deadlineMs);
    const settle = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(got);
    };
    socket.on('data', (c: Buffer) => {
      got += c.toString('latin1');
      if (count() >= answers) settle();
    });
    socket.on('error', () => undefined);
    socket.on('close', settle);
    void (async () => {
      for (const step of steps) {
        if (typeof step === 'number') await sleep(step);
        else if (typeof step === 'function') while (!step() && !socket.destroyed) await sleep(5);
        else socket.write(step);
      }
    })();
  });
}

export const statuses = (raw: string): number[] =>
  [...raw.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1])).filter((s) => s !== 100);

export const ignore = (): void => undefined;

/** A valid PATCH body. */
export const B = '{"quantity":7}';
