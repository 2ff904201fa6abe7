/**
 * A separate process of the pacing tests: acquires (and optionally observes a response) on a key
 * label through `CONFORMANCE_PACER_URL`, then prints what happened as one JSON line and exits.
 * argv: <label> <action>, action = `acquire` | `observe429:<retryAfterS>`.
 */
import { pacingClient } from '../../suites/pacing/client.ts';

const [label, action] = process.argv.slice(2);
const client = pacingClient();
const askedAt = Date.now();
const lease = await client.acquire(label);
const grantedAt = Date.now();
if (action.startsWith('observe429:')) {
  const retryAfter = action.split(':')[1];
  await lease.observe({ status: 429, headers: { 'Retry-After': retryAfter, 'X-RateLimit-Remaining': '0' }, receivedAtMs: Date.now() });
} else {
  await lease.observe({ status: 200, headers: {}, receivedAtMs: Date.now() });
}
console.log(JSON.stringify({ askedAt, grantedAt, doneAt: Date.now() }));
process.exit(0);
