/**
 * certify under staging conditions (faults/staging/): against the conformant reference server
 * behind the staging simulator, a full run passes, sends nothing on a key while its 429's
 * Retry-After is pending, earns no ban and leaves the store as it found it.
 *
 * One run combines five conditions on the fixed-window server: latency, https through a private
 * CA, a 3-pet store, a strict ban and `Connection: close`; token-bucket.test.ts runs a token-bucket
 * limiter under the strict ban. Short load settings (faults/staging/settings.ts).
 */
import { test, expect } from '../test.ts';
import { conditionsOf, startStagingTarget } from '../../faults/staging/simulator.ts';
import { expectSafePassUnder, RUN_TIMEOUT_MS } from './helpers.ts';
import { runInBackground } from '../background.ts';

// A certify run of a whole server: at a lower priority than the tests that judge timing (tests/background.ts).
test.beforeAll(runInBackground);

test('latency 40 ms + https (private CA) + 3 pets + strict ban + Connection: close: certify passes, sends nothing early, earns no ban, restores the store', async ({}, testInfo) => {
  // Two runs at most: the second when the first could not tell (expectSafePassUnder).
  test.setTimeout(2 * RUN_TIMEOUT_MS + 60_000);
  await expectSafePassUnder(['latency', 'tls', 'three-pets', 'strict-ban', 'connection-close'], testInfo);
});

test('the store comparison sees a change the run did not restore', async () => {
  const target = await startStagingTarget(conditionsOf(['three-pets']));
  try {
    const before = await target.inventory();
    expect(JSON.parse(before)).toHaveLength(3);
    const first = JSON.parse(before)[0] as { petId: number; quantity: number };
    const res = await fetch(`${target.env.BASE_URL}/inventory/${first.petId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${target.env.API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ quantity: first.quantity + 1 }),
    });
    expect(res.status).toBe(200);
    expect(await target.inventory()).not.toBe(before);
  } finally {
    await target.close();
  }
});
