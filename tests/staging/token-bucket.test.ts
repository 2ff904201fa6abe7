/**
 * certify against a token-bucket limiter (a legitimate choice: the spec does not say how the limit
 * is counted) under the strict ban: passes, sends nothing early, earns no ban, restores the store.
 */
import { test } from '../test.ts';
import { expectSafePass, RUN_TIMEOUT_MS, runUnder } from './helpers.ts';
import { runInBackground } from '../background.ts';

// A certify run of a whole server: at a lower priority than the tests that judge timing (tests/background.ts).
test.beforeAll(runInBackground);

test('token bucket + strict ban: certify passes, sends nothing early, earns no ban, restores the store', async () => {
  test.setTimeout(RUN_TIMEOUT_MS + 60_000);
  const conditions = ['token-bucket', 'strict-ban'];
  expectSafePass(conditions.join(' + '), await runUnder(conditions));
});
