/**
 * `inventory-conformance restore` on its own (certify/restore.ts): usage errors never echo a key
 * and send nothing; against a small-limit target that never applies a PATCH, it paces itself
 * (0 requests before a Retry-After), exits 1 naming the entry it could not restore, and leaves it
 * open; a journal of another target is left alone and named.
 */
import { test, expect } from '../certificate/scratch.ts';
import path from 'node:path';
import { appendRecord, newEntryId, newJournalName, readJournals, type ChangeRecord } from '../../core/journal.ts';
import { runRestore } from '../../certify/restore.ts';
import { startHostileTarget } from '../hostile/target.ts';

const KEY = 'ik_restore_api_7c1e5a9b3d2f4e60';

/** A change entry; `writes`: the counts the run journaled as written on the pet. */
const change = (target: string, petId: string, original: string, writes: string[] = ['5']): ChangeRecord => ({
  v: 1,
  kind: 'change',
  entry: newEntryId(),
  at: '2026-11-25T20:00:00.000Z',
  by: 'functional UPD-02',
  target,
  petId,
  original,
  writes,
});

/** A reports folder of the test's own (removed afterwards by the `scratch` fixture) with `records` journaled. */
function reportsWith(scratch: (name: string) => string, records: ChangeRecord[]): string {
  const dir = scratch('reports');
  const file = path.join(dir, newJournalName());
  for (const r of records) appendRecord(file, r);
  return dir;
}

const USAGE: { name: string; env: Record<string, string>; error: RegExp }[] = [
  { name: 'no BASE_URL', env: { API_KEY: KEY }, error: /restore needs BASE_URL/ },
  { name: 'no API_KEY', env: { BASE_URL: 'http://127.0.0.1:1/v1' }, error: /restore needs API_KEY/ },
  {
    name: 'a key inside BASE_URL',
    env: { BASE_URL: `https://u:${KEY}@staging.example.com/v1`, API_KEY: KEY },
    error: /BASE_URL must not carry credentials/,
  },
  {
    name: 'NODE_TLS_REJECT_UNAUTHORIZED=0',
    env: { BASE_URL: 'https://staging.example.com/v1', API_KEY: KEY, NODE_TLS_REJECT_UNAUTHORIZED: '0' },
    error: /NODE_TLS_REJECT_UNAUTHORIZED=0/,
  },
];
for (const c of USAGE) {
  test(`restore: ${c.name} is a usage error (exit 2) that never prints the key`, async ({ scratch }) => {
    let out = '';
    const code = await runRestore({ env: { ...c.env, REPORTS_DIR: reportsWith(scratch, []) }, write: (t) => (out += t) });
    expect(code).toBe(2);
    expect(out).toMatch(c.error);
    expect(out.includes(KEY)).toBe(false);
  });
}

test("restore: a target that never applies the PATCH: paced (0 early requests), exit 1 naming the entry, which stays open; another target's journal is left alone and named", async ({
  scratch,
}) => {
  test.setTimeout(60_000);
  const target = await startHostileTarget({ keys: { API_KEY: KEY }, limit: 4, windowMs: 1000, retryAfter: () => '1' });
  try {
    const reports = reportsWith(scratch, [change(target.baseUrl, '1', '7'), change('https://other.example.com/v1', '3', '4')]);
    let out = '';
    const code = await runRestore({
      env: { BASE_URL: target.baseUrl, API_KEY: KEY, REPORTS_DIR: reports, MAX_RETRY_AFTER_S: '5', WORKERS: '1' },
      write: (t) => (out += t),
    });
    expect(code, out).toBe(1);
    expect(out).toMatch(/restore: target left changed: written back, but the list shows 5; set its quantity to 7 by hand/);
    expect(out).toMatch(/holds 1 open entry for another target, https:\/\/other\.example\.com\/v1: left alone/);
    expect(out.includes(KEY)).toBe(false);
    expect(target.counts().early, 'no request before a Retry-After passed').toBe(0);
    expect(readJournals(reports)[0]!.open).toHaveLength(2);
  } finally {
    await target.close();
  }
});
