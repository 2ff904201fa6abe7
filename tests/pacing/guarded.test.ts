/**
 * `guardedPacing` (suites/pacing/client.ts): once the run's coordinator cannot be reached, a
 * lease's answers, a pet lease and a record made once per run go to the caller's `unreachable` (the
 * suites' `pacing` fixture makes the check not certified), ending a lease is nothing to do, and
 * any other error passes through unchanged.
 */
import { test, expect } from '../test.ts';
import { startPacerCoordinator } from '../../suites/pacing/coordinator.ts';
import { guardedPacing, pacingClient, type PacingClient, type PacerUnreachable } from '../../suites/pacing/client.ts';

class Unreachable extends Error {}
const unreachable = (what: string, e: PacerUnreachable): never => {
  throw new Unreachable(`${what}: ${e.name}`);
};

test('with the coordinator gone: answers, pet leases and once-per-run records are handed to `unreachable`; ending leases is quiet', async () => {
  const coordinator = await startPacerCoordinator();
  const pacing = guardedPacing(pacingClient(coordinator.url), unreachable);
  const lease = await pacing.acquire('<API_KEY>');
  const pet = await pacing.acquirePet(['1'], 'holder-a');
  expect(await pacing.once('record', async () => 7)).toBe(7);
  await coordinator.close();

  await expect(pacing.once('another record', async () => 8)).rejects.toThrow(
    new Unreachable(`the run's record "another record": PacerUnreachable`),
  );
  await expect(lease.observe({ status: 200, headers: {}, receivedAtMs: Date.now() })).rejects.toThrow(
    new Unreachable('the answer on <API_KEY>: PacerUnreachable'),
  );
  await expect(pacing.acquirePet(['2'], 'holder-b')).rejects.toThrow(new Unreachable('a lease on a pet: PacerUnreachable'));
  await expect(lease.release()).resolves.toBeUndefined();
  await expect(pet.release()).resolves.toBeUndefined();
});

test('an error other than an unreachable coordinator passes through unchanged', async () => {
  const failing: PacingClient = {
    url: 'http://127.0.0.1:9',
    acquire: () => Promise.reject(new Error('acquire: boom')),
    acquirePet: () => Promise.reject(new Error('pet: boom')),
    once: () => Promise.reject(new Error('once: boom')),
  };
  const pacing = guardedPacing(failing, unreachable);
  await expect(pacing.acquire('<API_KEY>')).rejects.toThrow('acquire: boom');
  await expect(pacing.acquirePet(['1'], 'h')).rejects.toThrow('pet: boom');
  await expect(pacing.once('x', async () => 1)).rejects.toThrow('once: boom');
});
