/**
 * The generated checks change any listed pet and judge every one against a model of the store
 * (`stateful.ts`, `run-cases.ts`, `consistency.ts`). While they run, they hold the lease of every
 * listed pet from the run's coordinator (suites/pacing), as each other check holds the pet it
 * changes: no other check changes a pet meanwhile, whatever phase it runs in. The capacity mix of
 * the load phase holds one pet for its load and restore; the generated checks wait for it before
 * their first request. The wait is bounded: past it they run holding what they got, and a count
 * another check wrote is read as another client's (not certified, never failed).
 * Under `readonly` nothing is changed, so nothing is held.
 *
 * An operation that neither lists the pets nor names one (`touchesPets`) is sent without the hold,
 * and first: its cases run while the capacity mix still holds its pet, instead of after it.
 */
import { test as base, type ApiClient } from '../fixtures.ts';
import { pacingClient, type PetLease } from '../pacing/client.ts';
import { readSettings } from '../../settings/index.ts';
import type { Operation } from './document.ts';

/** The worker's hold on the pets, taken by its first test. */
interface PetsHeld {
  hold(api: ApiClient, waitMs: number): Promise<void>;
}

/** The `petId`s of a list body, as exact strings (none when it is not a list). */
export function petIdsOf(json: unknown): string[] {
  if (!Array.isArray(json)) return [];
  return json
    .map((item) => (item && typeof item === 'object' ? (item as { petId?: unknown }).petId : undefined))
    .filter((id): id is number | bigint => typeof id === 'bigint' || (typeof id === 'number' && Number.isInteger(id)))
    .map(String);
}

/** Leases each of `ids` in turn until `signal` ends the wait; returns what it holds. */
async function leaseEach(ids: readonly string[], holder: string, ttlMs: number, signal: AbortSignal): Promise<PetLease[]> {
  const pacing = pacingClient();
  const leases: PetLease[] = [];
  for (const id of ids) {
    try {
      leases.push(await pacing.acquirePet([id], holder, ttlMs, signal));
    } catch {
      // Retired (its restore failed earlier), or the wait ran out: held by another check.
      if (signal.aborted) break;
    }
  }
  return leases;
}

/**
 * The operation reads or changes pets: it names one (a path parameter: its cases list the pets for
 * an id), or it lists them (another operation names an item under its path).
 */
export function touchesPets(op: Operation, operations: readonly Operation[]): boolean {
  if (op.pathParameters.length) return true;
  return operations.some((o) => o.base === op.base && o.pathParameters.length > 0 && o.path.startsWith(`${op.path.replace(/\/$/, '')}/`));
}

/** `operations` with those that touch no pet first, each group in document order. */
export function petFreeFirst(operations: readonly Operation[]): Operation[] {
  const free = operations.filter((op) => !touchesPets(op, operations));
  return [...free, ...operations.filter((op) => touchesPets(op, operations))];
}

export const test = base.extend<{ petsHeldByRun: void; touchesPets: boolean }, { petsHeld: PetsHeld }>({
  // Whether the test's operation reads or changes pets (`touchesPets`); a test that does not runs without the hold.
  touchesPets: [true, { option: true }],
  petsHeld: [
    async ({ conformance }, use) => {
      const leases: PetLease[] = [];
      let held: Promise<void> | undefined;
      // Held for the generated phase at most (a worker that dies lets them go when they expire).
      const ttlMs = (readSettings(process.env).values.PHASE_TIMEOUT_S + 60) * 1000;
      await use({
        hold(api, waitMs) {
          held ??= (async () => {
            if (conformance.profile === 'readonly' || !api.hasKey('api')) return;
            const ids = petIdsOf((await api.listInventory()).json);
            leases.push(...(await leaseEach(ids, `generated-${process.pid}`, ttlMs, AbortSignal.timeout(waitMs))));
          })().catch(() => undefined);
          return held;
        },
      });
      await Promise.all(leases.map((l) => l.release().catch(() => undefined)));
    },
    { scope: 'worker' },
  ],
  petsHeldByRun: [
    async ({ petsHeld, api, touchesPets }, use, testInfo) => {
      // Half the first test's time for the wait, the rest for the test itself.
      if (touchesPets) await petsHeld.hold(api, testInfo.timeout ? testInfo.timeout / 2 : 60_000);
      await use();
    },
    { auto: true },
  ],
});
