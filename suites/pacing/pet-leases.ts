/**
 * The coordinator's pet leases: a pet is leased to one test at a time, whatever the store size,
 * so that tests never share a pet while running; a pet whose restore was not verified is retired
 * (never handed out again).
 *
 * Routes: `/pets/acquire {ids, holder, ttlMs?}` → held until one of `ids` is free →
 * `{id, freedAtMs}` (or `{error}` when every listed pet is retired); `/pets/release {id, holder, retire?}`.
 */
import { positive, type Service } from './service.ts';

export interface PetReport {
  leases: number;
  /** Most tests waiting for a pet at once. */
  mostWaiting: number;
  /** Pets leased at the end (0 unless a holder died). */
  heldAtEnd: number;
  /** Pets whose restore was not verified (never handed out again). */
  retired: number;
}

interface PetWaiter {
  ids: Set<string>;
  holder: string;
  ttlMs: number;
  resolve: (answer: object) => void;
  gone: boolean;
}

export function petLeases(o: { leaseTtlMs: number; now: () => number }): Service<PetReport> {
  const pets = new Map<string, { holder: string; expires: number }>();
  /** When each pet was last released (a claim read before then saw a restored quantity). */
  const freedAt = new Map<string, number>();
  const retired = new Set<string>();
  let waiters: PetWaiter[] = [];
  const stats = { leases: 0, mostWaiting: 0 };

  /** The first free, usable pet of `w`; `null` when every listed pet is retired. */
  const freeFor = (w: PetWaiter): string | null | undefined => {
    let usable = 0;
    for (const id of w.ids) {
      if (retired.has(id)) continue;
      usable++;
      if (!pets.has(id)) return id;
    }
    return usable === 0 ? null : undefined;
  };

  const pump = () => {
    const t = o.now();
    for (const [id, p] of pets) if (p.expires <= t) pets.delete(id);
    waiters = waiters.filter((w) => !w.gone);
    for (const w of [...waiters]) {
      const free = freeFor(w);
      if (free === undefined) continue;
      waiters.splice(waiters.indexOf(w), 1);
      if (free === null) {
        w.resolve({ error: `every listed pet is retired: their quantities could not be restored (${retired.size})` });
        continue;
      }
      pets.set(free, { holder: w.holder, expires: t + w.ttlMs });
      stats.leases++;
      w.resolve({ id: free, freedAtMs: freedAt.get(free) ?? 0 });
    }
  };

  return {
    routes: {
      '/pets/acquire': (b, answer, onGone) => {
        const ids = Array.isArray(b.ids) ? (b.ids as unknown[]).map(String) : [];
        if (!ids.length) throw new Error('no pet ids');
        const w: PetWaiter = {
          ids: new Set(ids),
          holder: String(b.holder),
          ttlMs: positive(b.ttlMs, o.leaseTtlMs),
          resolve: answer,
          gone: false,
        };
        onGone(() => {
          w.gone = true;
        });
        waiters.push(w);
        stats.mostWaiting = Math.max(stats.mostWaiting, waiters.filter((x) => !x.gone).length);
        pump();
      },
      '/pets/release': (b, answer) => {
        const id = String(b.id);
        if (pets.get(id)?.holder === String(b.holder)) {
          pets.delete(id);
          freedAt.set(id, o.now());
          if (b.retire === true) retired.add(id);
        }
        pump();
        answer({});
      },
    },
    sweep: pump,
    report: () => ({ ...stats, heldAtEnd: pets.size, retired: retired.size }),
    close: () => undefined,
  };
}
