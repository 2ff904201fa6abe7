/**
 * A `RateLimitStore` on Redis, shared by every instance of a deployment: `decide()` of
 * `policy.ts`, rule for rule, as one Lua script per request, so a hit is atomic across processes
 * (Redis runs one script at a time; no two requests of one identity interleave between reading
 * and writing a counter).
 *
 * Spec: [Limits](spec/inventory-service.md#limits) rules 1–5. Same fixed windows aligned
 * to the epoch, same 429 / `Retry-After` / ban as the in-memory store, so every instance answers
 * the same limits, Reset and Retry-After, and a ban earned on one instance holds on all.
 *
 * Time: by default the script reads Redis's own clock (`TIME`), so instances whose clocks drift
 * still agree on window boundaries; `clock: 'caller'` uses the `now` passed in (tests).
 * State: one string per identity (`<prefix>rl:<identity>` = `retryAt:strikes:bannedUntil:` then
 * `start:count` per window, epoch ms), read with one GET and written with one SET that expires it
 * when its last window, pending retry and ban are over. A Redis that is down or too slow yields a 503 (`StoreUnavailableError`),
 * never admission without counting.
 *
 * Why a script and not rate-limiter-flexible: its `RateLimiterRedis` is one atomic script too, but
 * its windows start at a key's first request (not at epoch-aligned boundaries), a minute and a day
 * limit need two limiters (a refusal by the day limiter still spends a minute point: a refused
 * request would count), and its block is "N points over", not "N retries before Retry-After".
 * `npm run bench` measures both (`BENCH_SCENARIOS=store`).
 */
import type { Redis } from 'ioredis';
import { storeError } from '../shared-state/redis.ts';
import type { RateDecision, RatePolicy } from './policy.ts';
import type { RateLimitStore } from './store.ts';

/**
 * KEYS[1]: the identity's hash. ARGV: now (epoch ms, or -1 for Redis's clock), banThreshold,
 * banMs, n, then limit and ms of each of the n windows. Returns {outcome (0 admitted, 1 limited,
 * 2 banned), limit, remaining, resetSeconds, retryAfterSeconds}. Mirrors `decide()` line by line.
 */
export const DECIDE_LUA = `
local now = tonumber(ARGV[1])
if now < 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local banThreshold = tonumber(ARGV[2])
local banMs = tonumber(ARGV[3])
local n = tonumber(ARGV[4])
local key = KEYS[1]
local v = {}
local raw = redis.call('GET', key)
if raw then
  for x in string.gmatch(raw, '[^:]+') do v[#v + 1] = tonumber(x) end
end
local retryAt = v[1] or 0
local strikes = v[2] or 0
local bannedUntil = v[3] or 0
local limits, lengths, starts, counts = {}, {}, {}, {}
for i = 1, n do
  limits[i] = tonumber(ARGV[3 + 2 * i])
  lengths[i] = tonumber(ARGV[4 + 2 * i])
  starts[i] = v[2 + 2 * i] or -1
  counts[i] = v[3 + 2 * i] or 0
end
local function save()
  local last = math.max(retryAt, bannedUntil)
  local parts = {string.format('%.0f:%.0f:%.0f', retryAt, strikes, bannedUntil)}
  for i = 1, n do
    parts[#parts + 1] = string.format('%.0f:%.0f', starts[i], counts[i])
    last = math.max(last, starts[i] + lengths[i])
  end
  redis.call('SET', key, table.concat(parts, ':'), 'PX', string.format('%.0f', math.max(1000, last - now + 1000)))
end
local function banned()
  return {2, limits[1], 0, math.ceil(bannedUntil / 1000), math.ceil((bannedUntil - now) / 1000)}
end
if bannedUntil ~= 0 then
  if now < bannedUntil then return banned() end
  bannedUntil = 0
  strikes = 0
  retryAt = 0
end
local exhausted, exhaustedReset = 0, 0
for i = 1, n do
  local start = now - (now % lengths[i])
  if starts[i] ~= start then
    starts[i] = start
    counts[i] = 0
  end
  if counts[i] >= limits[i] and start + lengths[i] > exhaustedReset then
    exhausted = i
    exhaustedReset = start + lengths[i]
  end
end
if exhausted > 0 then
  if now < retryAt then
    strikes = strikes + 1
    if strikes >= banThreshold then
      bannedUntil = math.max(now + banMs, exhaustedReset)
      save()
      return banned()
    end
  else
    strikes = 0
  end
  retryAt = exhaustedReset
  save()
  return {1, limits[exhausted], 0, math.ceil(exhaustedReset / 1000), math.ceil((exhaustedReset - now) / 1000)}
end
local shown, shownRemaining = 1, math.huge
for i = 1, n do
  counts[i] = counts[i] + 1
  local remaining = limits[i] - counts[i]
  if remaining < shownRemaining then
    shown = i
    shownRemaining = remaining
  end
end
strikes = 0
save()
return {0, limits[shown], shownRemaining, math.ceil((starts[shown] + lengths[shown]) / 1000), 0}
`;

const OUTCOMES = ['admitted', 'limited', 'banned'] as const;

type DecideCommand = (key: string, ...args: (string | number)[]) => Promise<number[]>;

export interface RedisRateLimitStoreOptions {
  /** Prefix of every key this store writes (default `inventory-service:`). */
  prefix?: string;
  /** `redis` (default): the script reads Redis's clock; `caller`: the `now` given to `hit`. */
  clock?: 'redis' | 'caller';
}

/** The shared limiter. The client is the caller's: `close()` leaves it open. */
export class RedisRateLimitStore implements RateLimitStore {
  private readonly decideScript: DecideCommand;
  private readonly prefix: string;
  private readonly useRedisClock: boolean;

  constructor(client: Redis, options: RedisRateLimitStoreOptions = {}) {
    this.prefix = `${options.prefix ?? 'inventory-service:'}rl:`;
    this.useRedisClock = (options.clock ?? 'redis') === 'redis';
    if (typeof (client as unknown as { rateLimitDecide?: unknown }).rateLimitDecide !== 'function') {
      client.defineCommand('rateLimitDecide', { numberOfKeys: 1, lua: DECIDE_LUA });
    }
    const command = (client as unknown as { rateLimitDecide: DecideCommand }).rateLimitDecide;
    this.decideScript = command.bind(client);
  }

  async hit(identity: string, policy: RatePolicy, now: number): Promise<RateDecision> {
    const args: (string | number)[] = [this.useRedisClock ? -1 : now, policy.banThreshold, policy.banMs, policy.windows.length];
    for (const w of policy.windows) args.push(w.limit, w.ms);
    let reply: number[];
    try {
      reply = await this.decideScript(this.prefix + identity, ...args);
    } catch (error) {
      throw storeError(error, 'rate-limit store');
    }
    return {
      outcome: OUTCOMES[reply[0]],
      limit: reply[1],
      remaining: reply[2],
      resetSeconds: reply[3],
      retryAfterSeconds: reply[4],
    };
  }
}
