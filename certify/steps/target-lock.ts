/**
 * One certification per target per machine: a lock file per target under the OS temp folder, taken
 * before anything is sent and released after the restore (spec, Endpoints 2; Limits rule 5). Why and
 * how: docs/target-lock.md.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { targetIdentity } from '../../core/journal.ts';

/** The registry folder's name under the OS temp folder. */
export const LOCK_FOLDER = 'inventory-conformance-turns';

/** A turn file not refreshed for this long is taken over (its holder hangs, or its pid was reused). */
export const STALE_MS = 5 * 60_000;

/** How often a waiting run looks again, and how often the holder refreshes its turn. */
const POLL_MS = 250;
const REFRESH_MS = 5_000;

/** Another certification of the same target on this machine. */
export interface OtherRun {
  pid: number;
  /** When it started (ISO 8601 UTC). */
  since: string;
}

/** What a run saw of other certifications of its target on this machine (conformance.json `otherRuns`). */
export interface OtherRunsReport {
  /** The runs this one waited for before sending anything to the target, and how long it waited in all (s). */
  waitedFor: OtherRun[];
  waitedS: number;
  /** The runs that waited for this one to end. */
  waitedForThis: OtherRun[];
  /** How long this run waited, after the other run ended, for a 429 it had met on the target to stop pending (s). */
  waitedForRetryAfterS?: number;
  /** When runs could not take turns (the registry folder unusable): why, in words. */
  notCoordinated?: string;
  /** The pacer saw another client on a key: what that means for the counts the run restored (`acrossMachinesNote`). */
  acrossMachines?: string;
}

/** The registry's files for one target. */
export interface LockPaths {
  folder: string;
  turn: string;
  /** Prefix of the waiting runs' files. */
  waitPrefix: string;
  /** Prefix of the files of runs that stopped waiting without the turn (a deadline, a signal), until the holder has named them. */
  leftPrefix: string;
  /** Until when a 429 the last holder met is still pending (`{ untilMs }`, local clock): the next holder waits for it. */
  quiet: string;
}

/** Where the turns of the target at `baseUrl` are kept, under `tmp` (default the OS temp folder). */
export function lockPaths(baseUrl: string, tmp = os.tmpdir()): LockPaths {
  const folder = path.join(tmp, LOCK_FOLDER);
  const id = createHash('sha256').update(targetIdentity(baseUrl)).digest('hex').slice(0, 16);
  return {
    folder,
    turn: path.join(folder, `${id}.turn`),
    waitPrefix: `${id}.wait-`,
    leftPrefix: `${id}.left-`,
    quiet: path.join(folder, `${id}.quiet`),
  };
}

interface TurnFile extends OtherRun {
  v: 1;
  /** Random: tells this holder's file from a later one of the same pid. */
  token: string;
  target: string;
}

/** The folder, created if missing; refused when it is a symbolic link or not a folder (another user's trap). */
function ensureFolder(folder: string): void {
  fs.mkdirSync(folder, { recursive: true });
  const st = fs.lstatSync(folder);
  if (st.isSymbolicLink() || !st.isDirectory()) throw new Error(`${folder} is not a folder of its own`);
}

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** Whether process `pid` is alive on this machine (EPERM: alive, another user's). */
export function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether a turn file is stale: unreadable, its process gone, or not refreshed for `STALE_MS`. */
export function isStale(file: string, now = Date.now(), isAlive = alive): boolean {
  const held = readJson<TurnFile>(file);
  if (!held) return true;
  let mtime: number;
  try {
    mtime = fs.statSync(file).mtimeMs;
  } catch {
    return false;
  }
  return !isAlive(held.pid) || now - mtime > STALE_MS;
}

/** Tries to take the turn (an exclusive create). A stale turn is removed first, if it is still the one judged stale. */
export function tryTake(
  p: LockPaths,
  mine: TurnFile,
  isAlive = alive,
): { taken: true } | { taken: false; holder?: OtherRun & { token: string } } {
  const text = JSON.stringify(mine);
  try {
    fs.writeFileSync(p.turn, text, { flag: 'wx', mode: 0o644 });
    return { taken: true };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  const held = readJson<TurnFile>(p.turn);
  if (isStale(p.turn, Date.now(), isAlive)) {
    // Remove only the file judged stale: another waiter may have taken over meanwhile.
    const again = readJson<TurnFile>(p.turn);
    if (!held || !again || again.token === held.token) fs.rmSync(p.turn, { force: true });
    return { taken: false };
  }
  return { taken: false, ...(held ? { holder: { pid: held.pid, since: held.since, token: String(held.token) } } : {}) };
}

/** A waiting run's file: who waits, and for which holder (its token). */
interface WaitFile extends OtherRun {
  holder?: string;
}

/**
 * The runs that wait, or waited, for the holder `token`: the waiting runs' files, and the files of
 * runs that stopped waiting for it (read once: each is removed, as is one left for a holder gone).
 */
export function waiting(p: LockPaths, token: string): OtherRun[] {
  let names: string[];
  try {
    names = fs.readdirSync(p.folder).filter((n) => n.startsWith(p.waitPrefix) || n.startsWith(p.leftPrefix));
  } catch {
    return [];
  }
  return names.flatMap((n) => {
    const file = path.join(p.folder, n);
    const w = readJson<WaitFile>(file);
    const left = n.startsWith(p.leftPrefix);
    if (left) fs.rmSync(file, { force: true });
    if (!w || !Number.isInteger(w.pid) || (left && w.holder !== token)) return [];
    return [{ pid: w.pid, since: String(w.since) }];
  });
}

const addRun = (list: OtherRun[], r: OtherRun) => {
  if (!list.some((x) => x.pid === r.pid && x.since === r.since)) list.push(r);
};

/**
 * A turn this run holds: `release` gives it back (with `pendingUntilMs`, local clock: until when a
 * 429 the run met is still pending on some key, so the next holder sends nothing before) and returns
 * the runs that waited for it.
 */
export interface TargetLock {
  readonly report: OtherRunsReport;
  release(pendingUntilMs?: number): OtherRunsReport;
}

/** Why `lockTarget` did not get the turn (`quietUntil`: the turn was free, but a 429 the last run met stays pending past the deadline). */
export type LockRefused =
  | { kind: 'deadline'; holder?: OtherRun; quietUntil?: string; quietFile?: string; waitedS: number }
  | { kind: 'aborted' };

/** Sleeps `ms`, or less when `signal` aborts. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Waits for the turn of the target at `baseUrl` (at most `maxWaitMs`; `signal` stops the wait).
 * A registry folder that cannot be used does not stop the run: it runs without a turn and the
 * report says so.
 */
export async function lockTarget(
  baseUrl: string,
  o: { maxWaitMs: number; signal?: AbortSignal; tmp?: string; now?: () => number; say?: (line: string) => void },
): Promise<TargetLock | LockRefused> {
  const now = o.now ?? Date.now;
  const p = lockPaths(baseUrl, o.tmp);
  const mine: TurnFile = {
    v: 1,
    pid: process.pid,
    since: new Date(now()).toISOString(),
    token: randomBytes(8).toString('hex'),
    target: targetIdentity(baseUrl),
  };
  const report: OtherRunsReport = { waitedFor: [], waitedS: 0, waitedForThis: [] };
  const waitFile = path.join(p.folder, `${p.waitPrefix}${process.pid}-${mine.token}`);
  const started = now();
  try {
    ensureFolder(p.folder);
    sweepQuiet(p.folder, now());
    let waitingFor: string | undefined;
    for (;;) {
      const tried = tryTake(p, mine);
      if (tried.taken) break;
      const holder = tried.holder;
      if (holder && !report.waitedFor.some((r) => r.pid === holder.pid && r.since === holder.since)) {
        o.say?.(
          `another certification of this target on this machine (pid ${holder.pid}, started ${holder.since}) holds its turn: waiting for it to end (at most ${Math.round(o.maxWaitMs / 1000)} s)`,
        );
      }
      if (holder) addRun(report.waitedFor, { pid: holder.pid, since: holder.since });
      if (!fs.existsSync(waitFile) || waitingFor !== holder?.token) {
        waitingFor = holder?.token;
        const w: WaitFile = { pid: process.pid, since: mine.since, ...(waitingFor ? { holder: waitingFor } : {}) };
        fs.writeFileSync(waitFile, JSON.stringify(w), { mode: 0o644 });
      }
      const gaveUp = o.signal?.aborted ? 'aborted' : now() - started >= o.maxWaitMs ? 'deadline' : undefined;
      if (gaveUp) {
        // The holder names this run too: its file stays, as one that left, until the holder reads it.
        fs.renameSync(waitFile, path.join(p.folder, `${p.leftPrefix}${process.pid}-${mine.token}`));
        if (gaveUp === 'aborted') return { kind: 'aborted' };
        return {
          kind: 'deadline',
          ...(holder ? { holder: { pid: holder.pid, since: holder.since } } : {}),
          waitedS: (now() - started) / 1000,
        };
      }
      await pause(POLL_MS, o.signal);
    }
  } catch (e) {
    return unheld(
      report,
      `the turns of this target could not be kept in ${p.folder} (${(e as Error).message}): a certification of it from this machine at the same time would not wait for this one`,
    );
  } finally {
    fs.rmSync(waitFile, { force: true });
  }
  report.waitedS = Math.round((now() - started) / 100) / 10;
  const turn = held(p, mine, report);
  const quiet = await waitQuiet(p, {
    deadlineMs: started + o.maxWaitMs,
    now,
    ...(o.signal ? { signal: o.signal } : {}),
    ...(o.say ? { say: o.say } : {}),
  });
  if (quiet.kind === 'aborted' || quiet.kind === 'deadline') {
    turn.release();
    return quiet.kind === 'aborted'
      ? quiet
      : { kind: 'deadline', quietUntil: new Date(quiet.untilMs).toISOString(), quietFile: p.quiet, waitedS: (now() - started) / 1000 };
  }
  if (quiet.waitedMs > 0) report.waitedForRetryAfterS = Math.round(quiet.waitedMs / 100) / 10;
  return turn;
}

/**
 * With the turn: waits until a 429 the last holder met has stopped pending (its `quiet` file), at
 * most until `deadlineMs`, then removes the file.
 */
async function waitQuiet(
  p: LockPaths,
  o: { deadlineMs: number; now: () => number; signal?: AbortSignal; say?: (line: string) => void },
): Promise<{ kind: 'quiet'; waitedMs: number } | { kind: 'deadline'; untilMs: number } | { kind: 'aborted' }> {
  const untilMs = Number(readJson<{ untilMs?: number }>(p.quiet)?.untilMs) || 0;
  const from = o.now();
  if (untilMs > from)
    o.say?.(
      `a 429 the previous certification of this target on this machine met is pending until ${new Date(untilMs).toISOString()}: waiting for it before sending anything`,
    );
  if (untilMs > o.deadlineMs) return { kind: 'deadline', untilMs };
  while (o.now() < untilMs) {
    if (o.signal?.aborted) return { kind: 'aborted' };
    await pause(Math.min(POLL_MS * 4, untilMs - o.now()), o.signal);
  }
  fs.rmSync(p.quiet, { force: true });
  return { kind: 'quiet', waitedMs: untilMs > from ? o.now() - from : 0 };
}

/** A run without a turn: it says why. */
function unheld(report: OtherRunsReport, why: string): TargetLock {
  report.notCoordinated = why;
  return { report, release: () => report };
}

/** The turn held: refreshed every `REFRESH_MS`, the waiting runs noted each time and at release. */
function held(p: LockPaths, mine: TurnFile, report: OtherRunsReport): TargetLock {
  const note = () => waiting(p, mine.token).forEach((w) => addRun(report.waitedForThis, w));
  const timer = setInterval(() => {
    try {
      const t = new Date();
      fs.utimesSync(p.turn, t, t);
      note();
    } catch {
      // The file went away (removed by hand): release has nothing to remove.
    }
  }, REFRESH_MS);
  timer.unref();
  let released = false;
  return {
    report,
    release(pendingUntilMs = 0) {
      if (released) return report;
      released = true;
      clearInterval(timer);
      note();
      if (pendingUntilMs > Date.now()) writeQuiet(p, pendingUntilMs);
      if (readJson<TurnFile>(p.turn)?.token === mine.token) fs.rmSync(p.turn, { force: true });
      sweepQuiet(p.folder, Date.now());
      try {
        fs.rmdirSync(p.folder);
      } catch {
        // Not empty (another target's turn, a waiting run): it stays.
      }
      return report;
    },
  };
}

/**
 * Removes the `quiet` files, of any target, whose 429 no longer pends: what a run passed on is kept
 * only while it matters (a file that is not this registry's is never touched).
 */
export function sweepQuiet(folder: string, nowMs: number): void {
  let names: string[];
  try {
    names = fs.readdirSync(folder).filter((n) => /^[0-9a-f]{16}\.quiet$/.test(n));
  } catch {
    return;
  }
  for (const n of names) {
    const file = path.join(folder, n);
    const untilMs = Number(readJson<{ untilMs?: number }>(file)?.untilMs) || 0;
    if (untilMs <= nowMs) fs.rmSync(file, { force: true });
  }
}

/** Passes on, before the turn is given back, until when a 429 is pending (the later of the file's and `untilMs`). */
function writeQuiet(p: LockPaths, untilMs: number): void {
  try {
    const before = Number(readJson<{ untilMs?: number }>(p.quiet)?.untilMs) || 0;
    fs.writeFileSync(p.quiet, JSON.stringify({ untilMs: Math.max(before, untilMs) }), { mode: 0o644 });
  } catch {
    // The registry went away: the next run starts without the hand-over (the report of this run names the 429s).
  }
}

/** Whether `lockTarget` got the turn (or runs without one). */
export const isLocked = (t: TargetLock | LockRefused): t is TargetLock => 'release' in t;

const runName = (r: OtherRun) => `pid ${r.pid}, started ${r.since}`;

/** The report's lines on other runs of the target on this machine, in words (console and conformance.md). */
export function otherRunsLines(r: OtherRunsReport | undefined): string[] {
  if (!r) return [];
  const lines: string[] = [];
  if (r.waitedFor.length) {
    lines.push(
      `another certification of this target on this machine (${r.waitedFor.map(runName).join('; ')}) was running: this run waited ${r.waitedS} s for it to end ` +
        "before sending anything to the target (runs of one target on one machine take turns, so neither takes the other's temporary counts for originals nor sends while the other's 429 is pending)",
    );
  }
  if (r.waitedForRetryAfterS) {
    lines.push(
      `then waited ${r.waitedForRetryAfterS} s more: a 429 the run before met on this target was still pending (nothing is sent while a Retry-After is pending, whoever met it)`,
    );
  }
  if (r.waitedForThis.length) {
    lines.push(
      `another certification of this target on this machine (${r.waitedForThis.map(runName).join('; ')}) waited for this run to end before sending anything to the target`,
    );
  }
  if (r.notCoordinated) lines.push(r.notCoordinated);
  if (r.acrossMachines) lines.push(r.acrossMachines);
  return lines;
}

/**
 * What another client seen by the pacer means for the counts the run restored: a run on another
 * machine does not take turns, and PATCH sets an absolute count, so each run may have restored the
 * other's temporary count. Undefined when the pacer saw no other client.
 */
export function acrossMachinesNote(keysWithAnotherClient: readonly string[]): string | undefined {
  if (!keysWithAnotherClient.length) return undefined;
  return (
    `another client used ${keysWithAnotherClient.join(', ')} during this run (see pacing). If it was a certification from another machine, ` +
    'the two runs did not take turns: each may have read a count the other had changed for a moment and restored that value. ' +
    'Compare the stock counts with what they were before both runs, and certify one target from one machine at a time.'
  );
}
