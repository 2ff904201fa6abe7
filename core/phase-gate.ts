/**
 * The files of `CERTIFY_PHASES_DIR` through which certify opens a phase (`<phase>.open`, its deadline),
 * gets its results (`<phase>.json`) and hears of a first request (docs/architecture.md, "Phases: one Playwright run").
 */
import fs from 'node:fs';
import path from 'node:path';

/** Environment variable naming the folder of the run's phase files. */
export const PHASES_DIR_VARIABLE = 'CERTIFY_PHASES_DIR';
/** Environment variable holding the run's phase plan (`PhasePlan`, JSON). */
export const PHASE_PLAN_VARIABLE = 'CERTIFY_PHASE_PLAN';

/** What certify tells the run's reporter about each phase it runs. */
export interface PhasePlan {
  /** Phases in run order, each with the phases that must have ended before it opens. */
  phases: { name: string; after: string[]; yieldsAtStart: boolean; startFirst: boolean }[];
  /** PHASE_TIMEOUT_S: a phase's checks end at most this long after the phase opened. */
  phaseTimeoutS: number;
  /** The longest a yielding phase waits for the phases that start first (START_FIRST_MAX_MS). */
  startFirstMaxMs: number;
}

/** `<phase>.open`: the phase may start; its checks end by `deadline` (epoch ms). */
export interface PhaseOpening {
  openedAt: number;
  deadline: number;
}

export const openFile = (dir: string, phase: string) => path.join(dir, `${phase}.open`);
/** `first-request`: the run-wide pacer has granted a request since the run started (certify writes it). */
export const firstRequestFile = (dir: string) => path.join(dir, 'first-request');
/** `run.json`: how the run ended, written by the reporter's `onEnd`. */
export const runFile = (dir: string) => path.join(dir, 'run.json');
export const resultFile = (dir: string, phase: string) => path.join(dir, `${phase}.json`);

/** Writes a file whole or not at all (a reader never sees half of it). */
export function writeAtomically(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const scratch = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(scratch, text);
  fs.renameSync(scratch, file);
}

/** The opening of `phase`, or undefined while it is not open (or the file does not read). */
export function readOpening(dir: string, phase: string): PhaseOpening | undefined {
  try {
    const v = JSON.parse(fs.readFileSync(openFile(dir, phase), 'utf8')) as Partial<PhaseOpening>;
    return typeof v.openedAt === 'number' && typeof v.deadline === 'number' ? { openedAt: v.openedAt, deadline: v.deadline } : undefined;
  } catch {
    return undefined;
  }
}

/** Resolves with `read()`'s first defined value, polled every `everyMs`; undefined once `deadline` (epoch ms) passes or `signal` aborts. */
export async function pollFor<T>(read: () => T | undefined, deadline: number, signal?: AbortSignal, everyMs = 100): Promise<T | undefined> {
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() >= deadline || signal?.aborted) return undefined;
    await new Promise((r) => setTimeout(r, Math.min(everyMs, Math.max(1, deadline - Date.now()))));
  }
}
