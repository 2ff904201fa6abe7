/**
 * The run's footprint on the target in one line: the messages it queued (spec, Endpoints 3: the
 * API cannot take one back), by check, within `MAX_MESSAGES`, and those the budget kept back.
 * Pure: the console, conformance.md and the certificate print it.
 */
import type { MessageReport } from '../suites/pacing/message-budget.ts';

const counted = (by: Record<string, number>): string =>
  Object.entries(by)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([check, n]) => `${check} ${n}`)
    .join(', ');

/** "Messages queued: 20 of at most 20 (MAX_MESSAGES): …"; undefined without a report. */
export function footprintLine(m: MessageReport | undefined): string | undefined {
  if (!m) return undefined;
  const parts = [`Messages queued: ${m.queued} of at most ${m.limit} (MAX_MESSAGES)${m.queued ? `: ${counted(m.byCheck)}` : ''}`];
  if (m.unexpectedlyQueued)
    parts.push(`${m.unexpectedlyQueued} of them answered requests the spec says the server refuses (no key, or a bad body)`);
  const refused = Object.values(m.refusedByBudget).reduce((a, b) => a + b, 0);
  if (refused)
    parts.push(
      `${refused} not sent, the budget spent (${counted(m.refusedByBudget)}): their checks are not certified, each named with the reason`,
    );
  return `${parts.join('; ')}.`;
}
