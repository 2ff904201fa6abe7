/**
 * The reference server: `startReferenceServer()`.
 *
 * Spec: [Inventory Service Specification](spec/inventory-service.md). One `node:http`
 * listener serves the inventory under `/v1` ({base_url}) and the quickstart under `/quickstart`
 * ({api_url}). Each request goes through the same steps, in this order:
 *
 * 1. route the target (`http/router.ts`), so route headers such as `Deprecation` are known;
 * 2. authenticate (`auth/bearer.ts`): the identity is the key, or the client address without one;
 * 3. count it against the identity's limits (`rate-limit/`): a refused request gets 429 and is not executed;
 * 4. 401 without a valid key; 400/414 for a bad target; 404 unknown path; 405 unknown method;
 * 5. run the operation (`inventory/`, `messages/`, `other-operations/`).
 *
 * Every failure goes through the central error handler (`errors/handler.ts`); every response
 * carries `X-RateLimit-*` (`http/response.ts`).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { authenticate, keyCarried } from './auth/bearer.ts';
import { KeyRing, type ApiKeyRecord } from './auth/keys.ts';
import { resolveConfig, type ConfigInput, type ResolvedConfig } from './config.ts';
import { ApiError, ErrorCode } from './errors/api-error.ts';
import { sendError } from './errors/handler.ts';
import { send } from './http/response.ts';
import { loadInventorySeed, loadKeys } from './fixtures.ts';
import { answerClientError } from './http/client-error.ts';
import { BodyReader } from './http/body.ts';
import { lingerOnClose } from './http/linger.ts';
import type { AppState, Exchange } from './http/exchange.ts';
import { Router, type RouteDef, type RouteMatch } from './http/router.ts';
import { listInventory, updateInventory } from './inventory/routes.ts';
import { Inventory, type InventoryStore } from './inventory/store.ts';
import { sendMessage } from './messages/routes.ts';
import { listOrders } from './other-operations/orders.ts';
import { getPetById } from './other-operations/pets.ts';
import { PLAN_LIMITS, type Limits, type Plan } from './rate-limit/plans.ts';
import type { RateDecision, RatePolicy } from './rate-limit/policy.ts';
import { ietfRateLimitFields } from './rate-limit/ietf-fields.ts';
import { refusalBody } from './rate-limit/refusal.ts';
import { MemoryRateLimitStore, type RateLimitStore } from './rate-limit/store.ts';
import { deprecationHeaders } from './versioning/deprecation.ts';

export type { RateLimitStore } from './rate-limit/store.ts';
export type { RateDecision, RatePolicy, RateState } from './rate-limit/policy.ts';
export { decide, newRateState } from './rate-limit/policy.ts';
export { MemoryRateLimitStore } from './rate-limit/store.ts';
export type { InventoryStore } from './inventory/store.ts';

/** Options of `startReferenceServer`; each falls back to its environment variable, then its default (see `config.ts`). */
export interface ReferenceServerOptions extends ConfigInput {
  /** Limiter storage; default in-memory (exact under concurrency), or on Redis with `redisUrl`. */
  store?: RateLimitStore;
  /** Stock levels; default in-memory, or on Redis with `redisUrl`. */
  inventory?: InventoryStore;
  /**
   * With `redisUrl`: `reset` (default) writes the seed quantities over what Redis holds; `keep`
   * only adds missing ones (an instance joining a running deployment).
   */
  redisSeed?: 'reset' | 'keep';
}

export interface RunningReferenceServer {
  /** e.g. `http://127.0.0.1:8080/v1` */
  baseUrl: string;
  /** e.g. `http://127.0.0.1:8080/quickstart` (POST `${apiUrl}/messages`) */
  apiUrl: string;
  keys: { free: string; pro: string; business: string; enterprise: string; load: string };
  close(): Promise<void>;
}

/** The demo keys every server must have (`fixtures/keys.yaml`). */
export const REQUIRED_KEY_NAMES = ['free', 'pro', 'business', 'enterprise', 'load'] as const;

/** The routes: the spec's endpoints plus the named-only operations. */
export function routes(now: number): RouteDef[] {
  return [
    { path: '/v1/inventory', operations: { GET: { id: 'listInventory', handler: listInventory } } },
    { path: '/v1/inventory/{petId}', operations: { PATCH: { id: 'updateInventory', handler: updateInventory } } },
    { path: '/quickstart/messages', operations: { POST: { id: 'sendMessage', handler: sendMessage } } },
    { path: '/v1/pets/{petId}', operations: { GET: { id: 'getPetById', handler: getPetById } }, headers: deprecationHeaders(now) },
    { path: '/v1/store/orders', operations: { GET: { id: 'listOrders', handler: listOrders } } },
  ];
}

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown }).then === 'function';
}

/** The rate policy of `limits` under the configured windows and ban. */
function policyOf(config: ResolvedConfig, limits: Limits): RatePolicy {
  return {
    windows: [
      { name: 'minute', limit: limits.minute, ms: config.minuteWindowMs },
      { name: 'day', limit: limits.day, ms: config.dayWindowMs },
    ],
    banThreshold: config.banThreshold,
    banMs: config.banMs,
  };
}

/** The key ring of `config.keysFile` and the raw keys by name; every name of REQUIRED_KEY_NAMES must be there. */
function keyRingOf(config: ResolvedConfig): { keyRing: KeyRing; keys: Record<string, string> } {
  const planLimits = (plan: Plan): Limits => (plan === 'enterprise' ? config.enterpriseLimits : PLAN_LIMITS[plan]);
  const keys = {} as Record<string, string>;
  const keyRing = new KeyRing(
    loadKeys(config.keysFile).map((entry) => {
      keys[entry.name] = entry.key;
      const record: ApiKeyRecord = {
        name: entry.name,
        plan: entry.plan,
        identity: `key:${entry.name}`,
        policy: policyOf(config, entry.limits ?? planLimits(entry.plan)),
      };
      return { key: entry.key, record };
    }),
  );
  for (const name of REQUIRED_KEY_NAMES) {
    if (!(name in keys)) throw new Error(`${config.keysFile}: no key named "${name}"`);
  }
  return { keyRing, keys };
}

/** The headers a request gets when the store cannot decide (it failed): the plan's limit, nothing left. */
function fallbackDecision(
  policy: RatePolicy,
  now: number,
  withFields: (d: RateDecision, policy: RatePolicy, now: number) => RateDecision,
): RateDecision {
  const w = policy.windows[0];
  const d: RateDecision = {
    outcome: 'admitted',
    limit: w.limit,
    remaining: 0,
    resetSeconds: Math.ceil((now - (now % w.ms) + w.ms) / 1000),
    retryAfterSeconds: 0,
  };
  return withFields(d, policy, now);
}

/**
 * The 429: the same response `fail(…, refusal(decision))` writes (route headers, `Connection:
 * close` for a large unread body, `Retry-After`), without building an Error.
 */
function refuse(
  maxBodyBytes: number,
  req: IncomingMessage,
  res: ServerResponse,
  match: RouteMatch | undefined,
  decision: RateDecision,
): void {
  const extra = match?.route.headers ? [...match.route.headers] : [];
  if (Number(req.headers['content-length'] ?? 0) > maxBodyBytes) extra.push('Connection', 'close');
  extra.push('Retry-After', String(decision.retryAfterSeconds));
  send(res, 429, refusalBody(decision), decision, extra);
}

/** Sends `error` with the route's headers; closes the connection if a large body was left unread. */
function fail(
  maxBodyBytes: number,
  req: IncomingMessage,
  res: ServerResponse,
  routeHeaders: readonly string[] | undefined,
  decision: RateDecision,
  error: unknown,
): void {
  const extra = routeHeaders ? [...routeHeaders] : [];
  if (Number(req.headers['content-length'] ?? 0) > maxBodyBytes && !(error instanceof ApiError && 'Connection' in error.headers)) {
    extra.push('Connection', 'close');
  }
  sendError(res, decision, error, extra);
}

/** Adds the IETF RateLimit fields to a decision when they are switched on (else the decision as it is). */
function fieldsAdder(config: ResolvedConfig): (d: RateDecision, policy: RatePolicy, now: number) => RateDecision {
  return config.rateLimitFields
    ? (d: RateDecision, policy: RatePolicy, now: number): RateDecision => ({ ...d, fields: ietfRateLimitFields(d, policy, now) })
    : (d: RateDecision): RateDecision => d;
}

/** Builds the request listener for a resolved configuration (exported for tests and the bench). */
export function createReferenceApp(config: ResolvedConfig, store: RateLimitStore, inventory?: InventoryStore) {
  const { keyRing, keys } = keyRingOf(config);
  const max = config.maxBodyBytes;
  const withFields = fieldsAdder(config);
  const anonymousPolicy = policyOf(config, config.anonymousLimits);
  const state: AppState = {
    inventory: inventory ?? new Inventory(loadInventorySeed(config.inventoryFile)),
    body: new BodyReader({ maxBodyBytes: config.maxBodyBytes, bodyTimeoutMs: config.bodyTimeoutMs }),
    fail: (x, error) => fail(max, x.req, x.res, x.routeHeaders, x.decision, error),
  };
  const router = new Router(routes(Date.now()));
  const listMatch = router.match('GET', '/v1/inventory')!;

  const addressIdentity = (socket: Socket): string => `addr:${socket.remoteAddress ?? 'unknown'}`;

  function proceed(
    req: IncomingMessage,
    res: ServerResponse,
    match: RouteMatch | undefined,
    targetError: unknown,
    auth: ApiKeyRecord | ApiError,
    decision: RateDecision,
  ): void {
    if (decision.outcome !== 'admitted') return refuse(max, req, res, match, decision);
    const routeHeaders = match?.route.headers;
    if (auth instanceof ApiError) return fail(max, req, res, routeHeaders, decision, auth);
    if (targetError !== undefined) return fail(max, req, res, routeHeaders, decision, targetError);
    if (match === undefined)
      return fail(max, req, res, routeHeaders, decision, new ApiError(404, ErrorCode.routeNotFound, 'No such route.'));
    if (match.handler === undefined) {
      const error = new ApiError(405, ErrorCode.methodNotAllowed, `Method ${req.method} is not allowed here.`, { Allow: match.allow });
      return fail(max, req, res, routeHeaders, decision, error);
    }
    const exchange: Exchange = { req, res, key: auth, decision, params: match.params, routeHeaders, app: state };
    try {
      const pending = match.handler(exchange);
      if (pending !== undefined) pending.catch((error: unknown) => fail(max, req, res, routeHeaders, decision, error));
    } catch (error) {
      fail(max, req, res, routeHeaders, decision, error);
    }
  }

  function onRequest(req: IncomingMessage, res: ServerResponse, forced?: ApiError): void {
    const now = Date.now();
    const url = req.url ?? '/';
    const method = req.method ?? 'GET';
    let match: RouteMatch | undefined;
    let targetError: unknown;
    if (method === 'GET' && url === '/v1/inventory') match = listMatch;
    else {
      try {
        match = router.match(method, url);
      } catch (error) {
        targetError = error;
      }
    }
    if (forced !== undefined) targetError = forced;
    const auth = authenticate(req.rawHeaders, keyRing, req.socket);
    const counted = auth instanceof ApiError ? (config.countRefusedKeys ? keyCarried(req.rawHeaders, keyRing) : undefined) : auth;
    const policy = counted ? counted.policy : anonymousPolicy;
    const identity = counted ? counted.identity : addressIdentity(req.socket);
    let decision: RateDecision | Promise<RateDecision>;
    try {
      decision = store.hit(identity, policy, now);
    } catch (error) {
      return fail(max, req, res, match?.route.headers, fallbackDecision(policy, now, withFields), error);
    }
    if (isPromiseLike(decision)) {
      decision.then(
        (d) => proceed(req, res, match, targetError, auth, withFields(d, policy, now)),
        // The Reset of a 503 is read when the store gave up (up to its command timeout later), so
        // it is never in the past (Limits rule 1: every response carries the current window).
        (error) => fail(max, req, res, match?.route.headers, fallbackDecision(policy, Date.now(), withFields), error),
      );
    } else {
      proceed(req, res, match, targetError, auth, config.rateLimitFields ? withFields(decision, policy, now) : decision);
    }
  }

  function onClientError(error: NodeJS.ErrnoException, socket: Socket): void {
    answerClientError(error, socket, () => {
      const now = Date.now();
      const decision = store.hit(addressIdentity(socket), anonymousPolicy, now);
      return isPromiseLike(decision)
        ? Promise.resolve(decision).then(
            (d) => withFields(d, anonymousPolicy, now),
            () => fallbackDecision(anonymousPolicy, Date.now(), withFields),
          )
        : withFields(decision, anonymousPolicy, now);
    });
  }

  function onExpectation(req: IncomingMessage, res: ServerResponse): void {
    onRequest(req, res, new ApiError(417, ErrorCode.expectationFailed, 'Only Expect: 100-continue is supported.'));
  }

  return { onRequest, onClientError, onExpectation, keys: keys as RunningReferenceServer['keys'], state };
}

/**
 * Starts a reference server with its own fresh copy of the seed inventory (on Redis only with the
 * `redisUrl` option; the `REDIS_URL` variable is read by `npm start`, not here).
 * Resolves once it listens; `close()` stops it and drops its connections.
 */
export async function startReferenceServer(options: ReferenceServerOptions = {}): Promise<RunningReferenceServer> {
  // Shared state only when asked for here: a REDIS_URL exported in a shell must not put tests or
  // certify's bundled server on a Redis that a deployment uses (`npm start` passes it on).
  const config = resolveConfig({ ...options, redisUrl: options.redisUrl ?? 'none' });
  const shared =
    config.redisUrl !== undefined && (options.store === undefined || options.inventory === undefined)
      ? await openSharedState(config, options)
      : undefined;
  const store: RateLimitStore = options.store ?? shared?.store ?? new MemoryRateLimitStore();
  let app: ReturnType<typeof createReferenceApp>;
  try {
    app = createReferenceApp(config, store, options.inventory ?? shared?.inventory);
  } catch (error) {
    await shared?.close();
    throw error;
  }
  const server = createServer(
    {
      requireHostHeader: false,
      headersTimeout: Math.min(60_000, config.bodyTimeoutMs),
      requestTimeout: config.bodyTimeoutMs + 5_000,
      connectionsCheckingInterval: 1_000,
      keepAliveTimeout: 5_000,
    },
    (req, res) => app.onRequest(req, res),
  );
  server.on('connection', lingerOnClose);
  server.on('clientError', app.onClientError);
  server.on('checkExpectation', app.onExpectation);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch(async (error: unknown) => {
    await shared?.close();
    throw error;
  });
  server.on('error', (error) => console.error('reference-server: server error:', error.message));
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const origin = `http://${host}:${port}`;
  let closing: Promise<void> | undefined;
  return {
    baseUrl: `${origin}/v1`,
    apiUrl: `${origin}/quickstart`,
    keys: app.keys,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })
        .then(() => store.close?.())
        .then(() => shared?.close());
      return closing;
    },
  };
}

/**
 * The Redis-backed stores of `config.redisUrl` (loaded only then, so an in-memory server needs no
 * Redis): the shared limiter unless `options.store` is given, the shared inventory unless
 * `options.inventory` is given. Start-up fails with a clear message when Redis cannot be reached.
 */
async function openSharedState(
  config: ResolvedConfig,
  options: ReferenceServerOptions,
): Promise<{ store?: RateLimitStore; inventory?: InventoryStore; close(): Promise<void> }> {
  const { connectRedis } = await import('./shared-state/redis.ts');
  const client = await connectRedis(config.redisUrl!);
  const close = async (): Promise<void> => {
    await client.quit().catch(() => client.disconnect());
  };
  try {
    const result: { store?: RateLimitStore; inventory?: InventoryStore; close(): Promise<void> } = { close };
    if (options.store === undefined) {
      const { RedisRateLimitStore } = await import('./rate-limit/redis-store.ts');
      result.store = new RedisRateLimitStore(client, { prefix: config.redisPrefix });
    }
    if (options.inventory === undefined) {
      const { RedisInventory } = await import('./inventory/redis-store.ts');
      const inventory = new RedisInventory(client, loadInventorySeed(config.inventoryFile), config.redisPrefix);
      await inventory.seed(options.redisSeed ?? 'reset');
      result.inventory = inventory;
    }
    return result;
  } catch (error) {
    await close();
    throw error;
  }
}
