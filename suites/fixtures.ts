/**
 * The one module the conformance suites import `test` and `expect` from
 * (docs/architecture.md, "The conformance run" and "Annotations").
 *
 * - `conformance`: the environment (`BASE_URL`, `API_URL`, `API_KEY`, …), read once per worker.
 * - `api`: an HTTP client that sends with a chosen credential, parses bodies with `parseJson`,
 *   records a redacted `evidence` annotation per exchange and a `requests` count, and paces
 *   itself by `X-RateLimit-*` through a worker-scoped `Pacer` per key.
 * - `warn(message)`: a `warning` annotation (should-level finding or leniency note).
 * - `stock`: hands a test the pets it owns and restores their quantities afterwards (verified).
 * - an auto fixture that skips `@mutates`, `@exhausts` and `@load` under
 *   `CONFORMANCE_PROFILE=readonly` with a `not-certified` annotation.
 *
 * The transport is `node:http` rather than Playwright's `request`: Playwright records its call log,
 * request headers included, in the HTML report whenever a fetch fails, and it adds
 * `Content-Type: application/octet-stream` to any body sent without one (the quickstart's
 * "missing Content-Type" case must really send none). No key ever reaches an annotation, an
 * error message or a title: every text is redacted first.
 */
import { test as base, expect } from '@playwright/test';
import http from 'node:http';
import https from 'node:https';
import { randomBytes } from 'node:crypto';
import { parseJson, stringifyJson } from './lib/json.ts';
import { readEnv, missingPrerequisite, type ConformanceEnv } from './lib/env.ts';
import { Pacer, PacerWaitTooLong, type PaceMode } from './lib/pacer.ts';
import { redact, type Secret } from './lib/redact.ts';
import { formatEvidence } from './lib/evidence.ts';
import { getHeader, normalizeHeaders } from './lib/headers.ts';
import { parseRateLimitHeaders, type RateLimitInfo } from './lib/rate-limit.ts';
import { errorBodyProblems, abbreviate } from './lib/error-body.ts';
import { titleId } from './lib/ledger.ts';

export { expect };
export type { ConformanceEnv };

/** Which key a credential uses. */
export type KeyName = 'api' | 'rate-limit';

/**
 * How a request authenticates:
 * - `'api'` / `'rate-limit'`: `Authorization: Bearer <key>` with `API_KEY` / `RATE_LIMIT_KEY`;
 * - `'none'`: no Authorization header;
 * - `{ key, format }`: a header value built from a key, e.g. `k => \`bearer ${k}\``;
 * - `{ authorization }`: a raw header value that holds no key.
 */
export type Credential =
  | KeyName
  | 'none'
  | { key: KeyName; format: (key: string) => string }
  | { authorization: string };

export interface SendOptions {
  method: string;
  /** `inventory` = `BASE_URL`, `messages` = `API_URL`. */
  base: 'inventory' | 'messages';
  /** Appended to the base address, e.g. `/inventory`. */
  path: string;
  credential?: Credential;
  /** A JSON body (bigint-safe); sets `Content-Type: application/json` unless `contentType` says otherwise. */
  json?: unknown;
  /** A raw body. */
  body?: string;
  /** Content-Type to send; `null` sends none even with a body. */
  contentType?: string | null;
  headers?: Record<string, string>;
  /** `exhaust` spends the pacer's reserve (the 429 checks); Retry-After is honoured in every mode. */
  mode?: PaceMode;
  /** A 429 is planned (the 429 checks): do not fail the test on it. */
  expect429?: boolean;
  /** Record an evidence annotation (default true). */
  evidence?: boolean;
}

export interface ApiResponse {
  method: string;
  /** Path as requested, e.g. `/v1/inventory` (no host, no key). */
  path: string;
  status: number;
  /** Lower-cased names; values redacted. */
  headers: Record<string, string>;
  /** Header names as the server wrote them. */
  rawHeaderNames: string[];
  /** Body text, redacted. */
  text: string;
  /** Body parsed with `parseJson` (int64-safe), when it parsed. */
  json?: unknown;
  jsonError?: string;
  rateLimit: RateLimitInfo;
  receivedAtMs: number;
  /** Case-insensitive header lookup. */
  header(name: string): string | undefined;
  /** `PATCH /v1/inventory/1 → 400` for messages. */
  label: string;
}

export interface InventoryEntry {
  petId: number | bigint;
  quantity: number;
  status: string;
  /** `String(petId)`, exact. */
  id: string;
}

export interface ApiClient {
  readonly env: ConformanceEnv;
  send(options: SendOptions): Promise<ApiResponse>;
  listInventory(credential?: Credential, options?: Partial<SendOptions>): Promise<ApiResponse>;
  updateInventory(petId: string | number | bigint, body: unknown, options?: Partial<SendOptions>): Promise<ApiResponse>;
  sendMessage(body: unknown, options?: Partial<SendOptions>): Promise<ApiResponse>;
  /** `GET /inventory` with `API_KEY`; fails the test (naming `requirementId`) unless 200 with an array. */
  inventory(requirementId: string): Promise<InventoryEntry[]>;
  /** Whether the key's variable (`API_KEY` / `RATE_LIMIT_KEY`) is set; the key itself is never handed out. */
  hasKey(key: KeyName): boolean;
  /** The pacer of a key, e.g. to read its state in the 429 checks. */
  pacer(key: KeyName): Pacer;
  /** Requests sent by this test so far. */
  readonly requests: number;
  /** Text with every key replaced by its placeholder. */
  redact(text: string): string;
  /** A random, well-formed key that no server knows. */
  readonly unknownKey: string;
}

export interface Stock {
  /**
   * The pet this test owns for `slot` (see PET_SLOTS): picked from the list so that tests running
   * in parallel never touch the same pet. Its quantity is restored and verified after the test.
   */
  claim(slot: PetSlot, requirementId: string): Promise<InventoryEntry>;
  /** Restores every claimed pet now (verified through the list); teardown does it again. */
  restore(): Promise<void>;
}

/** Pets by owner: each mutating test uses its own index into the listed inventory. */
export const PET_SLOTS = {
  'update-shape': 0,
  'update-persist': 1,
  'update-400': 2,
  'update-negative': 3,
  'auth-update': 4,
  /** The 400 of the Error-body and rate-limit header checks (invalid JSON: never a change). */
  'error-body': 5,
} as const;
export type PetSlot = keyof typeof PET_SLOTS;

type WorkerFixtures = {
  conformance: ConformanceEnv;
  pacers: Map<string, Pacer>;
  /**
   * A client for worker-scoped sequences (the 429 checks run one sequence shared by several
   * tests); it shares the worker's pacers. `finish()` writes its `requests` count to the sink.
   */
  apiFactory: (annotate: AnnotationSink) => ApiClient & { finish(): void };
};

type TestFixtures = {
  api: ApiClient;
  warn: (message: string) => void;
  stock: Stock;
  profileGate: void;
};

const MAX_EVIDENCE_PER_TEST = 25;
/** Retry-After is waited from the 429's arrival plus this; small, so a rounded-down value is caught (RL-08). */
const RETRY_AFTER_MARGIN_MS = 20;
const NOT_CERTIFIED_TAGS = ['@mutates', '@exhausts', '@load'];

/** Fails the test: a must-level check whose prerequisite variable is missing. */
export function requirePrerequisite(value: string | undefined, variable: string, requirementId?: string): string {
  if (value === undefined) throw new Error(missingPrerequisite(variable, requirementId));
  return value;
}

function secretsOf(env: ConformanceEnv): Secret[] {
  const out: Secret[] = [];
  if (env.apiKey) out.push({ value: env.apiKey, placeholder: '<API_KEY>' });
  if (env.rateLimitKey && env.rateLimitKey !== env.apiKey) out.push({ value: env.rateLimitKey, placeholder: '<RATE_LIMIT_KEY>' });
  const load = process.env.LOAD_KEY?.trim();
  if (load && load !== env.apiKey && load !== env.rateLimitKey) out.push({ value: load, placeholder: '<LOAD_KEY>' });
  return out;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Sleeps, printing progress every 5 s for waits longer than 3 s. */
async function waitWithProgress(ms: number, reason: string): Promise<void> {
  if (ms <= 0) return;
  if (ms > 3000) console.log(`[pacing] ${reason}: waiting ${Math.ceil(ms / 1000)} s`);
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const left = end - Date.now();
    await sleep(Math.min(left, 5000));
    if (Date.now() < end && ms > 3000) console.log(`[pacing] ${Math.ceil((end - Date.now()) / 1000)} s left`);
  }
}

interface RawResponse {
  status: number;
  rawHeaders: string[];
  body: string;
}

function transport(url: URL, method: string, headers: Record<string, string>, body: string | undefined, timeoutMs: number): Promise<RawResponse> {
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = lib.request(url, { method, headers, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no response within ${timeoutMs} ms (REQUEST_TIMEOUT_MS)`)));
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** Where a client writes its annotations: a test's, or a collector of a worker-scoped sequence. */
export type AnnotationSink = (annotation: { type: string; description: string }) => void;

function createApi(env: ConformanceEnv, pacers: Map<string, Pacer>, annotate: AnnotationSink, requirementId?: string): ApiClient & { finish(): void } {
  const secrets = secretsOf(env);
  const clean = (text: string) => redact(text, secrets);
  const prefix = requirementId ? `${requirementId}: ` : '';
  let requests = 0;
  let evidence = 0;
  const unknownKey = `unknown-${randomBytes(12).toString('hex')}`;

  const keyValue = (key: KeyName): string =>
    key === 'api'
      ? requirePrerequisite(env.apiKey, 'API_KEY', requirementId)
      : requirePrerequisite(env.rateLimitKey, 'RATE_LIMIT_KEY', requirementId);

  const pacerByLabel = (label: string): Pacer => {
    let p = pacers.get(label);
    if (!p) {
      p = new Pacer({ label, reserve: env.workers + 1, maxWaitMs: env.maxRetryAfterS * 1000, retryAfterMarginMs: RETRY_AFTER_MARGIN_MS });
      pacers.set(label, p);
    }
    return p;
  };
  const labelOfKey = (key: KeyName): string =>
    key === 'api' || env.rateLimitKey === env.apiKey ? '<API_KEY>' : '<RATE_LIMIT_KEY>';

  /** Authorization value (or undefined) and the pacer bucket the server will most likely charge. */
  const resolveCredential = (credential: Credential): { authorization?: string; bucket: string } => {
    if (credential === 'none') return { bucket: '<anonymous>' };
    if (credential === 'api' || credential === 'rate-limit') {
      return { authorization: `Bearer ${keyValue(credential)}`, bucket: labelOfKey(credential) };
    }
    if ('key' in credential) {
      const key = keyValue(credential.key);
      const authorization = credential.format(key);
      const valid = new RegExp(`^bearer +${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'i').test(authorization) &&
        authorization.endsWith(key);
      return { authorization, bucket: valid ? labelOfKey(credential.key) : '<anonymous>' };
    }
    return { authorization: credential.authorization, bucket: '<anonymous>' };
  };

  const send = async (o: SendOptions): Promise<ApiResponse> => {
    const baseUrl =
      o.base === 'inventory'
        ? requirePrerequisite(env.baseUrl, 'BASE_URL', requirementId)
        : requirePrerequisite(env.apiUrl, 'API_URL', requirementId);
    const url = new URL(baseUrl + o.path);
    const { authorization, bucket } = resolveCredential(o.credential ?? 'api');
    const headers: Record<string, string> = { accept: 'application/json', ...(o.headers ?? {}) };
    if (authorization !== undefined) headers.authorization = authorization;
    let body: string | undefined = o.body;
    let contentType: string | null | undefined = o.contentType;
    if (o.json !== undefined) {
      body = stringifyJson(o.json);
      if (contentType === undefined) contentType = 'application/json';
    }
    if (contentType) headers['content-type'] = contentType;
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));

    const pacer = pacerByLabel(bucket);
    const mode = o.mode ?? 'paced';
    let plan;
    try {
      plan = pacer.plan(Date.now(), mode);
    } catch (e) {
      if (e instanceof PacerWaitTooLong) throw new Error(clean(`${prefix}${o.method} ${url.pathname}: ${e.message}`));
      throw e;
    }
    if (plan.waitMs > 0) {
      await waitWithProgress(plan.waitMs, plan.reason ?? 'pacing');
      pacer.waited(Date.now());
    }
    pacer.begin();
    requests++;
    let raw: RawResponse;
    try {
      raw = await transport(url, o.method, headers, body, env.requestTimeoutMs);
    } catch (e) {
      pacer.abort();
      throw new Error(clean(`${prefix}${o.method} ${url.pathname}: request failed: ${(e as Error).message}`));
    }
    const receivedAtMs = Date.now();
    const pairs: { name: string; value: string }[] = [];
    for (let i = 0; i + 1 < raw.rawHeaders.length; i += 2) pairs.push({ name: raw.rawHeaders[i], value: clean(raw.rawHeaders[i + 1]) });
    const observed = pacer.observe({ status: raw.status, headers: pairs, receivedAtMs });
    const normalized = normalizeHeaders(pairs);
    const text = clean(raw.body);
    let json: unknown;
    let jsonError: string | undefined;
    if (text.trim() !== '') {
      try {
        json = parseJson(text);
      } catch (e) {
        jsonError = clean((e as Error).message);
      }
    }
    const res: ApiResponse = {
      method: o.method,
      path: url.pathname + url.search,
      status: raw.status,
      headers: normalized,
      rawHeaderNames: pairs.map((p) => p.name),
      text,
      json,
      jsonError,
      rateLimit: parseRateLimitHeaders(pairs),
      receivedAtMs,
      header: (name: string) => getHeader(normalized, name),
      label: `${o.method} ${url.pathname} → ${raw.status}`,
    };
    if (o.evidence !== false) {
      evidence++;
      if (evidence <= MAX_EVIDENCE_PER_TEST) {
        annotate({
          type: 'evidence',
          description: formatEvidence({ method: o.method, path: res.path, status: raw.status, headers: pairs, authorization }, secrets),
        });
      }
    }
    if (raw.status === 429 && !o.expect429) {
      throw new Error(
        clean(
          `${prefix}${res.label}: unplanned 429 on ${bucket}. The suite paced itself by X-RateLimit-Remaining ` +
            `(keeping ${env.workers + 1} requests in reserve) and still met the limit: another client may be ` +
            `using this key, or the server's X-RateLimit-Remaining is wrong. Nothing more is sent on this key ` +
            `for ${Math.ceil((observed.blockedForMs ?? 0) / 1000)} s (Retry-After: ${res.header('retry-after') ?? 'missing'}).`,
        ),
      );
    }
    return res;
  };

  const api: ApiClient & { finish(): void } = {
    env,
    send,
    listInventory: (credential = 'api', options = {}) => send({ method: 'GET', base: 'inventory', path: '/inventory', credential, ...options }),
    updateInventory: (petId, body, options = {}) =>
      send({ method: 'PATCH', base: 'inventory', path: `/inventory/${String(petId)}`, json: body, ...options }),
    sendMessage: (body, options = {}) => send({ method: 'POST', base: 'messages', path: '/messages', json: body, ...options }),
    async inventory(requirementId: string) {
      const res = await send({ method: 'GET', base: 'inventory', path: '/inventory', credential: 'api' });
      expect(res.status, `${requirementId}: GET /inventory with API_KEY, expected 200, observed ${res.status}: ${abbreviate(res.text)}`).toBe(200);
      expect(Array.isArray(res.json), `${requirementId}: GET /inventory, expected a JSON array, observed ${abbreviate(res.text)}`).toBe(true);
      return (res.json as Record<string, unknown>[]).map((item) => ({
        petId: item.petId as number | bigint,
        quantity: item.quantity as number,
        status: item.status as string,
        id: String(item.petId),
      }));
    },
    hasKey: (key) => (key === 'api' ? env.apiKey !== undefined : env.rateLimitKey !== undefined),
    pacer: (key) => pacerByLabel(labelOfKey(key)),
    get requests() {
      return requests;
    },
    redact: clean,
    unknownKey,
    finish() {
      if (evidence > MAX_EVIDENCE_PER_TEST) {
        annotate({ type: 'evidence', description: `… ${evidence - MAX_EVIDENCE_PER_TEST} more exchanges not listed` });
      }
      annotate({ type: 'requests', description: String(requests) });
    },
  };
  return api;
}

export const test = base.extend<TestFixtures, WorkerFixtures>({
  conformance: [
    async ({}, use) => {
      await use(readEnv(process.env));
    },
    { scope: 'worker' },
  ],
  pacers: [
    async ({}, use) => {
      await use(new Map());
    },
    { scope: 'worker' },
  ],
  apiFactory: [
    async ({ conformance, pacers }, use) => {
      await use((annotate) => createApi(conformance, pacers, annotate));
    },
    { scope: 'worker' },
  ],
  profileGate: [
    async ({ conformance }, use, testInfo) => {
      if (conformance.problems.length) throw new Error(`configuration: ${conformance.problems.join('; ')}`);
      if (conformance.profile === 'readonly') {
        const tags = testInfo.tags.filter((t) => NOT_CERTIFIED_TAGS.includes(t));
        if (tags.length) {
          const why =
            `not certified: CONFORMANCE_PROFILE=readonly leaves out ${tags.join(', ')} checks ` +
            '(state changes with a valid key, driving a key to 429, load)';
          testInfo.annotations.push({ type: 'not-certified', description: why });
          testInfo.skip(true, why);
        }
      }
      await use();
    },
    { auto: true },
  ],
  api: async ({ conformance, pacers }, use, testInfo) => {
    const api = createApi(conformance, pacers, (a) => testInfo.annotations.push(a), titleId(testInfo.title));
    try {
      await use(api);
    } finally {
      api.finish();
    }
  },
  warn: async ({ api }, use, testInfo) => {
    await use((message: string) => {
      testInfo.annotations.push({ type: 'warning', description: api.redact(message) });
    });
  },
  stock: async ({ api }, use) => {
    const claimed = new Map<string, { entry: InventoryEntry; requirementId: string }>();
    const restore = async () => {
      if (!claimed.size) return;
      const owners = [...claimed.values()];
      const now = await api.inventory(`${owners[0].requirementId} (restore)`);
      const failures: string[] = [];
      let patched = 0;
      for (const { entry, requirementId } of owners) {
        const current = now.find((e) => e.id === entry.id);
        if (current && current.quantity === entry.quantity) continue;
        patched++;
        const res = await api.updateInventory(entry.id, { quantity: entry.quantity }, { evidence: true });
        if (res.status !== 200) failures.push(`${requirementId}: restoring pet ${entry.id} to quantity ${entry.quantity} got ${res.status}`);
      }
      // Verified through the list: the one already read when nothing needed restoring.
      const after = patched ? await api.inventory(`${owners[0].requirementId} (restore check)`) : now;
      for (const { entry, requirementId } of owners) {
        const current = after.find((e) => e.id === entry.id);
        if (!current || current.quantity !== entry.quantity) {
          failures.push(
            `${requirementId}: pet ${entry.id} not restored: expected quantity ${entry.quantity}, ` +
              `observed ${current ? current.quantity : 'pet missing from the list'}`,
          );
        }
      }
      if (failures.length) throw new Error(`state not restored: ${failures.join('; ')}`);
    };
    const stock: Stock = {
      async claim(slot, requirementId) {
        const items = await api.inventory(requirementId);
        if (!items.length) throw new Error(`${requirementId}: the inventory list is empty; this check needs at least one pet`);
        const entry = items[PET_SLOTS[slot] % items.length];
        if (!claimed.has(entry.id)) claimed.set(entry.id, { entry, requirementId });
        return entry;
      },
      restore,
    };
    await use(stock);
    await restore();
  },
});

/** Fails with `<id>: <what>: expected …, observed …` unless `res.status` is one of `expected`. */
export function expectStatus(requirementId: string, res: ApiResponse, expected: number | number[], what = ''): void {
  const list = Array.isArray(expected) ? expected : [expected];
  expect(
    list.includes(res.status),
    `${requirementId}: ${what ? `${what}: ` : ''}${res.method} ${res.path}: expected status ${list.join(' or ')}, observed ${res.status}; body: ${abbreviate(res.text)}`,
  ).toBe(true);
}

/**
 * The shared Error-body check (spec, Errors): JSON media type (charset allowed), `code` and
 * `message` strings, integer `status` equal to the HTTP status.
 */
export function expectErrorBody(requirementId: string, res: ApiResponse, what = ''): void {
  const problems = errorBodyProblems(res);
  expect(problems, `${requirementId}: ${what ? `${what}: ` : ''}Error body of ${res.label}: expected none, observed these deviations`).toEqual([]);
}
