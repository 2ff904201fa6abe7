/**
 * The connection to the shared store of a multi-instance deployment (Redis, `REDIS_URL`).
 *
 * Spec: [Limits](spec/inventory-service.md#limits) — a limit belongs to the key, not to
 * the process that happens to answer; so are the stock levels. Every instance keeps its counters
 * and the inventory in one Redis.
 *
 * The client never queues or resends a command while disconnected: a rate-limit hit that was
 * resent could be counted twice, and a queued one would hang the request. A command that cannot
 * be sent, or gets no answer within `commandTimeoutMs`, fails at once; the caller answers 503
 * (`StoreUnavailableError`). The client reconnects in the background, so the server recovers by
 * itself when Redis returns.
 */
import { Redis } from 'ioredis';
import { StoreUnavailableError } from '../errors/api-error.ts';

export interface RedisConnectionOptions {
  /** Longest wait for one command's answer (default 2000 ms: an outage, not a busy host); past it the request gets 503. */
  commandTimeoutMs?: number;
  /** Longest wait for the first connection at start-up (default 5000 ms). */
  startupTimeoutMs?: number;
}

/** `redis://[:password@]host[:port][/db]`; the URL is never logged (it may hold a password). */
export async function connectRedis(url: string, options: RedisConnectionOptions = {}): Promise<Redis> {
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: options.commandTimeoutMs ?? 2_000,
    connectTimeout: 1_000,
    retryStrategy: (times) => Math.min(50 * times, 1_000),
  });
  // Errors surface on the commands (as 503); the 'error' event only reports reconnect attempts.
  client.on('error', () => undefined);
  const timeoutMs = options.startupTimeoutMs ?? 5_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.connect(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no connection within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (error) {
    client.disconnect();
    throw new Error(`cannot reach the Redis of REDIS_URL (${redisHost(url)}): ${(error as Error).message}`);
  } finally {
    clearTimeout(timer);
  }
  return client;
}

/** `host:port` of a Redis URL, without credentials (for messages). */
export function redisHost(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '6379'}`;
  } catch {
    return 'an invalid URL';
  }
}

/** Replies of a Redis that is up but cannot serve now (loading, busy script, failover, out of memory). */
const TRANSIENT_REPLY = /^(LOADING|BUSY|MASTERDOWN|READONLY|TRYAGAIN|CLUSTERDOWN|MISCONF|OOM)\b/;

/**
 * Maps a failed command to the error the request gets: a connection that is down, closed or too
 * slow, or a transient reply, is a 503 `StoreUnavailableError`; any other error reply (a script
 * error: a defect of this server) stays as it is and becomes a 500.
 */
export function storeError(error: unknown, what: string): unknown {
  const e = error as { name?: string; message?: string } | null;
  if (e?.name === 'ReplyError' && !TRANSIENT_REPLY.test(e.message ?? '')) return error;
  return new StoreUnavailableError(what);
}
