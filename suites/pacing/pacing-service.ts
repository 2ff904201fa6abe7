/**
 * The coordinator's pacing service (spec, Limits rules 3-5; Errors, 429): one `KeyPacer` per key
 * label, a queue of askers per key, leases of granted requests. Nothing is granted on a key while
 * a 429 on it is pending; a 429 that the key's own X-RateLimit-Remaining did not predict holds
 * every key of the run (`holds` in the report says which 429 and why), keys first asked for later
 * included.
 *
 * Routes: `/acquire {label, mode, count?, nominalPerMinute?, withinRemaining?, restore?, leaseTtlMs?}` →
 * held until granted → `{lease, granted}` or `{notCertified}`; `/observe {lease, status, headers:
 * [name, value][], receivedAtMs}` → `ObserveResult`; `/release {lease}`.
 */
import { KeyPacer, type KeyReport, type PaceMode, type PacerOptions, type RunTraffic } from './pacer.ts';
import { positive, type Service } from './service.ts';

export interface PacingServiceOptions {
  /** Longest wait before a grant is answered not-certified. */
  maxWaitMs: number;
  /** Requests `paced` grants keep in hand on each key. */
  reserve: number;
  /** A lease not observed nor released within this time ends by itself. */
  leaseTtlMs: number;
  pacer?: Omit<PacerOptions, 'label' | 'maxWaitMs' | 'reserve'>;
  now: () => number;
  /** Holds the run starts with (a 429 an earlier run met, still pending): see `seedHolds`. */
  initialHolds?: readonly InitialHold[];
}

/** A hold a run starts with, on one key label (`*`: every key), until `untilMs` (local clock). */
export interface InitialHold {
  label: string;
  untilMs: number;
  reason: string;
}

/** Applies the run's initial holds to a key's pacer when the key is first asked for (a hold beyond maxWaitMs closes it then). */
function seedHolds(pacer: KeyPacer, label: string, holds: readonly InitialHold[] | undefined): KeyPacer {
  for (const h of holds ?? []) if (h.label === label || h.label === '*') pacer.hold(h.untilMs, h.reason);
  return pacer;
}

/** A key's state when it is first asked for: its pacer, with the run's initial holds on it. */
function newKeyState(o: PacingServiceOptions, label: string, traffic: RunTraffic): KeyState {
  const pacer = new KeyPacer({ ...o.pacer, label, maxWaitMs: o.maxWaitMs, reserve: o.reserve }, traffic);
  return { pacer: seedHolds(pacer, label, o.initialHolds), queue: [] };
}

/** A hold of every key of the run, after a 429 that its key's Remaining did not predict. */
export interface RunHold {
  /** The key whose 429 it was. */
  label: string;
  reason: string;
  /** How long every key was held from that 429 (ms). */
  heldForMs: number;
}

export interface PacingServiceReport {
  keys: KeyReport[];
  holds: RunHold[];
}

interface Waiter {
  mode: PaceMode;
  count: number;
  nominalPerMinute?: number;
  withinRemaining: boolean;
  /** A restore (GrantRequest.restore): it may go on a closed key once its holds have passed. */
  restore: boolean;
  leaseTtlMs: number;
  resolve: (answer: object) => void;
  gone: boolean;
  /** When it asked (local clock): no waiter waits longer than `maxWaitMs` for a grant. */
  since: number;
}

interface Lease {
  label: string;
  mode: PaceMode;
  /** Requests of the grant not yet observed. */
  open: number;
  expires: number;
}

interface KeyState {
  pacer: KeyPacer;
  queue: Waiter[];
  timer?: NodeJS.Timeout;
}

const LABEL = /^<[A-Z_a-z]{1,40}>$/;

/** The longest `setTimeout` node honours (a longer one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

function waiterOf(b: Record<string, unknown>, defaultTtl: number, resolve: (a: object) => void, since: number): Waiter {
  return {
    since,
    mode: b.mode === 'exhaust' ? 'exhaust' : 'paced',
    count: Number(b.count) > 0 ? Math.floor(Number(b.count)) : 1,
    nominalPerMinute: Number(b.nominalPerMinute) > 0 ? Number(b.nominalPerMinute) : undefined,
    withinRemaining: b.withinRemaining === true,
    restore: b.restore === true,
    leaseTtlMs: positive(b.leaseTtlMs, defaultTtl),
    resolve,
    gone: false,
  };
}

/**
 * Grants to the head of a key's queue for as long as its pacer allows, else arms a timer that
 * calls `again`; `lease` records a grant and names its lease. A waiter that got no grant within
 * `maxWaitMs` (whatever held it: a budget that never frees, requests in flight that never end)
 * closes the key: not certified, with the reason, and nothing more is sent on it.
 */
function pumpKey(
  k: KeyState,
  now: () => number,
  again: () => void,
  lease: (w: Waiter, count: number, t: number) => string,
  maxWaitMs: number,
): void {
  if (k.timer) clearTimeout(k.timer);
  k.timer = undefined;
  while (k.queue.length) {
    const w = k.queue[0];
    if (w.gone) {
      k.queue.shift();
      continue;
    }
    const t = now();
    const d = k.pacer.decide(t, {
      mode: w.mode,
      count: w.count,
      nominalPerMinute: w.nominalPerMinute,
      withinRemaining: w.withinRemaining,
      restore: w.restore,
    });
    if (d.kind === 'wait') {
      const deadline = w.since + maxWaitMs - t;
      if (deadline <= 0 && w.restore) {
        // A restore is not sent past its deadline; the key stays as it was (it may be closed already).
        k.queue.shift();
        w.resolve({ notCertified: `${d.reason}: no grant within ${Math.round(maxWaitMs / 1000)} s (MAX_RETRY_AFTER_S)` });
        continue;
      }
      if (deadline <= 0) {
        k.pacer.close(`${d.reason}: no grant within ${Math.round(maxWaitMs / 1000)} s (MAX_RETRY_AFTER_S)`);
        continue;
      }
      k.timer = setTimeout(again, Math.min(MAX_TIMER_MS, Math.max(1, d.waitMs === undefined ? deadline : Math.min(d.waitMs, deadline))));
      return;
    }
    k.queue.shift();
    if (d.kind === 'not-certified') {
      w.resolve({ notCertified: d.reason });
      continue;
    }
    k.pacer.granted(t, d.count);
    w.resolve({ lease: lease(w, d.count, t), granted: d.count, ...(d.limitedBy ? { limitedBy: d.limitedBy } : {}) });
  }
}

/** An `/observe` body as the pacer reads it: the status, the headers as pairs, when it was received, which service answered. */
function observationOf(b: Record<string, unknown>, mode: Lease['mode'], nowMs: number) {
  const headers = Array.isArray(b.headers)
    ? (b.headers as unknown[][]).map(([name, value]) => ({ name: String(name), value: String(value) }))
    : [];
  return {
    status: Number(b.status),
    headers,
    receivedAtMs: Number(b.receivedAtMs) || nowMs,
    mode,
    ...(typeof b.service === 'string' ? { service: b.service.slice(0, 200) } : {}),
  };
}

export function pacingService(o: PacingServiceOptions): Service<PacingServiceReport> {
  const keys = new Map<string, KeyState>();
  const leases = new Map<string, Lease>();
  const holds: RunHold[] = [];
  /** The run-wide hold in force (local clock), applied to every key, new ones too. */
  let runHold: { untilMs: number; reason: string } | undefined;
  let leaseSeq = 0;
  /** The run's requests on every label: each key's fall of Remaining is judged against all of them. */
  const traffic: RunTraffic = { granted: 0, inflight: 0 };

  const keyOf = (label: string): KeyState => {
    let k = keys.get(label);
    if (!k) {
      k = newKeyState(o, label, traffic);
      if (runHold) k.pacer.hold(runHold.untilMs, runHold.reason);
      keys.set(label, k);
    }
    return k;
  };

  const pump = (label: string): void =>
    pumpKey(
      keyOf(label),
      o.now,
      () => pump(label),
      (w, count, t) => {
        const id = `L${++leaseSeq}`;
        leases.set(id, { label, mode: w.mode, open: count, expires: t + w.leaseTtlMs });
        return id;
      },
      o.maxWaitMs,
    );

  /** After a request on `label` ended: that key's queue, and every key's while they are one bucket sent on one at a time. */
  const pumpAfter = (label: string): void => {
    pump(label);
    if (traffic.untrusted) for (const other of keys.keys()) if (other !== label) pump(other);
  };

  const endLease = (id: string) => {
    const lease = leases.get(id);
    if (!lease) return;
    leases.delete(id);
    if (lease.open > 0) keyOf(lease.label).pacer.release(lease.open);
    pumpAfter(lease.label);
  };

  /** Every key of the run waits until `untilMs` (a 429 that its key's Remaining did not predict). */
  const holdAll = (label: string, hold: { untilMs: number; reason: string }) => {
    if (!runHold || hold.untilMs > runHold.untilMs) runHold = hold;
    holds.push({ label, reason: hold.reason, heldForMs: Math.max(0, hold.untilMs - o.now()) });
    for (const [other, k] of keys) {
      k.pacer.hold(hold.untilMs, `${hold.reason} (held on ${other})`);
      pump(other);
    }
  };

  const routes: Service<PacingServiceReport>['routes'] = {
    '/acquire': (b, answer, onGone) => {
      const label = String(b.label);
      if (!LABEL.test(label)) throw new Error(`not a key label: ${label.slice(0, 20)}`);
      const w = waiterOf(b, o.leaseTtlMs, answer, o.now());
      onGone(() => {
        w.gone = true;
      });
      keyOf(label).queue.push(w);
      pump(label);
    },
    '/observe': (b, answer) => {
      const lease = leases.get(String(b.lease));
      if (!lease) return answer({ error: 'unknown or ended lease' });
      const result = keyOf(lease.label).pacer.observe(observationOf(b, lease.mode, o.now()));
      lease.open--;
      if (lease.open <= 0) leases.delete(String(b.lease));
      if (result.holdAll) holdAll(lease.label, result.holdAll);
      pumpAfter(lease.label);
      const heldUntilMs = keyOf(lease.label).pacer.blockedUntil;
      answer(heldUntilMs > o.now() ? { ...result, heldUntilMs } : result);
    },
    '/release': (b, answer) => {
      endLease(String(b.lease));
      answer({});
    },
  };

  return {
    routes,
    sweep() {
      const t = o.now();
      for (const [id, lease] of leases) if (lease.expires <= t) endLease(id);
    },
    report: () => ({ keys: [...keys.values()].map((k) => k.pacer.report()), holds: holds.map((h) => ({ ...h })) }),
    close() {
      for (const k of keys.values()) if (k.timer) clearTimeout(k.timer);
    },
  };
}
