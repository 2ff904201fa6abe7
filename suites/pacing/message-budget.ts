/**
 * The coordinator's message budget: how many messages the whole run may queue on the quickstart
 * (spec, Endpoints 3: each valid POST /messages queues a message the API cannot take back), shared
 * by every worker and phase (`MAX_MESSAGES`). A message the check expects the server to queue
 * takes a place before it leaves and gives it back when the server refused it (non-2xx); one the
 * spec says the server refuses (no key, a bad body) is sent while every such request so far was
 * refused, and counts once the server queued it. Counts and check names only.
 *
 * Routes: `/messages/take {by, queues, leave}` (`leave`: places kept for later checks) → `{granted, reserved?, limit}`;
 * `/messages/settle {by, queues, reserved, queued}` → `{}`.
 */
import type { Service } from './service.ts';

export interface MessageReport {
  /** `MAX_MESSAGES`. */
  limit: number;
  /** Messages the server queued (2xx) or may have queued (no answer), all checks together. */
  queued: number;
  /** Per check (`phase check`), those messages. */
  byCheck: Record<string, number>;
  /** Per check, the messages not sent because the budget was spent (each made its check not certified). */
  refusedByBudget: Record<string, number>;
  /** Requests the spec says the server refuses that it queued (they count in `queued`, possibly beyond `limit`). */
  unexpectedlyQueued: number;
}

export function messageBudget(o: { limit: number }): Service<MessageReport> {
  let queued = 0;
  let reserved = 0;
  let unexpectedlyQueued = 0;
  const byCheck: Record<string, number> = {};
  const refusedByBudget: Record<string, number> = {};
  const room = (leave = 0) => queued + reserved + leave < o.limit;
  return {
    routes: {
      '/messages/take': (b, answer) => {
        const by = String(b.by);
        const queues = b.queues !== false;
        // A request the server should refuse needs no place while the server refuses every such request.
        if (!queues && unexpectedlyQueued === 0) return answer({ granted: true, reserved: false, limit: o.limit });
        if (!room(Math.max(0, Number(b.leave) || 0))) {
          refusedByBudget[by] = (refusedByBudget[by] ?? 0) + 1;
          return answer({ granted: false, limit: o.limit });
        }
        reserved++;
        answer({ granted: true, reserved: true, limit: o.limit });
      },
      '/messages/settle': (b, answer) => {
        const by = String(b.by);
        if (b.reserved === true) reserved = Math.max(0, reserved - 1);
        if (b.queued === true) {
          queued++;
          byCheck[by] = (byCheck[by] ?? 0) + 1;
          if (b.queues === false) unexpectedlyQueued++;
        }
        answer({});
      },
    },
    sweep: () => undefined,
    report: () => ({ limit: o.limit, queued, byCheck: { ...byCheck }, refusedByBudget: { ...refusedByBudget }, unexpectedlyQueued }),
    close: () => undefined,
  };
}
