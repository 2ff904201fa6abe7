/**
 * The staging simulator: the bundled reference server behind the fault proxy, under conditions of
 * a real deployment that can be combined: latency per answer, https with a private CA, a small
 * store, a strict ban (the first request sent on a key while its 429's Retry-After is pending bans
 * the key for 10 minutes), a token-bucket limiter, and `Connection: close` on every response.
 * certify run against it must pass, send nothing early, earn no ban and restore the store
 * (tests/staging/). `npx tsx faults/staging/cli.ts <condition> …` runs one by hand.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import type { ReferenceTargetOptions } from '../../certify/reference-target.ts';
import { startCaseReference } from '../reference.ts';
import { startFaultProxy, throughProxy } from '../proxy.ts';
import type { RetryStats } from '../retry-watch.ts';
import { tokenBucketStore } from '../stores.ts';
import { REPO_ROOT } from '../harness.ts';

/** Conditions of a staging deployment; any combination. */
export interface StagingConditions {
  /** Milliseconds added before every answer (e.g. 40). */
  latencyMs?: number;
  /** https with the private test CA (`tests/fixtures/tls/`); certify trusts it through NODE_EXTRA_CA_CERTS. */
  tls?: boolean;
  /** A store of this many pets (the first ones of the seed inventory). */
  pets?: number;
  /** The first early request on a key bans it for this long (ms; `true`: 10 minutes). */
  strictBan?: boolean | number;
  /**
   * A token-bucket limiter instead of the reference server's fixed windows, refilled once a second
   * as payment and cloud APIs meter it. (A bucket refilled continuously faster than one round trip
   * cannot be reached one request at a time by any client: the suite reports that not certified.)
   */
  tokenBucket?: boolean;
  /** `Connection: close` on every response; the connection is closed after each. */
  connectionClose?: boolean;
}

/** The conditions by name, one each: the staging conditions `npm test` proves the suite under. */
export const CONDITIONS: Record<string, StagingConditions> = {
  latency: { latencyMs: 40 },
  tls: { tls: true },
  'three-pets': { pets: 3 },
  'strict-ban': { strictBan: true },
  'token-bucket': { tokenBucket: true },
  'connection-close': { connectionClose: true },
};

export const STRICT_BAN_MS = 10 * 60_000;
export const TLS_DIR = path.join(REPO_ROOT, 'tests', 'fixtures', 'tls');
const SEED = path.join(REPO_ROOT, 'fixtures', 'inventory.yaml');

export interface StagingTarget {
  /** Environment for certify: BASE_URL/API_URL through the simulator, the keys, NODE_EXTRA_CA_CERTS with tls. Holds keys: never print it. */
  env: Record<string, string>;
  /** Early requests, bans and 429s the simulator counted, per key label. */
  stats(): RetryStats;
  /** The inventory as the upstream holds it now (read directly, not through the simulator). */
  inventory(): Promise<string>;
  close(): Promise<void>;
}

/** Writes a seed with the first `n` pets of the bundled seed; returns its path. */
function smallSeed(dir: string, n: number): string {
  const seed = parseYaml(fs.readFileSync(SEED, 'utf8')) as { items: unknown[] };
  const file = path.join(dir, `inventory-${n}-pets.yaml`);
  fs.writeFileSync(file, stringifyYaml({ items: seed.items.slice(0, n) }));
  return file;
}

/** Starts the reference server (short windows, or `reference`) behind the simulator with `conditions`. */
export async function startStagingTarget(conditions: StagingConditions, reference: ReferenceTargetOptions = {}): Promise<StagingTarget> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'staging-'));
  const server = {
    ...(conditions.pets !== undefined ? { inventoryFile: smallSeed(dir, conditions.pets) } : {}),
    ...(conditions.tokenBucket ? { store: tokenBucketStore({ tickMs: 1000 }) } : {}),
    ...reference.server,
  };
  const target = await startCaseReference({ ...reference, server });
  const latency = conditions.latencyMs ?? 0;
  const proxy = await startFaultProxy({
    upstream: target.server.baseUrl.replace(/\/v1\/?$/, ''),
    env: target.env,
    fault: latency > 0 ? { delayMs: () => latency } : undefined,
    ...(conditions.tls
      ? { tls: { cert: fs.readFileSync(path.join(TLS_DIR, 'server.pem')), key: fs.readFileSync(path.join(TLS_DIR, 'server-key.pem')) } }
      : {}),
    ...(conditions.connectionClose ? { connectionClose: true } : {}),
    ...(conditions.strictBan ? { strictBanMs: conditions.strictBan === true ? STRICT_BAN_MS : conditions.strictBan } : {}),
  });
  const env: Record<string, string> = { ...(throughProxy(target.env, proxy.url) as Record<string, string>) };
  if (conditions.tls) env.NODE_EXTRA_CA_CERTS = path.join(TLS_DIR, 'ca.pem');
  return {
    env,
    stats: () => proxy.stats(),
    async inventory() {
      const res = await fetch(`${target.server.baseUrl}/inventory`, { headers: { authorization: `Bearer ${target.env.LOAD_KEY}` } });
      if (res.status !== 200) throw new Error(`reading the upstream inventory: status ${res.status}`);
      return res.text();
    },
    async close() {
      await proxy.close();
      await target.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The conditions named (`latency`, `tls`, …), merged; unknown names throw, listing the known ones. */
export function conditionsOf(names: readonly string[]): StagingConditions {
  return Object.assign(
    {},
    ...names.map((n) => {
      const c = CONDITIONS[n];
      if (!c) throw new Error(`unknown staging condition "${n}"; known: ${Object.keys(CONDITIONS).join(', ')}`);
      return c;
    }),
  ) as StagingConditions;
}
