/**
 * Helpers of the Redis tests: a real `redis-server` per test file (never mocked, never skipped:
 * when it cannot start the test fails naming `apt-get install redis-server`), and a keys file with
 * extra keys so each test owns its key. Waiting for a fresh fixed window is `freshWindow` of the
 * reference server's test helpers.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_KEYS_FILE } from '../../reference-server/config.ts';
import { startRedisServer, type RedisServer } from '../../reference-server/shared-state/redis-server.ts';

export { startRedisServer, type RedisServer };

/** Extra keys, one per test: `name` → `{ plan, limits? }`. */
export const EXTRA_KEYS = {
  exact: { plan: 'free' },
  burst: { plan: 'free' },
  ban: { plan: 'enterprise', limits: { minute: 5, day: 1000 } },
  perprocess: { plan: 'free' },
  outage: { plan: 'free' },
} as const;

/** The demo keys file plus `EXTRA_KEYS` (key `ik_test_<name>_…`), in a temporary directory. */
export function keysFileWithExtras(): { file: string; keys: Record<keyof typeof EXTRA_KEYS, string>; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'redis-keys-'));
  const keys = {} as Record<keyof typeof EXTRA_KEYS, string>;
  let text = readFileSync(DEFAULT_KEYS_FILE, 'utf8');
  for (const [name, entry] of Object.entries(EXTRA_KEYS)) {
    const key = `ik_test_${name}_${Math.random().toString(16).slice(2)}`;
    keys[name as keyof typeof EXTRA_KEYS] = key;
    const limits = 'limits' in entry ? `\n    limits: { minute: ${entry.limits.minute}, day: ${entry.limits.day} }` : '';
    text += `\n  - name: ${name}\n    plan: ${entry.plan}\n    key: ${key}${limits}`;
  }
  const file = join(dir, 'keys.yaml');
  writeFileSync(file, `${text}\n`);
  return { file, keys, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
