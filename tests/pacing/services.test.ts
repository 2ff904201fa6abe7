/**
 * The coordinator's services, each on its own (suites/pacing): pet leases and once-per-run values,
 * driven through their routes with an injected clock, no HTTP.
 */
import { test, expect } from '../test.ts';
import { petLeases } from '../../suites/pacing/pet-leases.ts';
import { oncePerRun } from '../../suites/pacing/once-per-run.ts';
import { pacingService } from '../../suites/pacing/pacing-service.ts';
import type { Route } from '../../suites/pacing/service.ts';

/** Calls a route; the answer (if any yet) lands in the returned box. */
function call(route: Route, body: Record<string, unknown>): { answer?: Record<string, unknown>; gone: () => void } {
  const box: { answer?: Record<string, unknown>; gone: () => void } = { gone: () => undefined };
  route(
    body,
    (a) => (box.answer = a as Record<string, unknown>),
    (f) => (box.gone = f),
  );
  return box;
}

test('pet leases: one holder per pet; the next waiter gets it on release; an expired lease frees it; a retired pet is never handed out', () => {
  let now = 1000;
  const pets = petLeases({ leaseTtlMs: 5000, now: () => now });
  const a = call(pets.routes['/pets/acquire'], { ids: ['1'], holder: 'a' });
  const b = call(pets.routes['/pets/acquire'], { ids: ['1'], holder: 'b' });
  expect(a.answer).toEqual({ id: '1', freedAtMs: 0 });
  expect(b.answer).toBeUndefined();
  call(pets.routes['/pets/release'], { id: '1', holder: 'a' });
  expect(b.answer).toEqual({ id: '1', freedAtMs: 1000 });
  const c = call(pets.routes['/pets/acquire'], { ids: ['1'], holder: 'c', ttlMs: 100 });
  expect(c.answer).toBeUndefined();
  now += 6000; // b died: its lease expires
  pets.sweep();
  expect(c.answer).toMatchObject({ id: '1' });
  call(pets.routes['/pets/release'], { id: '1', holder: 'c', retire: true });
  expect(call(pets.routes['/pets/acquire'], { ids: ['1'], holder: 'd' }).answer?.error).toMatch(/retired/);
  expect(pets.report()).toEqual({ leases: 3, mostWaiting: 1, heldAtEnd: 0, retired: 1 });
});

test('once per run: one computes, the others wait for its value; an abandoned or expired claim passes to the next', () => {
  let now = 0;
  const once = oncePerRun({ leaseTtlMs: 1000, now: () => now });
  const first = call(once.routes['/once/claim'], { name: 'seq' });
  const second = call(once.routes['/once/claim'], { name: 'seq' });
  const third = call(once.routes['/once/claim'], { name: 'seq' });
  expect(first.answer).toMatchObject({ compute: expect.any(String) });
  expect(second.answer).toBeUndefined();
  call(once.routes['/once/abandon'], { name: 'seq', token: first.answer!.compute });
  expect(second.answer).toMatchObject({ compute: expect.any(String) });
  now += 2000; // the second caller died while computing
  once.sweep();
  expect(third.answer).toMatchObject({ compute: expect.any(String) });
  expect(call(once.routes['/once/put'], { name: 'seq', token: second.answer!.compute, value: 1 }).answer).toMatchObject({
    error: expect.any(String),
  });
  call(once.routes['/once/put'], { name: 'seq', token: third.answer!.compute, value: { n: 7 } });
  expect(call(once.routes['/once/claim'], { name: 'seq' }).answer).toEqual({ value: { n: 7 } });
  expect(once.report()).toEqual({ values: 1 });
});

test('pacing: a waiter that gets no grant within MAX_RETRY_AFTER_S closes its key (not certified), whatever held it; nothing more is granted on it', async () => {
  // The first request stays in flight (its answer never comes) and no headers were learnt: the
  // pacer sends one request at a time, so the second waits on something that never comes.
  const pacing = pacingService({ maxWaitMs: 150, leaseTtlMs: 60_000, reserve: 0, now: () => Date.now() });
  try {
    const first = call(pacing.routes['/acquire'], { label: '<API_KEY>' });
    expect(first.answer).toMatchObject({ granted: 1 });
    const second = call(pacing.routes['/acquire'], { label: '<API_KEY>' });
    expect(second.answer, 'one request at a time until the headers are known').toBeUndefined();
    await new Promise((r) => setTimeout(r, 400));
    expect(second.answer?.notCertified, 'the waiter is answered at its deadline, as not certified').toMatch(
      /no grant within 0 s \(MAX_RETRY_AFTER_S\); nothing more is sent on <API_KEY>/,
    );
    expect(call(pacing.routes['/acquire'], { label: '<API_KEY>' }).answer?.notCertified, 'the key stays closed').toMatch(
      /nothing more is sent/,
    );
    expect(call(pacing.routes['/acquire'], { label: '<LOAD_KEY>' }).answer, 'another key is not affected').toMatchObject({ granted: 1 });
  } finally {
    pacing.close();
  }
});
