/**
 * The coordinator's once-per-run values: a sequence run once per run (e.g. the 429 sequence),
 * whatever worker restarts. The first caller computes, the others wait and read its value; a
 * failed computation lets the next caller try. Kept in memory only.
 *
 * Routes: `/once/claim {name, ttlMs?}` → `{value}` when computed, else `{compute: token}` to one
 * caller while the others wait; `/once/put {name, token, value}`; `/once/abandon {name, token}`.
 */
import { positive, type Service } from './service.ts';

interface OnceWaiter {
  ttlMs: number;
  resolve: (a: object) => void;
  gone: boolean;
}

interface OnceValue {
  value?: unknown;
  done: boolean;
  /** The caller computing it, and until when its claim holds. */
  token?: string;
  expires: number;
  waiters: OnceWaiter[];
}

export function oncePerRun(o: { leaseTtlMs: number; now: () => number }): Service<{ values: number }> {
  const once = new Map<string, OnceValue>();
  let seq = 0;

  /** Answers the waiters of a value: the value, or the next one computes it. */
  const pump = (name: string) => {
    const v = once.get(name);
    if (!v) return;
    v.waiters = v.waiters.filter((w) => !w.gone);
    if (v.done) {
      for (const w of v.waiters.splice(0)) w.resolve({ value: v.value });
      return;
    }
    const t = o.now();
    if (v.token && v.expires > t) return;
    const w = v.waiters.shift();
    if (!w) {
      v.token = undefined;
      return;
    }
    v.token = `O${++seq}`;
    v.expires = t + w.ttlMs;
    w.resolve({ compute: v.token });
  };

  return {
    routes: {
      '/once/claim': (b, answer, onGone) => {
        const name = String(b.name);
        let v = once.get(name);
        if (!v) once.set(name, (v = { done: false, expires: 0, waiters: [] }));
        const w: OnceWaiter = { ttlMs: positive(b.ttlMs, o.leaseTtlMs), resolve: answer, gone: false };
        onGone(() => {
          w.gone = true;
        });
        v.waiters.push(w);
        pump(name);
      },
      '/once/put': (b, answer) => {
        const v = once.get(String(b.name));
        if (!v || v.token !== String(b.token)) return answer({ error: 'not the holder of this claim' });
        v.done = true;
        v.value = b.value;
        pump(String(b.name));
        answer({});
      },
      '/once/abandon': (b, answer) => {
        const v = once.get(String(b.name));
        if (v && v.token === String(b.token)) {
          v.token = undefined;
          pump(String(b.name));
        }
        answer({});
      },
    },
    sweep() {
      const t = o.now();
      for (const [name, v] of once) if (!v.done && v.token && v.expires <= t) pump(name);
    },
    report: () => ({ values: [...once.values()].filter((v) => v.done).length }),
    close: () => undefined,
  };
}
