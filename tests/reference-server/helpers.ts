/**
 * Helpers of the reference server's own tests: start a server on port 0 with short windows, send
 * exact requests (raw headers, duplicates, bodies) over `node:http` or a raw socket, and read the
 * answer with int64-safe JSON; run `npm start` as a user does.
 */
import { spawn } from 'node:child_process';
import { request as httpRequest, type Agent, type OutgoingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { expect } from '@playwright/test';
import { startReferenceServer, type ReferenceServerOptions, type RunningReferenceServer } from '../../reference-server/app.ts';
import { validate } from '../../schemas/index.ts';
import { parseJson } from '../../suites/lib/json.ts';

export { parseJson, validate };

/** Short windows so tests that exhaust a limit finish fast. */
export const SHORT: ReferenceServerOptions = { port: 0, host: '127.0.0.1', minuteWindowMs: 60_000, dayWindowMs: 86_400_000 };

export async function withServer<T>(options: ReferenceServerOptions, body: (server: RunningReferenceServer) => Promise<T>): Promise<T> {
  const server = await startReferenceServer({ ...SHORT, ...options });
  try {
    return await body(server);
  } finally {
    await server.close();
  }
}

export interface Reply {
  status: number;
  /** Lower-case names; repeated headers joined as node does. */
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json(): unknown;
}

export interface CallOptions {
  headers?: OutgoingHttpHeaders;
  body?: string | Buffer;
  agent?: Agent | false;
}

/** One request to `origin + path` (origin = the server's `http://host:port`). */
export function call(origin: string, method: string, path: string, options: CallOptions = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const url = new URL(origin);
    const req = httpRequest(
      { host: url.hostname, port: url.port, method, path, headers: options.headers ?? {}, agent: options.agent ?? false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => parseJson(text) });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(15_000, () => req.destroy(new Error(`no answer to ${method} ${path} within 15 s`)));
    req.end(options.body);
  });
}

/** Sends `raw` bytes on a fresh socket and returns everything received until the server closes it. */
export function rawExchange(
  origin: string,
  raw: string | Buffer,
  options: { endAfterWrite?: boolean; timeoutMs?: number } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const url = new URL(origin);
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`raw exchange: no close within ${options.timeoutMs ?? 15_000} ms; got ${Buffer.concat(chunks).toString()}`));
    }, options.timeoutMs ?? 15_000);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('latin1'));
    });
    socket.write(raw);
    if (options.endAfterWrite) socket.end();
  });
}

/** Splits a raw HTTP/1.1 response into status, lower-cased headers and body. */
export function parseRaw(raw: string): { status: number; headers: Record<string, string>; body: string } {
  const end = raw.indexOf('\r\n\r\n');
  const [statusLine, ...lines] = raw.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: raw.slice(end + 4) };
}

export const origin = (server: RunningReferenceServer): string => new URL(server.baseUrl).origin;
export const bearer = (key: string): OutgoingHttpHeaders => ({ authorization: `Bearer ${key}` });

/** Asserts the spec's Error body: `{code, message, status}` with `status` = HTTP status, JSON content type. */
export function expectErrorBody(
  reply: { status: number; headers: Record<string, unknown>; text: string },
  status: number,
  code?: string,
): void {
  const context = `response ${reply.status} ${reply.text}`;
  expect(reply.status, context).toBe(status);
  expect(String(reply.headers['content-type']), context).toMatch(/^application\/json/i);
  const body = JSON.parse(reply.text) as Record<string, unknown>;
  const check = validate('Error', body);
  expect(check.errors, context).toEqual([]);
  expect(body.status, context).toBe(status);
  expect(typeof body.code).toBe('string');
  expect(typeof body.message).toBe('string');
  expect((body.message as string).length).toBeGreaterThan(0);
  if (code !== undefined) expect(body.code, context).toBe(code);
}

/** Asserts the three rate-limit headers: integers, Reset in epoch seconds (not a delta, not ms). */
export function expectRateHeaders(headers: Record<string, unknown>, context = ''): { limit: number; remaining: number; reset: number } {
  const values = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'].map((name) => {
    const value = headers[name];
    expect(typeof value, `${context} ${name}`).toBe('string');
    expect(value as string, `${context} ${name}`).toMatch(/^[0-9]+$/);
    return Number(value);
  });
  const [limit, remaining, reset] = values;
  expect(remaining, context).toBeLessThanOrEqual(limit);
  expect(reset, `${context} X-RateLimit-Reset is epoch seconds`).toBeGreaterThan(1e9);
  expect(reset, `${context} X-RateLimit-Reset is epoch seconds`).toBeLessThan(1e11);
  expect(reset * 1000, `${context} X-RateLimit-Reset is not in the past`).toBeGreaterThanOrEqual(Date.now() - 1000);
  return { limit, remaining, reset };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits for the next window of `windowMs` (windows start at multiples of it, as the reference
 * server's do) when less than `needMs` of the current one is left, so that a sequence of requests
 * that counts on one window is not split by a boundary, however slow the runner.
 */
export async function freshWindow(windowMs: number, needMs: number): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < needMs) await sleep(left + 50);
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Started {
  lines: string[];
  stderr: string;
  code: number | null;
}

/**
 * Runs `npm start -- <args>` in its own process group, collects stdout until `untilLines` lines
 * arrived (or it exits), runs `whileUp`, then stops the group.
 */
export async function npmStart(
  args: string[],
  env: Record<string, string>,
  untilLines: number,
  whileUp?: (lines: string[]) => Promise<void>,
): Promise<Started> {
  const child = spawn('npm', ['start', '--silent', '--', ...args], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', REDIS_URL: '', INSTANCES: '1', RATELIMIT_FIELDS: 'off', ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines = (): string[] => stdout.split('\n').filter((l) => l.trim() !== '');
  try {
    const deadline = Date.now() + 45_000;
    let code: number | null | undefined;
    void exited.then((c) => (code = c));
    while (lines().length < untilLines && code === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    if (code === undefined && whileUp) await whileUp(lines());
    return { lines: lines(), stderr, code: code ?? null };
  } finally {
    if (child.exitCode === null && child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        /* already gone */
      }
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    }
  }
}
