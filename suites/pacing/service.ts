/**
 * What the coordinator's services share: a route answers a JSON body (`answer`), and may hold its
 * answer until something happens (`onGone` tells it the asker went away). Each service
 * (`pacing-service.ts`, `pet-leases.ts`, `once-per-run.ts`) owns its own state, routes, sweep and
 * report; `coordinator.ts` only serves them over HTTP.
 */

/** One route of a service: answer once, or never if the asker went away first. */
export type Route = (body: Record<string, unknown>, answer: (a: object) => void, onGone: (f: () => void) => void) => void;

export interface Service<R> {
  /** Routes by path, e.g. `/acquire`. */
  routes: Record<string, Route>;
  /** Ends what expired (a holder that died): called every second. */
  sweep(): void;
  report(): R;
  /** Stops its timers. */
  close(): void;
}

/** A positive number from a request body, else `fallback`. */
export const positive = (value: unknown, fallback: number): number => (Number(value) > 0 ? Number(value) : fallback);
