/**
 * `inventory-conformance restore` on its own (certify/restore.ts): usage errors never echo a key
 * and send nothing; against a small-limit target that never applies a PATCH, it paces itself
 * (0 requests before a Retry-After), exits 1 naming the entry it could not restore, and leaves it
 * open; a journal of another target is left alone and named.
 */
import { test, expect } from '../certificate/scratch.ts';
import path from 'node:path';
import {
  appendRecord,
  newEntryId,
  newJournalName,
  readJournals,
  targetIdentity,
  type ChangeRecord,
  type JournalRecord,
  type LimitRecord,
} from '../../core/journal.ts';
import { main } from '../../cli/main.ts';
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
function reportsWith(scratch: (name: string) => string, records: JournalRecord[]): string {
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

/** A 429 on `label` as a run that died right after it journaled it: pending until `untilMs`. */
const limit = (baseUrl: string, label: string, retryAfter: string, untilMs: number): LimitRecord => ({
  v: 1,
  kind: 'limit',
  entry: newEntryId(),
  at: new Date().toISOString(),
  by: 'pacer (certify)',
  target: targetIdentity(baseUrl),
  label,
  retryAfter,
  date: new Date().toUTCString(),
  untilMs,
});

/** Spends API_KEY's window on `target` until a 429; its Retry-After (s). */
async function drivenTo429(baseUrl: string): Promise<number> {
  for (let i = 0; i < 20; i++) {
    const res = await fetch(`${baseUrl}/inventory`, { headers: { authorization: `Bearer ${KEY}` } });
    await res.arrayBuffer();
    if (res.status === 429) return Number(res.headers.get('retry-after'));
  }
  throw new Error('no 429');
}

test('restore: a 429 an earlier run journaled (killed right after it) is waited out before anything is sent on its key: 0 early requests, and it says so', async ({
  scratch,
}) => {
  test.setTimeout(60_000);
  const target = await startHostileTarget({ keys: { API_KEY: KEY }, limit: 3, windowMs: 3000, retryAfter: () => '3' });
  try {
    const retryAfter = await drivenTo429(target.baseUrl);
    const reports = reportsWith(scratch, [
      limit(target.baseUrl, '<API_KEY>', String(retryAfter), Date.now() + retryAfter * 1000 + 50),
      change(target.baseUrl, '1', '5'),
    ]);
    let out = '';
    const started = Date.now();
    const code = await runRestore({
      env: { BASE_URL: target.baseUrl, API_KEY: KEY, REPORTS_DIR: reports, MAX_RETRY_AFTER_S: '10', WORKERS: '1' },
      write: (t) => (out += t),
    });
    expect(code, out).toBe(0);
    expect(out).toMatch(
      /restore: a 429 an earlier run met on <API_KEY> .*Retry-After: 3.*this run waits \d+ s before it sends anything on it/,
    );
    expect(target.counts().early, 'nothing sent on the key before the Retry-After passed').toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    expect(out.includes(KEY)).toBe(false);
  } finally {
    await target.close();
  }
});

test('restore: a journaled 429 still pending beyond MAX_RETRY_AFTER_S: the key is named with when it may be used again, nothing is sent on it, exit 1 naming why; the entry stays open', async ({
  scratch,
}) => {
  test.setTimeout(60_000);
  const target = await startHostileTarget({ keys: { API_KEY: KEY }, limit: 3, windowMs: 3000 });
  try {
    const reports = reportsWith(scratch, [
      limit(target.baseUrl, '<API_KEY>', '595', Date.now() + 595_000),
      change(target.baseUrl, '1', '7'),
    ]);
    let out = '';
    const code = await runRestore({
      env: { BASE_URL: target.baseUrl, API_KEY: KEY, REPORTS_DIR: reports, MAX_RETRY_AFTER_S: '5', WORKERS: '1' },
      write: (t) => (out += t),
    });
    expect(code, out).toBe(1);
    expect(out).toMatch(
      /<API_KEY> looks banned: it may be used again at \d{4}-\d\d-\d\dT.*longer than MAX_RETRY_AFTER_S=5 s: nothing is sent on it/,
    );
    expect(out).toMatch(/restore: stopped: /);
    expect(target.counts().requests.API_KEY ?? 0, 'nothing sent on API_KEY').toBe(0);
    expect(readJournals(reports).flatMap((j) => j.open)).toHaveLength(1);
  } finally {
    await target.close();
  }
});

test('restore --forget: closes the open entries of a pet dealt with by hand, sending nothing; a pet with no open entry, or a malformed id, is a usage error (exit 2) that echoes no key', async ({
  scratch,
}) => {
  const base = 'http://127.0.0.1:9/v1';
  const reports = reportsWith(scratch, [change(base, '7', '5'), change(base, '9', '3')]);
  const io = (env: Record<string, string>) => {
    const o = { out: '', err: '' };
    return {
      o,
      io: { stdout: (t: string) => (o.out += t), stderr: (t: string) => (o.err += t), env, cwd: scratch('cwd') },
    };
  };
  const env = { BASE_URL: base, REPORTS_DIR: reports, API_KEY: KEY };
  const unknown = io(env);
  expect(await main(['restore', '--forget', '8'], unknown.io)).toBe(2);
  expect(unknown.o.out + unknown.o.err).toMatch(/--forget: no open entry for pet 8/);
  const secret = io(env);
  expect(await main(['restore', '--forget', `${KEY} x`], secret.io)).toBe(2);
  expect(secret.o.err).toMatch(/--forget needs pet ids/);
  expect((secret.o.out + secret.o.err).includes(KEY), 'the key is never echoed').toBe(false);
  const both = io(env);
  expect(await main(['restore', '--forget', '7', '--dry-run'], both.io)).toBe(2);
  expect(readJournals(reports).flatMap((j) => j.open)).toHaveLength(2);
  const done = io(env);
  expect(await main(['restore', '--forget', '7'], done.io)).toBe(0);
  expect(done.o.out).toMatch(/forgot 1 open entry of pet 7/);
  expect(readJournals(reports).flatMap((j) => j.open.map((e) => (e as ChangeRecord).petId))).toEqual(['9']);
  expect(readJournals(reports)[0]!.records.some((r) => r.kind === 'done' && r.how === 'forgotten')).toBe(true);
  const help = io(env);
  await main(['restore', '--help'], help.io);
  expect(help.o.out).toMatch(/--forget <value>/);
  expect(help.o.out).toMatch(/left alone/);
});
