/**
 * The fault matrix's scheduler: its cases run in a fixed order, each asked for by one test, and up to
 * `concurrency` runs are kept going ahead of the test that needs them. It owns every run it starts:
 * `close` calls off those still going (started ahead for a test that was not selected or never
 * came, or asked for by a test that timed out) and waits for all of them to end, so none is left
 * running on a harness tree that is about to be removed, and none leaves its reports behind.
 */

/** Starts one run of `c`; `signal` calls it off (the run then ends as soon as it can). */
export type StartRun<C, O, E> = (c: C, signal: AbortSignal, extra: E | undefined) => Promise<O>;

export interface CaseScheduler<C, O, E> {
  /** The outcome of `c`'s run: the one started ahead of time, or one started now; the cases after it are started ahead. */
  outcomeOf(c: C): Promise<O>;
  /** A new run of `c` with `extra` (a second run the test judges instead of the first). */
  again(c: C, extra: E): Promise<O>;
  /**
   * Calls off every run, waits at most `deadlineMs` for every run to end, and hands every outcome
   * to `discard`: a test that timed out never cleaned up after its run, so the outcomes tests did
   * clean up come again (`discard` must be idempotent). Returns how many runs no test asked for
   * were called off, and how many had not ended by the deadline.
   */
  close(deadlineMs: number): Promise<{ calledOff: number; unfinished: number }>;
}

interface Run<C, O> {
  c: C;
  promise: Promise<O>;
  asked: boolean;
}

/**
 * A scheduler over `cases` (in order) with at most `concurrency` runs going at once, except a run
 * a test asks for, which always starts. `discard` receives, at `close`, the outcome of every run
 * (to remove what it wrote; idempotent, since a test may have removed it already).
 */
export function caseScheduler<C extends { id: string }, O, E = never>(
  cases: readonly C[],
  concurrency: number,
  start: StartRun<C, O, E>,
  discard: (c: C, outcome: O) => void | Promise<void>,
): CaseScheduler<C, O, E> {
  const stop = new AbortController();
  const runs = new Map<string, Run<C, O>>();
  const all: Run<C, O>[] = [];
  let inFlight = 0;
  let nextIndex = 0;

  const launch = (c: C, asked: boolean, extra?: E): Run<C, O> => {
    // After `close` nothing starts: a run started then would be neither awaited nor discarded.
    if (stop.signal.aborted) {
      const promise = Promise.reject(new Error(`the matrix's scheduler is closed: ${c.id} was not started`));
      promise.catch(() => {});
      return { c, asked, promise };
    }
    inFlight++;
    const promise = start(c, stop.signal, extra).finally(() => {
      inFlight--;
      pump();
    });
    // A run started ahead may fail before any test asks for it: the test that does sees the rejection.
    promise.catch(() => {});
    const run: Run<C, O> = { c, asked, promise };
    all.push(run);
    return run;
  };
  const pump = (): void => {
    while (!stop.signal.aborted && inFlight < concurrency && nextIndex < cases.length) {
      const c = cases[nextIndex++]!;
      if (!runs.has(c.id)) runs.set(c.id, launch(c, false));
    }
  };

  return {
    outcomeOf(c) {
      const index = cases.indexOf(c);
      if (nextIndex <= index) nextIndex = index + 1;
      let run = runs.get(c.id);
      if (!run) runs.set(c.id, (run = launch(c, true)));
      run.asked = true;
      pump();
      return run.promise;
    },
    again(c, extra) {
      return launch(c, true, extra).promise;
    },
    async close(deadlineMs) {
      const calledOff = all.filter((r) => !r.asked);
      stop.abort();
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), deadlineMs);
      });
      const ended = all.map((r) =>
        Promise.race([
          r.promise.then(
            async (o) => {
              await discard(r.c, o);
              return 'ended' as const;
            },
            () => 'ended' as const,
          ),
          deadline,
        ]),
      );
      const states = await Promise.all(ended);
      clearTimeout(timer);
      return { calledOff: calledOff.length, unfinished: states.filter((s) => s === 'late').length };
    },
  };
}
