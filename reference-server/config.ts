/**
 * Configuration: options of `startReferenceServer`, else environment variables, else defaults.
 * `npm start` also takes each variable as a flag (`PORT` → `--port`, `BAN_MS` → `--ban-ms`).
 * Invalid values fail start-up with a message naming the variable.
 */
import { fileURLToPath } from 'node:url';
import { DEFAULT_ANONYMOUS_LIMITS, DEFAULT_ENTERPRISE_LIMITS, type Limits } from './rate-limit/plans.ts';

export interface ResolvedConfig {
  port: number;
  host: string;
  minuteWindowMs: number;
  dayWindowMs: number;
  banThreshold: number;
  banMs: number;
  enterpriseLimits: Limits;
  anonymousLimits: Limits;
  maxBodyBytes: number;
  bodyTimeoutMs: number;
  inventoryFile: string;
  keysFile: string;
  /** Shared store of a multi-instance deployment; undefined: everything in this process. */
  redisUrl: string | undefined;
  /** Prefix of every Redis key (several deployments may share one Redis). */
  redisPrefix: string;
  /** Server processes `npm start` runs behind one address (more than 1 needs `redisUrl`). */
  instances: number;
  /** Also send the IETF `RateLimit` / `RateLimit-Policy` fields. */
  rateLimitFields: boolean;
  /** A request refused with 401 that carries a known key in another form counts against that key's limit. */
  countRefusedKeys: boolean;
}

/** One setting: its environment variable (the flag is derived), default and meaning. README lists these. */
export interface Setting {
  env: string;
  default: string;
  description: string;
}

export const DEFAULT_INVENTORY_FILE = fileURLToPath(new URL('../fixtures/inventory.yaml', import.meta.url));
export const DEFAULT_KEYS_FILE = fileURLToPath(new URL('../fixtures/keys.yaml', import.meta.url));

export const SETTINGS: readonly Setting[] = [
  { env: 'PORT', default: '8080', description: 'TCP port; 0 picks a free one' },
  { env: 'HOST', default: '127.0.0.1', description: 'interface to listen on' },
  { env: 'RATE_WINDOW_MINUTE_MS', default: '60000', description: 'length of the "per minute" window' },
  { env: 'RATE_WINDOW_DAY_MS', default: '86400000', description: 'length of the "per day" window' },
  { env: 'BAN_THRESHOLD', default: '10', description: "early retries (sent before a 429's Retry-After passed) that start a ban" },
  { env: 'BAN_MS', default: '600000', description: 'length of a ban' },
  {
    env: 'ENTERPRISE_LIMIT_MINUTE',
    default: String(DEFAULT_ENTERPRISE_LIMITS.minute),
    description: 'per-minute limit of enterprise keys without their own limits',
  },
  {
    env: 'ENTERPRISE_LIMIT_DAY',
    default: String(DEFAULT_ENTERPRISE_LIMITS.day),
    description: 'per-day limit of enterprise keys without their own limits',
  },
  {
    env: 'ANON_LIMIT_MINUTE',
    default: String(DEFAULT_ANONYMOUS_LIMITS.minute),
    description: 'per-minute limit of requests without a valid key, per client address',
  },
  {
    env: 'ANON_LIMIT_DAY',
    default: String(DEFAULT_ANONYMOUS_LIMITS.day),
    description: 'per-day limit of requests without a valid key, per client address',
  },
  { env: 'MAX_BODY_BYTES', default: '65536', description: 'larger request bodies get 413' },
  { env: 'BODY_TIMEOUT_MS', default: '10000', description: 'a request body not received within this time gets 408' },
  { env: 'INVENTORY_FILE', default: 'fixtures/inventory.yaml', description: 'seed inventory (YAML)' },
  { env: 'KEYS_FILE', default: 'fixtures/keys.yaml', description: 'API keys and plans (YAML)' },
  {
    env: 'REDIS_URL',
    default: 'none',
    description: 'redis://host:port: rate-limit counters and inventory on this Redis, shared by every instance (none: in this process)',
  },
  { env: 'REDIS_PREFIX', default: 'inventory-service:', description: 'prefix of every Redis key' },
  { env: 'INSTANCES', default: '1', description: 'server processes behind one address (npm start; more than 1 needs REDIS_URL)' },
  { env: 'RATELIMIT_FIELDS', default: 'off', description: 'on: also send the IETF RateLimit and RateLimit-Policy fields' },
  {
    env: 'COUNT_REFUSED_KEYS',
    default: 'off',
    description:
      "on: a request refused with 401 that carries a known key in another form (bare, another scheme, Basic) counts against that key's limit",
  },
];

/** `PORT` → `--port`. */
export const flagOf = (env: string): string => `--${env.toLowerCase().replace(/_/g, '-')}`;

export interface ConfigInput {
  port?: number;
  host?: string;
  minuteWindowMs?: number;
  dayWindowMs?: number;
  banThreshold?: number;
  banMs?: number;
  enterpriseLimits?: Limits;
  anonymousLimits?: Limits;
  maxBodyBytes?: number;
  bodyTimeoutMs?: number;
  inventoryFile?: string;
  keysFile?: string;
  redisUrl?: string;
  redisPrefix?: string;
  instances?: number;
  rateLimitFields?: boolean;
  countRefusedKeys?: boolean;
}

function onOff(name: string, value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  const v = String(value).trim().toLowerCase();
  if (['on', 'true', '1', 'yes'].includes(v)) return true;
  if (['off', 'false', '0', 'no', ''].includes(v)) return false;
  throw new Error(`reference-server: ${name} must be on or off (got ${JSON.stringify(value)})`);
}

function redisUrlOf(value: unknown): string | undefined {
  if (value === undefined || value === '' || value === 'none') return undefined;
  const url = String(value);
  if (!/^rediss?:\/\//.test(url)) throw new Error('reference-server: redisUrl (REDIS_URL) must be a redis:// or rediss:// URL');
  return url;
}

function int(name: string, value: unknown, min: number): number {
  const n = typeof value === 'string' ? (value.trim() === '' ? NaN : Number(value)) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < min) {
    throw new Error(`reference-server: ${name} must be an integer >= ${min} (got ${JSON.stringify(value)})`);
  }
  return n;
}

export function resolveConfig(options: ConfigInput = {}, env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  const pick = (option: unknown, variable: string): unknown => option ?? env[variable] ?? SETTINGS.find((s) => s.env === variable)!.default;
  const port = int('port (PORT)', pick(options.port, 'PORT'), 0);
  if (port > 65535) throw new Error('reference-server: port (PORT) must be <= 65535');
  return {
    port,
    host: String(options.host ?? env.HOST ?? '127.0.0.1'),
    minuteWindowMs: int('minuteWindowMs (RATE_WINDOW_MINUTE_MS)', pick(options.minuteWindowMs, 'RATE_WINDOW_MINUTE_MS'), 1),
    dayWindowMs: int('dayWindowMs (RATE_WINDOW_DAY_MS)', pick(options.dayWindowMs, 'RATE_WINDOW_DAY_MS'), 1),
    banThreshold: int('banThreshold (BAN_THRESHOLD)', pick(options.banThreshold, 'BAN_THRESHOLD'), 1),
    banMs: int('banMs (BAN_MS)', pick(options.banMs, 'BAN_MS'), 0),
    enterpriseLimits: {
      minute: int(
        'enterpriseLimits.minute (ENTERPRISE_LIMIT_MINUTE)',
        pick(options.enterpriseLimits?.minute, 'ENTERPRISE_LIMIT_MINUTE'),
        0,
      ),
      day: int('enterpriseLimits.day (ENTERPRISE_LIMIT_DAY)', pick(options.enterpriseLimits?.day, 'ENTERPRISE_LIMIT_DAY'), 0),
    },
    anonymousLimits: {
      minute: int('anonymousLimits.minute (ANON_LIMIT_MINUTE)', pick(options.anonymousLimits?.minute, 'ANON_LIMIT_MINUTE'), 0),
      day: int('anonymousLimits.day (ANON_LIMIT_DAY)', pick(options.anonymousLimits?.day, 'ANON_LIMIT_DAY'), 0),
    },
    maxBodyBytes: int('maxBodyBytes (MAX_BODY_BYTES)', pick(options.maxBodyBytes, 'MAX_BODY_BYTES'), 0),
    bodyTimeoutMs: int('bodyTimeoutMs (BODY_TIMEOUT_MS)', pick(options.bodyTimeoutMs, 'BODY_TIMEOUT_MS'), 1),
    inventoryFile: options.inventoryFile ?? env.INVENTORY_FILE ?? DEFAULT_INVENTORY_FILE,
    keysFile: options.keysFile ?? env.KEYS_FILE ?? DEFAULT_KEYS_FILE,
    redisUrl: redisUrlOf(options.redisUrl ?? env.REDIS_URL),
    redisPrefix: String(options.redisPrefix ?? env.REDIS_PREFIX ?? 'inventory-service:'),
    instances: int('instances (INSTANCES)', pick(options.instances, 'INSTANCES'), 1),
    rateLimitFields: onOff('rateLimitFields (RATELIMIT_FIELDS)', pick(options.rateLimitFields, 'RATELIMIT_FIELDS')),
    countRefusedKeys: onOff('countRefusedKeys (COUNT_REFUSED_KEYS)', pick(options.countRefusedKeys, 'COUNT_REFUSED_KEYS')),
  };
}
