/**
 * A busy runner, as CI machines often are: busy loops at normal priority until every core is
 * busy, in worker threads of this process, while the matrix certifies (`npx tsx faults/cli.ts --busy …`). A
 * verdict must not depend on it: pacing decisions hold with any delay between a request leaving
 * and its answer being read.
 */
import os from 'node:os';
import { Worker } from 'node:worker_threads';

/**
 * Busy loops that keep every core busy: one per core less the cores the machine's load already
 * keeps busy (the last minute's load average), at least one. On a quiet machine that is one per
 * core; inside a busy test run, where the runner is busy already, it adds only what is missing.
 */
export function busyThreads(cores = os.availableParallelism(), load = os.loadavg()[0] ?? 0): number {
  return Math.max(1, cores - Math.floor(load));
}

/** Starts `threads` busy loops (default `busyThreads()`); the returned function stops them. */
export function startBusyLoad(threads = busyThreads()): () => Promise<void> {
  const workers = Array.from({ length: threads }, () => new Worker('for (;;) { Math.sqrt(Math.random()); }', { eval: true }));
  return async () => {
    await Promise.all(workers.map((w) => w.terminate()));
  };
}
