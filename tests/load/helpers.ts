/**
 * Small servers for the load tests, on 127.0.0.1 and port 0: inventories that answer in one way
 * the load checks must catch (slow, 5xx, invalid bodies, lost updates, unanswered requests) or
 * must accept (Connection: close on every response, pretty-printed JSON, 300 pets), over http or
 * https; and a recorder around a limiter store of the reference server that counts requests sent
 * while a 429 was pending, and bans.
 */
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { test } from '../test.ts';
import { MemoryRateLimitStore, type RateDecision, type RateLimitStore, type RatePolicy } from '../../reference-server/app.ts';
import { startPacerCoordinator, type PacerCoordinator } from '../../suites/pacing/coordinator.ts';
import { pacingClient, type PacingClient } from '../../suites/pacing/client.ts';
import type { CapacityConfig } from '../../suites/load/capacity-check.ts';
import { readSettings } from '../../settings/index.ts';

export interface FakeApi {
  /** e.g. `http://127.0.0.1:40000/v1` */
  baseUrl: string;
  /** Requests received, by method. */
  counts: Record<string, number>;
  /** `Authorization` values received (the TLS tests check that none arrived). */
  authorizations: string[];
  /** TLS handshakes the server saw fail (the client refused the certificate). */
  tlsFailures: number;
  close(): Promise<void>;
}

export type Handler = (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void;

const TLS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/tls');
/** The test TLS material (tests/fixtures/tls/README.md). */
export const TLS = {
  ca: () => fs.readFileSync(path.join(TLS_DIR, 'ca.pem'), 'utf8'),
  caFile: path.join(TLS_DIR, 'ca.pem'),
  server: () => ({ cert: fs.readFileSync(path.join(TLS_DIR, 'server.pem')), key: fs.readFileSync(path.join(TLS_DIR, 'server-key.pem')) }),
  untrusted: () => ({
    cert: fs.readFileSync(path.join(TLS_DIR, 'untrusted.pem')),
    key: fs.readFileSync(path.join(TLS_DIR, 'untrusted-key.pem')),
  }),
};

/** Rate-limit headers of a key that never runs out. */
export function rateHeaders(): Record<string, string> {
  return {
    'X-RateLimit-Limit': '1000000',
    'X-RateLimit-Remaining': '999999',
    'X-RateLimit-Reset': String(Math.ceil(Date.now() / 1000) + 60),
  };
}

export interface JsonStyle {
  /** `Connection: close` on every response (HTTP/1.1 allows it; the client reconnects). */
  close?: boolean;
  /** Pretty-printed JSON bodies. */
  pretty?: boolean;
}

export function json(
  res: http.ServerResponse,
  status: number,
  value: unknown,
  extra: Record<string, string> = {},
  style: JsonStyle = {},
): void {
  res.writeHead(status, {
    'Content-Type': 'application/json',
    ...rateHeaders(),
    ...(style.close ? { Connection: 'close' } : {}),
    ...extra,
  });
  res.end(style.pretty ? JSON.stringify(value, null, 2) : JSON.stringify(value));
}

/** Starts `handler` on 127.0.0.1, port 0; over https with `tls` (a certificate and its key). */
export async function fakeApi(handler: Handler, tls?: { cert: Buffer; key: Buffer }): Promise<FakeApi> {
  const counts: Record<string, number> = {};
  const authorizations: string[] = [];
  const listener: http.RequestListener = (req, res) => {
    counts[req.method ?? '?'] = (counts[req.method ?? '?'] ?? 0) + 1;
    if (req.headers.authorization) authorizations.push(req.headers.authorization);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handler(req, Buffer.concat(chunks).toString('utf8'), res));
  };
  const server = tls ? https.createServer(tls, listener) : http.createServer(listener);
  const api: FakeApi = { baseUrl: '', counts, authorizations, tlsFailures: 0, close: async () => undefined };
  server.on('tlsClientError', () => api.tlsFailures++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  api.baseUrl = `${tls ? 'https' : 'http'}://127.0.0.1:${port}/v1`;
  api.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return api;
}

export interface InventoryOptions extends JsonStyle {
  delayMs?: number;
  brokenUpdate?: boolean;
  badItem?: boolean;
  status?: number;
  /** Pets in the store (default 2). */
  pets?: number;
  /** PATCH answers the whole list instead of the updated item (a deviation). */
  patchAnswersList?: boolean;
  /** Conformant, on a shared deployment: right after each update another client writes the pet (4242, 4243, …). */
  anotherClientWrites?: boolean;
}

/** An inventory of a few pets (or `pets` of them): list and update, optionally with a twist. */
export function inventoryHandler(options: InventoryOptions = {}): Handler {
  const items =
    options.pets === undefined
      ? [
          { petId: 1, quantity: 12, status: 'available' },
          { petId: 2, quantity: 0, status: 'sold' },
        ]
      : Array.from({ length: options.pets }, (_, i) => ({
          petId: i + 1,
          quantity: i % 7,
          status: ['available', 'pending', 'sold'][i % 3],
        }));
  const style = { close: options.close, pretty: options.pretty };
  let foreignWrites = 0;
  return (req, body, res) => {
    const answer = () => {
      if (options.status) return json(res, options.status, { code: 'boom', message: 'failed', status: options.status }, {}, style);
      const path = (req.url ?? '').split('?')[0];
      if (req.method === 'GET' && path === '/v1/inventory') {
        return json(res, 200, options.badItem ? [{ petId: 1, quantity: '12', status: 'available' }] : items, {}, style);
      }
      const m = /^\/v1\/inventory\/(\d+)$/.exec(path);
      if (req.method === 'PATCH' && m) {
        const item = items.find((i) => String(i.petId) === m[1]);
        if (!item) return json(res, 404, { code: 'not_found', message: 'no such pet', status: 404 }, {}, style);
        const quantity = (JSON.parse(body) as { quantity: number }).quantity;
        item.quantity = options.brokenUpdate ? quantity + 1 : quantity;
        json(res, 200, options.patchAnswersList ? items : { ...item }, {}, style);
        if (options.anotherClientWrites) item.quantity = 4242 + foreignWrites++;
        return;
      }
      return json(res, 404, { code: 'not_found', message: 'no route', status: 404 }, {}, style);
    };
    if (options.delayMs) setTimeout(answer, options.delayMs);
    else answer();
  };
}

export interface Decided {
  identity: string;
  now: number;
  decision: RateDecision;
}

/**
 * Wraps a store and records every decision, so a test can count the requests a key sent while a
 * 429 on it was pending (`early`) and the bans it earned.
 */
export class RecordingStore implements RateLimitStore {
  readonly log: Decided[] = [];
  readonly inner: RateLimitStore;
  constructor(inner: RateLimitStore = new MemoryRateLimitStore()) {
    this.inner = inner;
  }

  async hit(identity: string, policy: RatePolicy, now: number): Promise<RateDecision> {
    const decision = await this.inner.hit(identity, policy, now);
    this.log.push({ identity, now, decision });
    return decision;
  }

  of(identity: string): Decided[] {
    return this.log.filter((e) => e.identity === identity);
  }

  /**
   * Requests of `identity` that arrived before the Retry-After of an earlier refusal had passed;
   * with `from`, only those among its requests from that one on (in the order they were decided),
   * measured against the refusals among them alone: a client that starts at `from` cannot know of
   * the 429s another client met before it, whose rounded-up Retry-After may end later than its own.
   */
  early(identity: string, from = 0): number {
    let until = 0;
    let n = 0;
    for (const e of this.of(identity)
      .slice(from)
      .sort((a, b) => a.now - b.now)) {
      if (e.now < until) n++;
      if (e.decision.outcome !== 'admitted') until = Math.max(until, e.now + e.decision.retryAfterSeconds * 1000);
    }
    return n;
  }

  bans(identity: string): number {
    return this.of(identity).filter((e) => e.decision.outcome === 'banned').length;
  }
}

/** A run-wide pacer of its own (a coordinator on 127.0.0.1) for one test, as certify starts one per run. */
export interface TestPacer {
  client: PacingClient;
  coordinator: PacerCoordinator;
  close(): Promise<void>;
}

export async function testPacer(maxWaitS = 60): Promise<TestPacer> {
  const coordinator = await startPacerCoordinator({ maxWaitMs: maxWaitS * 1000, reserve: 3 });
  return { client: pacingClient(coordinator.url), coordinator, close: () => coordinator.close() };
}

/** One pacer per test of the file that calls it: `pacer()` is the current test's client. */
export function pacerPerTest(maxWaitS = 60): () => PacingClient {
  let current: TestPacer | undefined;
  test.beforeEach(async () => {
    current = await testPacer(maxWaitS);
  });
  test.afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return () => {
    if (!current) throw new Error('pacerPerTest: no test is running');
    return current.client;
  };
}

/** A short capacity run on loopback (1 s, 150 per second), on the pacer of the test that calls it. */
export function capacityConfig(pacer: PacingClient, extra: Partial<CapacityConfig> = {}): CapacityConfig {
  return {
    baseUrl: 'http://127.0.0.1:1/v1',
    loadKey: 'test-load-key-0123456789',
    mode: 'list',
    durationS: 1,
    ratePerS: 150,
    connections: 16,
    maxRequests: 20_000,
    timeoutS: 5,
    loopbackOnly: true,
    maxRetryAfterS: readSettings({}).values.MAX_RETRY_AFTER_S,
    pacer,
    progress: () => undefined,
    ...extra,
  };
}
