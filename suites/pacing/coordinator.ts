/**
 * The run's one owner of rate-limit state (spec, Limits rules 3-5; Errors, 429): a small HTTP
 * server on 127.0.0.1 that every Playwright worker, phase and load check asks before it sends on
 * a key, and tells about every response. certify starts one per run; `playwright.config.ts`'s
 * global setup starts one when `CONFORMANCE_PACER_URL` is unset. It also hands out pet leases,
 * so that tests never share a pet while running, whatever the store size.
 *
 * Only key labels (`<API_KEY>`, `<RATE_LIMIT_KEY>`, `<LOAD_KEY>`, `<anonymous>`) and the
 * rate-limit headers of responses cross it, never a key. Protocol (JSON over POST):
 * - `/acquire {label, mode, count?, nominalPerMinute?, withinRemaining?, leaseTtlMs?}` → held until granted →
 *   `{lease, granted}` or `{notCertified}`;
 * - `/observe {lease, status, headers: [name, value][], receivedAtMs}` → `{blockedForMs?, retryAfterProblem?}`;
 * - `/release {lease}` → ends the lease (its unobserved requests were not sent or got no answer);
 * - `/pets/acquire {ids, holder, ttlMs?}` → held until one of `ids` is free → `{id, freedAtMs}`;
 *   `/pets/release {id, holder, retire?}` (`retire`: its restore failed, never hand it out again);
 * - `/once/claim {name, ttlMs?}` → `{value}` when computed, else `{compute: token}` to one caller
 *   while the others wait; `/once/put {name, token, value}`, `/once/abandon {name, token}` (a
 *   sequence run once per run, e.g. the 429 sequence, whatever worker restarts; kept in memory only);
 * - `GET /report` → `PacingReport`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readSettings } from '../../settings/index.ts';
import { KeyPacer, type KeyReport, type PaceMode, type PacerOptions } from './pacer.ts';

export interface CoordinatorOptions {
  /** Longest wait before a grant is answered not-certified (default the setting `MAX_RETRY_AFTER_S`). */
  maxWaitMs?: number;
  /** Requests `paced` grants keep in hand on each key (default the setting `WORKERS` + 1). */
  reserve?: number;
  /** A lease not observed nor released within this time ends by itself (default 120 s; the client sets its own). */
  leaseTtlMs?: number;
  /** Further pacer options (margins, fallback rate). */
  pacer?: Omit<PacerOptions, 'label' | 'maxWaitMs' | 'reserve'>;
  /** The clock (tests). */
  now?: () => number;
}

export interface PetReport {
  leases: number;
  /** Most tests waiting for a pet at once. */
  mostWaiting: number;
  /** Pets leased at the end (0 unless a holder died). */
  heldAtEnd: number;
  /** Pets whose restore was not verified (never handed out again). */
  retired: number;
}

export interface PacingReport {
  keys: KeyReport[];
  pets: PetReport;
}

export interface PacerCoordinator {
  /** `http://127.0.0.1:<port>`: the value of `CONFORMANCE_PACER_URL`. */
  url: string;
  close(): Promise<void>;
  report(): PacingReport;
}

interface Waiter {
  mode: PaceMode;
  count: number;
  nominalPerMinute?: number;
  withinRemaining: boolean;
  leaseTtlMs: number;
  resolve: (answer: object) => void;
  gone: boolean;
}

interface Lease {
  label: string;
  mode: PaceMode;
  /** Requests of the grant not yet observed. */
  open: number;
  expires: number;
}

interface PetWaiter {
  ids: Set<string>;
  holder: string;
  ttlMs: number;
  resolve: (answer: object) => void;
  gone: boolean;
}

const LABEL = /^<[A-Z_a-z]{1,40}>$/;
const MAX_BODY = 4 * 1024 * 1024;

/** Starts the coordinator on 127.0.0.1, port 0. */
export async function startPacerCoordinator(options: CoordinatorOptions = {}): Promise<PacerCoordinator> {
  const now = options.now ?? (() => Date.now());
  // The settings module's one rule (and default) for each variable; a bad value holds its default.
  const settings = readSettings().values;
  const maxWaitMs = options.maxWaitMs ?? settings.MAX_RETRY_AFTER_S * 1000;
  const reserve = options.reserve ?? settings.WORKERS + 1;
  const defaultTtl = options.leaseTtlMs ?? 120_000;

  const keys = new Map<string, { pacer: KeyPacer; queue: Waiter[]; timer?: NodeJS.Timeout }>();
  const leases = new Map<string, Lease>();
  let leaseSeq = 0;
  const pets = new Map<string, { holder: string; expires: number }>();
  /** When each pet was last released (a claim read before then saw a restored quantity). */
  const petFreedAt = new Map<string, number>();
  /** Pets whose restore could not be verified: never handed out again. */
  const retired = new Set<string>();
  let petWaiters: PetWaiter[] = [];
  const petStats = { leases: 0, mostWaiting: 0 };
  const once = new Map<string, { value?: unknown; done: boolean; token?: string; expires: number; waiters: { ttlMs: number; resolve: (a: object) => void; gone: boolean }[] }>();
  let onceSeq = 0;

  const keyOf = (label: string) => {
    let k = keys.get(label);
    if (!k) {
      k = { pacer: new KeyPacer({ ...options.pacer, label, maxWaitMs, reserve }), queue: [] };
      keys.set(label, k);
    }
    return k;
  };

  /** Grants to the head of the queue for as long as the pacer allows; else arms a timer. */
  const pump = (label: string) => {
    const k = keyOf(label);
    if (k.timer) {
      clearTimeout(k.timer);
      k.timer = undefined;
    }
    while (k.queue.length) {
      const w = k.queue[0];
      if (w.gone) {
        k.queue.shift();
        continue;
      }
      const t = now();
      const d = k.pacer.decide(t, { mode: w.mode, count: w.count, nominalPerMinute: w.nominalPerMinute, withinRemaining: w.withinRemaining });
      if (d.kind === 'wait') {
        if (d.waitMs !== undefined) k.timer = setTimeout(() => pump(label), Math.max(1, d.waitMs));
        return;
      }
      k.queue.shift();
      if (d.kind === 'not-certified') {
        w.resolve({ notCertified: d.reason });
        continue;
      }
      k.pacer.granted(t, d.count);
      const id = `L${++leaseSeq}`;
      leases.set(id, { label, mode: w.mode, open: d.count, expires: t + w.leaseTtlMs });
      w.resolve({ lease: id, granted: d.count });
    }
  };

  const endLease = (id: string) => {
    const lease = leases.get(id);
    if (!lease) return;
    leases.delete(id);
    if (lease.open > 0) keyOf(lease.label).pacer.release(lease.open);
    pump(lease.label);
  };

  const pumpPets = () => {
    const t = now();
    for (const [id, p] of pets) if (p.expires <= t) pets.delete(id);
    petWaiters = petWaiters.filter((w) => !w.gone);
    for (const w of [...petWaiters]) {
      let free: string | undefined;
      let usable = 0;
      for (const id of w.ids) {
        if (retired.has(id)) continue;
        usable++;
        if (!pets.has(id)) {
          free = id;
          break;
        }
      }
      if (free === undefined && usable > 0) continue;
      petWaiters.splice(petWaiters.indexOf(w), 1);
      if (free === undefined) {
        w.resolve({ error: `every listed pet is retired: their quantities could not be restored (${retired.size})` });
        continue;
      }
      pets.set(free, { holder: w.holder, expires: t + w.ttlMs });
      petStats.leases++;
      w.resolve({ id: free, freedAtMs: petFreedAt.get(free) ?? 0 });
    }
  };

  /** Answers the waiters of a once-per-run value: the value, or the next one computes it. */
  const pumpOnce = (name: string) => {
    const o = once.get(name);
    if (!o) return;
    const t = now();
    o.waiters = o.waiters.filter((w) => !w.gone);
    if (o.done) {
      for (const w of o.waiters.splice(0)) w.resolve({ value: o.value });
      return;
    }
    if (o.token && o.expires > t) return;
    const w = o.waiters.shift();
    if (!w) {
      o.token = undefined;
      return;
    }
    o.token = `O${++onceSeq}`;
    o.expires = t + w.ttlMs;
    w.resolve({ compute: o.token });
  };

  // Leases, pets and once-claims of a process that died end by themselves.
  const sweeper = setInterval(() => {
    const t = now();
    for (const [id, lease] of leases) if (lease.expires <= t) endLease(id);
    pumpPets();
    for (const [name, o] of once) if (!o.done && o.token && o.expires <= t) pumpOnce(name);
  }, 1000);
  sweeper.unref();

  const routes: Record<string, (body: Record<string, unknown>, answer: (a: object) => void, onGone: (f: () => void) => void) => void> = {
    '/acquire': (b, answer, onGone) => {
      const label = String(b.label);
      if (!LABEL.test(label)) throw new Error(`not a key label: ${label.slice(0, 20)}`);
      const mode: PaceMode = b.mode === 'exhaust' ? 'exhaust' : 'paced';
      const w: Waiter = {
        mode,
        count: Number(b.count) > 0 ? Math.floor(Number(b.count)) : 1,
        nominalPerMinute: Number(b.nominalPerMinute) > 0 ? Number(b.nominalPerMinute) : undefined,
        withinRemaining: b.withinRemaining === true,
        leaseTtlMs: Number(b.leaseTtlMs) > 0 ? Number(b.leaseTtlMs) : defaultTtl,
        resolve: answer,
        gone: false,
      };
      onGone(() => {
        w.gone = true;
      });
      keyOf(label).queue.push(w);
      pump(label);
    },
    '/observe': (b, answer) => {
      const lease = leases.get(String(b.lease));
      if (!lease) return answer({ error: 'unknown or ended lease' });
      const headers = Array.isArray(b.headers) ? (b.headers as unknown[][]).map(([name, value]) => ({ name: String(name), value: String(value) })) : [];
      const result = keyOf(lease.label).pacer.observe({
        status: Number(b.status),
        headers,
        receivedAtMs: Number(b.receivedAtMs) || now(),
        mode: lease.mode,
      });
      lease.open--;
      if (lease.open <= 0) leases.delete(String(b.lease));
      pump(lease.label);
      answer(result);
    },
    '/release': (b, answer) => {
      endLease(String(b.lease));
      answer({});
    },
    '/pets/acquire': (b, answer, onGone) => {
      const ids = Array.isArray(b.ids) ? (b.ids as unknown[]).map(String) : [];
      if (!ids.length) throw new Error('no pet ids');
      const w: PetWaiter = { ids: new Set(ids), holder: String(b.holder), ttlMs: Number(b.ttlMs) > 0 ? Number(b.ttlMs) : defaultTtl, resolve: answer, gone: false };
      onGone(() => {
        w.gone = true;
      });
      petWaiters.push(w);
      petStats.mostWaiting = Math.max(petStats.mostWaiting, petWaiters.filter((x) => !x.gone).length);
      pumpPets();
    },
    '/pets/release': (b, answer) => {
      const id = String(b.id);
      if (pets.get(id)?.holder === String(b.holder)) {
        pets.delete(id);
        petFreedAt.set(id, now());
        if (b.retire === true) retired.add(id);
      }
      pumpPets();
      answer({});
    },
  };

  Object.assign(routes, {
    '/once/claim': (b: Record<string, unknown>, answer: (a: object) => void, onGone: (f: () => void) => void) => {
      const name = String(b.name);
      let o = once.get(name);
      if (!o) once.set(name, (o = { done: false, expires: 0, waiters: [] }));
      const w = { ttlMs: Number(b.ttlMs) > 0 ? Number(b.ttlMs) : defaultTtl, resolve: answer, gone: false };
      onGone(() => {
        w.gone = true;
      });
      o.waiters.push(w);
      pumpOnce(name);
    },
    '/once/put': (b: Record<string, unknown>, answer: (a: object) => void) => {
      const o = once.get(String(b.name));
      if (!o || o.token !== String(b.token)) return answer({ error: 'not the holder of this claim' });
      o.done = true;
      o.value = b.value;
      pumpOnce(String(b.name));
      answer({});
    },
    '/once/abandon': (b: Record<string, unknown>, answer: (a: object) => void) => {
      const o = once.get(String(b.name));
      if (o && o.token === String(b.token)) {
        o.token = undefined;
        pumpOnce(String(b.name));
      }
      answer({});
    },
  });

  const report = (): PacingReport => ({
    keys: [...keys.values()].map((k) => k.pacer.report()),
    pets: { ...petStats, heldAtEnd: pets.size, retired: retired.size },
  });

  const server = http.createServer((req, res) => {
    const send = (code: number, body: object) => {
      if (res.writableEnded) return;
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && req.url === '/report') return send(200, report());
    const route = req.method === 'POST' ? routes[req.url ?? ''] : undefined;
    if (!route) return send(404, { error: 'not found' });
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) req.destroy();
      else chunks.push(c);
    });
    req.on('end', () => {
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
        route(body, (a) => send(200, a), (f) => res.on('close', () => { if (!res.writableEnded) f(); }));
      } catch (e) {
        send(400, { error: (e as Error).message });
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    report,
    async close() {
      clearInterval(sweeper);
      for (const k of keys.values()) if (k.timer) clearTimeout(k.timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
