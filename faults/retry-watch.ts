/**
 * Watches `Retry-After` per key, as a server that bans would: after a 429, every request sent on
 * that key before its `Retry-After` has passed is *early* (spec, Limits rule 5: "Repeated requests
 * after a 429 may cause a temporary ban of the API key"). The fault proxy counts early requests
 * and bans per key in every run; with `strictBanMs` it also bans, on the first early request, for
 * that long (the staging simulator's strict ban).
 *
 * Keys stay in memory, never leave this module: counts are reported by label (`API_KEY`,
 * `RATE_LIMIT_KEY`, `LOAD_KEY` of the run's environment, `other` for any other token).
 */
import { parseHttpDate } from '../suites/lib/http-date.ts';

/** A header list in wire order (`[name, value]` pairs), as the proxy holds it. */
type HeaderList = Array<[string, string]>;

const get = (hs: HeaderList, name: string) => hs.find(([k]) => k.toLowerCase() === name)?.[1];

/**
 * The key a request's Authorization carries: a bearer token (any scheme case) or a bare key
 * without a scheme (a server may still charge, or ban, the key for it); `undefined` otherwise.
 */
export function bearerToken(hs: HeaderList): string | undefined {
  return get(hs, 'authorization')?.match(/^\s*(?:bearer\s+)?([^\s]+)\s*$/i)?.[1];
}

/**
 * Milliseconds a client must wait after receiving this 429, from its `Retry-After`: delay-seconds
 * (a decimal is read leniently), or an HTTP-date judged against the response's `Date` as the
 * suites do; `undefined` when absent or unreadable.
 */
export function retryAfterMs(hs: HeaderList, now = Date.now()): number | undefined {
  const v = get(hs, 'retry-after')?.trim();
  if (!v) return undefined;
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v) * 1000;
  const date = parseHttpDate(v, now);
  if (!date) return undefined;
  const basis = parseHttpDate(get(hs, 'date') ?? '', now)?.ms ?? now;
  return Math.max(0, date.ms - basis);
}

/** Early requests and bans per key label. */
export interface RetryStats {
  /** Requests sent on a key while a 429's `Retry-After` on it was pending. */
  early: Record<string, number>;
  /** Bans: 429s that refuse a key as banned (a `code` naming a ban, or the strict ban), counted once per ban. */
  bans: Record<string, number>;
  /** 429 responses per key. */
  refusals: Record<string, number>;
  /** Requests that reached the proxy, per key. */
  requests: Record<string, number>;
  /** POST …/messages answered 2xx: the messages the run queued on the target (spec, Endpoints 3). */
  messagesQueued?: number;
}

interface KeyState {
  pendingUntil: number;
  bannedUntil: number;
  /** The last rate-limit headers seen for the key (for the strict ban's own answers). */
  lastRateHeaders: HeaderList;
}

export interface RetryWatchOptions {
  /** The run's environment: its keys name the labels. */
  env?: Record<string, string | undefined>;
  /** Ban a key on its first early request, for this long (0 or unset: count only). */
  strictBanMs?: number;
}

/** A 429 the watcher answers itself for a banned key. */
export interface BanAnswer {
  status: 429;
  headers: HeaderList;
  body: Buffer;
}

export class RetryWatch {
  private readonly keys = new Map<string, KeyState>();
  private readonly stats: RetryStats = { early: {}, bans: {}, refusals: {}, requests: {} };
  private readonly labels: Map<string, string>;

  private readonly options: RetryWatchOptions;

  constructor(options: RetryWatchOptions = {}) {
    this.options = options;
    const env = options.env ?? {};
    this.labels = new Map((['API_KEY', 'RATE_LIMIT_KEY', 'LOAD_KEY'] as const).filter((n) => env[n]).map((n) => [env[n]!, n]));
  }

  private label(token: string): string {
    return this.labels.get(token) ?? 'other';
  }

  private state(token: string): KeyState {
    let s = this.keys.get(token);
    if (!s) this.keys.set(token, (s = { pendingUntil: 0, bannedUntil: 0, lastRateHeaders: [] }));
    return s;
  }

  private bump(kind: Exclude<keyof RetryStats, 'messagesQueued'>, token: string): void {
    const l = this.label(token);
    this.stats[kind][l] = (this.stats[kind][l] ?? 0) + 1;
  }

  /**
   * A request arrives on the key of `headers`: counts it when early. With a strict ban, returns the
   * 429 to answer instead of forwarding (the key is banned, or this early request bans it).
   */
  request(headers: HeaderList, now = Date.now()): BanAnswer | undefined {
    const token = bearerToken(headers);
    if (token === undefined) return undefined;
    const s = this.state(token);
    this.bump('requests', token);
    const early = now < s.pendingUntil;
    if (early) this.bump('early', token);
    if (!this.options.strictBanMs) return undefined;
    if (s.bannedUntil <= now && early) {
      s.bannedUntil = now + this.options.strictBanMs;
      this.bump('bans', token);
    }
    if (s.bannedUntil <= now) return undefined;
    const retryAfter = Math.ceil((s.bannedUntil - now) / 1000);
    const hs: HeaderList = s.lastRateHeaders.filter(([k]) => /^x-ratelimit-(limit)$/i.test(k));
    hs.push(['X-RateLimit-Remaining', '0'], ['X-RateLimit-Reset', String(Math.ceil(s.bannedUntil / 1000))]);
    hs.push(['Retry-After', String(retryAfter)], ['Date', new Date(now).toUTCString()], ['Content-Type', 'application/json']);
    s.pendingUntil = Math.max(s.pendingUntil, now + retryAfter * 1000);
    this.bump('refusals', token);
    return {
      status: 429,
      headers: hs,
      body: Buffer.from(JSON.stringify({ code: 'key_banned', message: 'Key temporarily banned', status: 429 })),
    };
  }

  /** A response leaves for the client on the key of `reqHeaders`: a 429 makes its `Retry-After` pending. */
  response(reqHeaders: HeaderList, status: number, headers: HeaderList, body?: Buffer, now = Date.now()): void {
    const token = bearerToken(reqHeaders);
    if (token === undefined) return;
    const s = this.state(token);
    if (headers.some(([k]) => /^x-ratelimit-limit$/i.test(k))) s.lastRateHeaders = headers.filter(([k]) => /^x-ratelimit-/i.test(k));
    if (status !== 429) return;
    this.bump('refusals', token);
    const wait = retryAfterMs(headers, now);
    if (wait !== undefined) s.pendingUntil = Math.max(s.pendingUntil, now + wait);
    let code = '';
    try {
      code = String((JSON.parse(body?.toString('utf8') ?? '') as { code?: unknown })?.code ?? '');
    } catch {
      /* not JSON: no ban code */
    }
    if (/ban/i.test(code)) {
      if (s.bannedUntil <= now) this.bump('bans', token);
      s.bannedUntil = Math.max(s.bannedUntil, now + (wait ?? 0));
    }
  }

  /** An answer leaves: a 2xx to POST …/messages is a message queued. */
  answered(method: string, path: string, status: number): void {
    if (method.toUpperCase() === 'POST' && /\/messages$/.test(path.split('?')[0]!) && status >= 200 && status <= 299)
      this.stats.messagesQueued = (this.stats.messagesQueued ?? 0) + 1;
  }

  /** Counts so far (a copy), by key label. */
  report(): RetryStats {
    return structuredClone(this.stats);
  }
}

/** Sum of one kind of count over every label. */
export function total(counts: Record<string, number>): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}
