/**
 * certify against a token-bucket limiter (a legitimate choice: the spec does not say how the limit
 * is counted) under the strict ban: passes, sends nothing early, earns no ban, restores the store.
 */
import { test } from '../test.ts';
import { expectSafePassUnder, RUN_TIMEOUT_MS } from './helpers.ts';
import { runInBackground } from '../background.ts';

// A certify run of a whole server: at a lower priority than the tests that judge timing (tests/background.ts).
test.beforeAll(runInBackground);

test('token bucket + strict ban: certify passes, sends nothing early, earns no ban, restores the store', async ({}, testInfo) => {
  // Two runs at most: the second when the first could not tell (expectSafePassUnder).
  test.setTimeout(2 * RUN_TIMEOUT_MS + 60_000);
  await expectSafePassUnder(['token-bucket', 'strict-ban'], testInfo);
});
