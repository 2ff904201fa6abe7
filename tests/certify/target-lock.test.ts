/**
 * Certifications of one target on one machine take turns (certify/steps/target-lock.ts): a second run
 * waits for the first to end, then for a 429 the first met to stop pending; each names the other;
 * every wait has a deadline and stops on a signal; a dead holder's turn is taken over; the registry
 * holds no key and is removed when no run needs it.
 */
import { test, expect } from '../test.ts';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  acrossMachinesNote,
  isLocked,
  otherRunsLines,
  lockTarget,
  lockPaths,
  LOCK_FOLDER,
  type TargetLock,
} from '../../certify/steps/target-lock.ts';

const BASE = 'https://staging.example.com/v1';

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'certify-turns-'));
}

async function held(baseUrl: string, o: Parameters<typeof lockTarget>[1]): Promise<TargetLock> {
  const t = await lockTarget(baseUrl, o);
  if (!isLocked(t)) throw new Error(`expected the turn, got ${JSON.stringify(t)}`);
  return t;
}

test('turns: a second run of the target waits until the first gives the turn back; each names the other; the registry is removed after', async () => {
  const tmp = tempDir();
  try {
    const first = await held(BASE, { maxWaitMs: 5_000, tmp });
    let secondGot = false;
    const second = lockTarget(`${BASE}/`, { maxWaitMs: 10_000, tmp }).then((t) => ((secondGot = true), t));
    await new Promise((r) => setTimeout(r, 700));
    expect(secondGot, 'the second run still waits while the first holds the turn').toBe(false);
    const firstReport = first.release();
    const got = await second;
    expect(isLocked(got)).toBe(true);
    const secondReport = (got as TargetLock).release();
    expect(
      firstReport.waitedForThis.map((r) => r.pid),
      'the first run names the run that waited for it',
    ).toEqual([process.pid]);
    expect(
      secondReport.waitedFor.map((r) => r.pid),
      'the second run names the run it waited for',
    ).toEqual([process.pid]);
    expect(secondReport.waitedS).toBeGreaterThan(0.5);
    expect(otherRunsLines(secondReport).join('\n')).toContain('waited');
    expect(fs.existsSync(path.join(tmp, LOCK_FOLDER)), 'nothing is left in the temp folder').toBe(false);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

test('turns: runs of other targets do not wait for each other', async () => {
  const tmp = tempDir();
  try {
    const a = await held(BASE, { maxWaitMs: 1_000, tmp });
    const b = await held('https://other.example.com/v1', { maxWaitMs: 1_000, tmp });
    expect(b.report.waitedFor).toEqual([]);
    b.release();
    a.release();
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

const refusals: Array<{ name: string; abortAfterMs?: number; expected: string }> = [
  { name: 'the wait reaches its deadline', expected: 'deadline' },
  { name: 'a signal stops the wait', abortAfterMs: 200, expected: 'aborted' },
];
for (const r of refusals) {
  test(`turns: ${r.name}: the run does not get the turn, the holder still names it, and no file is left`, async () => {
    const tmp = tempDir();
    try {
      const first = await held(BASE, { maxWaitMs: 1_000, tmp });
      const ac = new AbortController();
      if (r.abortAfterMs) setTimeout(() => ac.abort('SIGINT'), r.abortAfterMs);
      const started = Date.now();
      const t = await lockTarget(BASE, { maxWaitMs: r.abortAfterMs ? 60_000 : 600, tmp, signal: ac.signal });
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(isLocked(t) ? 'held' : t.kind).toBe(r.expected);
      if (!isLocked(t) && t.kind === 'deadline') expect(t.holder?.pid).toBe(process.pid);
      const p = lockPaths(BASE, tmp);
      expect(
        fs.readdirSync(p.folder).filter((n) => n.startsWith(p.waitPrefix)),
        'it no longer counts as waiting',
      ).toEqual([]);
      expect(
        first.release().waitedForThis.map((w) => w.pid),
        'the holder names the run that gave up waiting',
      ).toEqual([process.pid]);
      expect(fs.existsSync(p.folder), 'nothing is left in the temp folder').toBe(false);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
}

test('turns: the turn of a process that is gone is taken over', async () => {
  const tmp = tempDir();
  try {
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    const p = lockPaths(BASE, tmp);
    fs.mkdirSync(p.folder, { recursive: true });
    fs.writeFileSync(p.turn, JSON.stringify({ v: 1, pid: dead, since: new Date().toISOString(), token: 'dead', target: BASE }));
    const t = await held(BASE, { maxWaitMs: 2_000, tmp });
    expect(JSON.parse(fs.readFileSync(p.turn, 'utf8')).pid).toBe(process.pid);
    t.release();
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

test('turns: the next run waits until a 429 the previous run met stops pending; one pending past the deadline refuses the turn', async () => {
  const tmp = tempDir();
  try {
    (await held(BASE, { maxWaitMs: 1_000, tmp })).release(Date.now() + 800);
    const started = Date.now();
    const next = await held(BASE, { maxWaitMs: 5_000, tmp });
    expect(Date.now() - started, 'waited for the pending Retry-After').toBeGreaterThanOrEqual(700);
    expect(next.report.waitedForRetryAfterS).toBeGreaterThan(0.5);
    next.release(Date.now() + 60_000);
    const refused = await lockTarget(BASE, { maxWaitMs: 1_000, tmp });
    expect(isLocked(refused) ? 'held' : refused.kind).toBe('deadline');
    expect(!isLocked(refused) && refused.kind === 'deadline' && refused.quietUntil).toBeTruthy();
    // The record a user deletes when the server was restarted or replaced since (its 429 no longer holds).
    const file = !isLocked(refused) && refused.kind === 'deadline' ? refused.quietFile : undefined;
    expect(file && path.dirname(path.dirname(file))).toBe(tmp);
    expect(fs.existsSync(file!)).toBe(true);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

test('turns: a 429 that no longer pends is not kept: taking any turn removes such files, of any target, and keeps one still pending', async () => {
  const tmp = tempDir();
  try {
    const other = lockPaths('https://other.example.com/v1', tmp);
    const pending = lockPaths('https://third.example.com/v1', tmp);
    fs.mkdirSync(other.folder, { recursive: true });
    fs.writeFileSync(other.quiet, JSON.stringify({ untilMs: Date.now() - 1_000 }));
    fs.writeFileSync(pending.quiet, JSON.stringify({ untilMs: Date.now() + 60_000 }));
    fs.writeFileSync(path.join(other.folder, 'not-ours.quiet'), '{}');
    const t = await held(BASE, { maxWaitMs: 1_000, tmp });
    expect(fs.existsSync(other.quiet), 'past: removed').toBe(false);
    expect(fs.existsSync(pending.quiet), 'still pending: kept').toBe(true);
    expect(fs.existsSync(path.join(other.folder, 'not-ours.quiet')), 'a file the registry did not write: untouched').toBe(true);
    t.release();
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

test('turns: no key reaches the registry (the target is its origin and path), and an unusable registry is said, not fatal', async () => {
  const tmp = tempDir();
  try {
    const secret = 'ik_turns_secret_5d1e';
    const t = await held(`https://staging.example.com/v1?key=${secret}`, { maxWaitMs: 1_000, tmp });
    const p = lockPaths(BASE, tmp);
    expect(fs.readFileSync(p.turn, 'utf8')).not.toContain(secret);
    t.release();
    const trap = tempDir();
    fs.symlinkSync(trap, path.join(tmp, LOCK_FOLDER));
    const unheld = await held(BASE, { maxWaitMs: 1_000, tmp });
    expect(unheld.report.notCoordinated).toContain('could not be kept');
    expect(fs.readdirSync(trap), 'nothing written through a symbolic link').toEqual([]);
    fs.rmSync(trap, { recursive: true, force: true });
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

test('turns: another client seen by the pacer is said at run level with what to do; none: nothing said', () => {
  expect(acrossMachinesNote([])).toBeUndefined();
  expect(acrossMachinesNote(['<API_KEY>'])).toMatch(/<API_KEY>.*another machine.*Compare the stock counts/s);
});
