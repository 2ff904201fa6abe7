/**
 * A busy runner, as CI machines often are: one busy loop per core at normal priority, in worker
 * threads of this process, while the matrix certifies (`npx tsx faults/cli.ts --busy …`). A
 * verdict must not depend on it: pacing decisions hold with any delay between a request leaving
 * and its answer being read.
 */
import os from 'node:os';
import { Worker } from 'node:worker_threads';

/** Starts `threads` busy loops (default one per core); the returned function stops them. */
export function startBusyLoad(threads = os.availableParallelism()): () => Promise<void> {
  const workers = Array.from({ length: threads }, () => new Worker('for (;;) { Math.sqrt(Math.random()); }', { eval: true }));
  return async () => {
    await Promise.all(workers.map((w) => w.terminate()));
  };
}
