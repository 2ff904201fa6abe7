/**
 * The load lock (`suites/load/shared.ts`): two load checks never send at the same time; a check
 * that sets the lock aside for a wait lets another run in it, and takes the lock back before it
 * sends again.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, expect } from '@playwright/test';
import { withLoadLock } from '../../suites/load/shared.ts';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const quiet = () => undefined;

test('a check that sets the lock aside during a wait lets another check run in it, and never sends while the other holds it', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'load-lock-'));
  const events: string[] = [];
  let holders = 0;
  let most = 0;
  const send = async (who: string, ms: number) => {
    holders++;
    most = Math.max(most, holders);
    events.push(`${who} sends`);
    await sleep(ms);
    holders--;
  };
  try {
    const overload = withLoadLock(dir, 'overload', 10, async (lock) => {
      await send('burst 1', 50);
      await lock.setAsideWhile(() => sleep(300));
      await send('burst 2', 50);
    }, quiet);
    await sleep(20);
    const capacity = withLoadLock(dir, 'capacity', 10, async () => {
      await send('capacity', 600);
    }, quiet);
    await Promise.all([overload, capacity]);
    // The capacity run fits in the wait, and burst 2 waits for it to end (the wait alone ends first).
    expect(events).toEqual(['burst 1 sends', 'capacity sends', 'burst 2 sends']);
    expect(most).toBe(1);
    expect(fs.existsSync(path.join(dir, 'load', '.lock'))).toBe(false);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('without another check, a wait with the lock set aside changes nothing and the lock is released at the end', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'load-lock-'));
  try {
    const value = await withLoadLock(dir, 'overload', 10, async (lock) => {
      const inner = await lock.setAsideWhile(async () => {
        expect(fs.existsSync(path.join(dir, 'load', '.lock'))).toBe(false);
        return 7;
      });
      expect(fs.readFileSync(path.join(dir, 'load', '.lock'), 'utf8')).toMatch(new RegExp(`^${process.pid}:`));
      return inner;
    }, quiet);
    expect(value).toBe(7);
    expect(fs.existsSync(path.join(dir, 'load', '.lock'))).toBe(false);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the overload check takes the lock before another waiting check, so its next burst keeps to its window', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'load-lock-'));
  const events: string[] = [];
  const hold = (who: string, ms: number) => async () => {
    events.push(who);
    await sleep(ms);
  };
  try {
    const list = withLoadLock(dir, 'capacity', 10, hold('capacity list', 300), quiet);
    await sleep(50);
    // The overload check and the next capacity run both wait for the list run to end.
    const overload = withLoadLock(dir, 'overload', 10, hold('burst', 20), quiet, { first: true });
    const mix = withLoadLock(dir, 'capacity-mix', 10, hold('capacity mix', 20), quiet);
    await Promise.all([list, overload, mix]);
    expect(events).toEqual(['capacity list', 'burst', 'capacity mix']);
    expect(fs.readdirSync(path.join(dir, 'load'))).toEqual([]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
