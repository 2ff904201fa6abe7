/**
 * `startDeployment()`: a multi-instance reference deployment for tests, certify and the fault
 * matrix. It runs the cluster primary (`primary.ts`) as a child process, so each deployment has
 * its own primary and several can run side by side, and returns what `startReferenceServer`
 * returns (`baseUrl`, `apiUrl`, `keys`, `close`).
 *
 * Spec: see `cluster.ts`. Keys are read from the keys file here (never sent over a pipe).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { RunningReferenceServer } from '../app.ts';
import { DEFAULT_KEYS_FILE, type ConfigInput } from '../config.ts';
import { loadKeys } from '../fixtures.ts';

export interface DeploymentOptions {
  /** Server processes (default 3). */
  instances?: number;
  /** The shared Redis (`redis://127.0.0.1:<port>`). */
  redisUrl: string;
  /** Prefix of this deployment's Redis keys (default: a fresh one, so deployments never share state). */
  redisPrefix?: string;
  /** Each instance limits on its own, in memory (the broken deployment of the fault matrix). */
  perProcessLimiter?: boolean;
  /** Further settings of every instance (windows, ban, fixture files, `rateLimitFields` …); port and host are 0 and 127.0.0.1. */
  server?: Omit<ConfigInput, 'port' | 'host' | 'redisUrl' | 'redisPrefix' | 'instances'>;
  /** Longest wait for every instance to listen (default 30 s). */
  startTimeoutMs?: number;
}

export interface RunningDeployment extends RunningReferenceServer {
  instances: number;
  /** Process ids of the instances (not the primary). */
  pids: number[];
  /** Process id of the cluster primary (it accepts connections and hands them to the instances). */
  primaryPid: number;
}

// `.ts` in a clone (the primary then needs tsx's loader where Node does not strip types itself,
// before 22.18 and 23.6), `.js` in the compiled package.
const EXT = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
const PRIMARY_SCRIPT = fileURLToPath(new URL(`./primary${EXT}`, import.meta.url));
const STRIPS_TYPES = Boolean((process.features as { typescript?: unknown }).typescript);
const LOADER_ARGS = EXT === '.ts' && !STRIPS_TYPES ? ['--import', import.meta.resolve('tsx')] : [];

/** The environment variables of `server` options (see `config.ts` SETTINGS). */
export function settingsEnv(server: DeploymentOptions['server'] = {}): Record<string, string> {
  const env: Record<string, string> = {};
  const set = (name: string, value: unknown): void => {
    if (value !== undefined) env[name] = String(value);
  };
  set('RATE_WINDOW_MINUTE_MS', server.minuteWindowMs);
  set('RATE_WINDOW_DAY_MS', server.dayWindowMs);
  set('BAN_THRESHOLD', server.banThreshold);
  set('BAN_MS', server.banMs);
  set('ENTERPRISE_LIMIT_MINUTE', server.enterpriseLimits?.minute);
  set('ENTERPRISE_LIMIT_DAY', server.enterpriseLimits?.day);
  set('ANON_LIMIT_MINUTE', server.anonymousLimits?.minute);
  set('ANON_LIMIT_DAY', server.anonymousLimits?.day);
  set('MAX_BODY_BYTES', server.maxBodyBytes);
  set('BODY_TIMEOUT_MS', server.bodyTimeoutMs);
  set('INVENTORY_FILE', server.inventoryFile);
  set('KEYS_FILE', server.keysFile);
  if (server.rateLimitFields !== undefined) env.RATELIMIT_FIELDS = server.rateLimitFields ? 'on' : 'off';
  return env;
}

/** Settings of the reference server that are not passed down from the caller's environment. */
const SERVER_VARIABLES =
  /^(PORT|HOST|RATE_WINDOW_MINUTE_MS|RATE_WINDOW_DAY_MS|BAN_THRESHOLD|BAN_MS|ENTERPRISE_LIMIT_MINUTE|ENTERPRISE_LIMIT_DAY|ANON_LIMIT_MINUTE|ANON_LIMIT_DAY|MAX_BODY_BYTES|BODY_TIMEOUT_MS|INVENTORY_FILE|KEYS_FILE|REDIS_URL|REDIS_PREFIX|INSTANCES|RATELIMIT_FIELDS)$/;

/** The primary's command line (after the Node executable) and environment for `options`. */
export function primaryCommand(options: DeploymentOptions): { args: string[]; env: Record<string, string | undefined> } {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !SERVER_VARIABLES.test(name)));
  const env = {
    ...inherited,
    ...settingsEnv(options.server),
    PORT: '0',
    HOST: '127.0.0.1',
    REDIS_URL: options.redisUrl,
    REDIS_PREFIX: options.redisPrefix ?? `deployment-${randomUUID()}:`,
    INSTANCES: String(options.instances ?? 3),
  };
  const args = [...LOADER_ARGS, PRIMARY_SCRIPT, ...(options.perProcessLimiter ? ['--per-process-limiter'] : [])];
  return { args, env };
}

/** Starts the deployment; resolves once every instance listens on the one address. */
export async function startDeployment(options: DeploymentOptions): Promise<RunningDeployment> {
  const instances = options.instances ?? 3;
  const { args, env } = primaryCommand(options);
  const primary = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const timeoutMs = options.startTimeoutMs ?? 30_000;
  let started: { origin: string; pids: number[] };
  try {
    started = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`deployment: not listening within ${timeoutMs} ms`)), timeoutMs);
      primary.once('message', (message: { origin?: string; pids?: number[]; error?: string }) => {
        clearTimeout(timer);
        if (message.origin) resolve({ origin: message.origin, pids: message.pids ?? [] });
        else reject(new Error(`deployment: ${message.error ?? 'did not start'}`));
      });
      primary.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`deployment: the primary exited with ${code} before it listened`));
      });
    });
  } catch (error) {
    await stopPrimary(primary);
    throw error;
  }
  const keys = {} as Record<string, string>;
  for (const entry of loadKeys(options.server?.keysFile ?? DEFAULT_KEYS_FILE)) keys[entry.name] = entry.key;
  let closing: Promise<void> | undefined;
  return {
    baseUrl: `${started.origin}/v1`,
    apiUrl: `${started.origin}/quickstart`,
    keys: keys as RunningReferenceServer['keys'],
    instances,
    pids: started.pids,
    primaryPid: primary.pid!,
    close() {
      closing ??= stopPrimary(primary);
      return closing;
    },
  };
}

/** SIGTERM to the primary (it stops its workers), SIGKILL after 10 s. */
function stopPrimary(primary: ChildProcess): Promise<void> {
  if (primary.exitCode !== null || primary.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => primary.kill('SIGKILL'), 10_000);
    primary.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    primary.kill('SIGTERM');
  });
}
