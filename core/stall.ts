/**
 * How long this process was held from running while it waited for an answer: a timer every
 * `TICK_MS` notes how late it fired. On a runner too busy to schedule the harness, a request's
 * deadline can pass with the server's answer still unread or the request itself unsent; a timeout
 * judged by a process held that long is the harness's own limit, never evidence against the server.
 *
 * One watch per process, shared by every request in flight (`watchStalls`), running only while
 * one is: the samples and the timer are the process's, like its connections.
 */
import { performance } from 'node:perf_hooks';

const TICK_MS = 100;
/** Samples kept: ten minutes of ticks, longer than any request deadline. */
const KEEP = 6000;

interface Sample {
  /** `performance.now()` when the tick ran. */
  at: number;
  /** How much later than due it ran. */
  lateMs: number;
}

const state: { samples: Sample[]; due: number; timer?: NodeJS.Timeout; watchers: number } = { samples: [], due: 0, watchers: 0 };

function tick(): void {
  const now = performance.now();
  state.samples.push({ at: now, lateMs: Math.max(0, now - state.due) });
  if (state.samples.length > KEEP) state.samples.splice(0, state.samples.length - KEEP);
  state.due = now + TICK_MS;
}

/** A watch on this process's stalls while a request waits; `end()` it when the request settles. */
export interface StallWatch {
  /** The longest time this process was held from running since `from` (`performance.now()` ms). */
  longestSince(from: number): number;
  end(): void;
}

/** Starts (or joins) the process's watch on its own stalls. */
export function watchStalls(): StallWatch {
  if (state.watchers++ === 0) {
    state.due = performance.now() + TICK_MS;
    state.timer = setInterval(tick, TICK_MS);
    state.timer.unref();
  }
  let ended = false;
  return {
    longestSince(from) {
      // The tick due now may itself be late: a stall that is not over shows as well.
      // Only the part of a stall after `from` counts (one that began before it ended after it).
      const now = performance.now();
      let longest = Math.max(0, Math.min(now - state.due, now - from));
      for (let i = state.samples.length - 1; i >= 0 && state.samples[i]!.at >= from; i--) {
        const s = state.samples[i]!;
        longest = Math.max(longest, Math.min(s.lateMs, s.at - from));
      }
      return Math.round(longest);
    },
    end() {
      if (ended) return;
      ended = true;
      if (--state.watchers > 0) return;
      clearInterval(state.timer);
      state.timer = undefined;
      state.samples.length = 0;
    },
  };
}

/**
 * Whether a stall of `stalledMs` during a wait of `deadlineMs` leaves a timeout unjudgeable: a
 * second, or a tenth of the deadline if that is more.
 */
export function stallVoidsDeadline(stalledMs: number, deadlineMs: number): boolean {
  return stalledMs >= Math.max(1000, deadlineMs / 10);
}
