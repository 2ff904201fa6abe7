import { test, expect } from '../test.ts';
import { caseScheduler } from '../../faults/scheduler.ts';

/** Cases a..e and a start function whose runs end when the test says so (or when called off, if `obeys`). */
function harness(concurrency: number, obeys = true) {
  const cases = ['a', 'b', 'c', 'd', 'e'].map((id) => ({ id }));
  const started: string[] = [];
  const extras: Array<number | undefined> = [];
  const finish = new Map<string, (o: string) => void>();
  const discarded: string[] = [];
  const s = caseScheduler<{ id: string }, string, number>(
    cases,
    concurrency,
    (c, signal, extra) => {
      started.push(c.id);
      extras.push(extra);
      return new Promise<string>((resolve) => {
        finish.set(c.id, resolve);
        if (obeys) signal.addEventListener('abort', () => resolve(`${c.id}:called off`));
      });
    },
    (_c, o) => {
      discarded.push(o);
    },
  );
  const end = async (id: string) => {
    finish.get(id)!(`${id}:done`);
    await new Promise((r) => setImmediate(r));
  };
  /** Case `id` asked for by a test, its run ended, and the outcome the test received. */
  const askAndEnd = async (id: string) => {
    const outcome = s.outcomeOf(cases.find((c) => c.id === id)!);
    await end(id);
    return await outcome;
  };
  return { cases, s, started, extras, end, askAndEnd, discarded };
}

test('scheduler: the case asked for and the next ones run ahead, up to the concurrency; each end starts the next', async () => {
  const h = harness(3);
  const a = h.s.outcomeOf(h.cases[0]!);
  expect(h.started).toEqual(['a', 'b', 'c']);
  await h.end('a');
  expect(await a).toBe('a:done');
  expect(h.started).toEqual(['a', 'b', 'c', 'd']);
  // A case asked for and already running is not started again.
  const b = h.s.outcomeOf(h.cases[1]!);
  await h.end('b');
  expect(await b).toBe('b:done');
  expect(h.started).toEqual(['a', 'b', 'c', 'd', 'e']);
});

test('scheduler: a case asked for out of order starts at once, beyond the concurrency, and the ones before it are not started', async () => {
  const h = harness(1);
  void h.s.outcomeOf(h.cases[0]!);
  expect(h.started).toEqual(['a']);
  void h.s.outcomeOf(h.cases[3]!);
  expect(h.started).toEqual(['a', 'd']);
  await h.end('a');
  await h.end('d');
  expect(h.started).toEqual(['a', 'd', 'e']);
});

test('scheduler: again starts a new run of the case with its extra', async () => {
  const h = harness(1);
  expect(await h.askAndEnd('a')).toBe('a:done');
  void h.s.again(h.cases[0]!, 20_000);
  expect(h.started.filter((id) => id === 'a')).toHaveLength(2);
  expect(h.extras.at(-1)).toBe(20_000);
});

test('scheduler: close calls off every run, discards every outcome (a run whose test timed out included), and starts nothing more', async () => {
  const h = harness(3);
  // 'a' was asked for by a test that ended before its run did (a timeout): nobody removed its reports.
  void h.s.outcomeOf(h.cases[0]!);
  const closed = await h.s.close(1_000);
  expect(closed).toEqual({ calledOff: 2, unfinished: 0 });
  expect(h.discarded.sort()).toEqual(['a:called off', 'b:called off', 'c:called off']);
  expect(h.started).toEqual(['a', 'b', 'c']);
});

test('scheduler: close hands discard the outcome a test already received too (discard is idempotent)', async () => {
  const h = harness(1);
  expect(await h.askAndEnd('a')).toBe('a:done');
  await h.s.close(1_000);
  expect(h.discarded).toContain('a:done');
});

test('scheduler: close waits no longer than its deadline for a run that ignores being called off', async () => {
  const h = harness(2, false);
  void h.s.outcomeOf(h.cases[0]!);
  const t0 = Date.now();
  const closed = await h.s.close(200);
  expect(closed).toEqual({ calledOff: 1, unfinished: 2 });
  expect(Date.now() - t0).toBeLessThan(2_000);
  expect(h.discarded).toEqual([]);
});

test('scheduler: a run started ahead that fails before any test asks for it is no unhandled rejection; the test that asks sees the error', async () => {
  const cases = ['a', 'b'].map((id) => ({ id }));
  const s = caseScheduler<{ id: string }, string, never>(
    cases,
    2,
    (c) => (c.id === 'b' ? Promise.reject(new Error('EADDRINUSE')) : Promise.resolve('a:done')),
    () => undefined,
  );
  expect(await s.outcomeOf(cases[0]!)).toBe('a:done');
  await new Promise((r) => setTimeout(r, 50));
  await expect(s.outcomeOf(cases[1]!)).rejects.toThrow('EADDRINUSE');
});

test('scheduler: after close nothing starts; a case asked for then is refused, naming it', async () => {
  const h = harness(2);
  await h.s.close(1_000);
  const started = h.started.length;
  await expect(h.s.outcomeOf(h.cases[4]!)).rejects.toThrow(/closed: e was not started/);
  await expect(h.s.again(h.cases[0]!, 1)).rejects.toThrow(/closed: a was not started/);
  expect(h.started).toHaveLength(started);
});
