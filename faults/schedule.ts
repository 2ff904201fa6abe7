/**
 * How many cases of the fault matrix run at once. A base number always runs (`MATRIX_CONCURRENCY`).
 * Beyond it, another case starts only while the machine has cores to spare: a case that waits on a
 * window or a `Retry-After` leaves its share of the CPU idle, and the next case can use it. On a
 * busy machine nothing is added, so the cases never crowd one another out of a short window's
 * timing more than the base number does.
 */
import os from 'node:os';

/** CPU time of the machine, summed over its cores (milliseconds, as `os.cpus()` gives it). */
export interface CpuTimes {
  idle: number;
  total: number;
}

/** The machine's CPU times now: idle and total, summed over every core. */
export function cpuTimes(cpus: readonly os.CpuInfo[] = os.cpus()): CpuTimes {
  let idle = 0;
  let total = 0;
  for (const { times } of cpus) {
    idle += times.idle;
    total += times.user + times.nice + times.sys + times.idle + times.irq;
  }
  return { idle, total };
}

/**
 * Idle cores between two readings: 0 when they are the same (or the counters went back), at most
 * `cores`.
 */
export function idleCoresBetween(before: CpuTimes, after: CpuTimes, cores: number): number {
  const total = after.total - before.total;
  const idle = after.idle - before.idle;
  if (total <= 0 || idle < 0) return 0;
  return Math.min(cores, (cores * idle) / total);
}

/** When the matrix may start a case beyond its base number. */
export interface SparePolicy {
  /** Cases that always run at once. */
  base: number;
  /** Cases at most, the extra ones included. */
  max: number;
  /** Idle cores, over the last reading's interval, that an extra case needs. */
  idleCores: number;
  /** After a case starts, no extra one until this long has passed: a case's own start takes CPU it has not yet shown. */
  settleMs: number;
}

/** The matrix's policy: 3 at once, up to 5 while at least 0.6 of a core has been idle, one every 8 s at most. */
export function sparePolicy(base: number): SparePolicy {
  return { base, max: base + 2, idleCores: 0.6, settleMs: 8_000 };
}

/** What the scheduler knows when it may start a case. */
export interface SchedulerState {
  inFlight: number;
  /** Idle cores over the last reading's interval (`idleCoresBetween`). */
  idleCores: number;
  /** Milliseconds since the last case started. */
  sinceLastStartMs: number;
}

/** Whether another case may start now under `policy`. */
export function mayStart(policy: SparePolicy, s: SchedulerState): boolean {
  if (s.inFlight < policy.base) return true;
  return s.inFlight < policy.max && s.sinceLastStartMs >= policy.settleMs && s.idleCores >= policy.idleCores;
}

/**
 * A reader of the machine's idle cores: each call gives the idle cores since the previous call
 * that was at least `minIntervalMs` earlier (shorter intervals say little), so calls as often as a
 * scheduler likes read one steady figure.
 */
export function idleCoresReader(
  minIntervalMs = 3_000,
  read: () => CpuTimes = () => cpuTimes(),
  now: () => number = Date.now,
  cores = os.availableParallelism(),
): () => number {
  let last = { at: now(), times: read() };
  let figure = 0;
  return () => {
    const at = now();
    if (at - last.at < minIntervalMs) return figure;
    const times = read();
    figure = idleCoresBetween(last.times, times, cores);
    last = { at, times };
    return figure;
  };
}
