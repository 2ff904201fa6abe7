/**
 * The run's footprint on the target in one line: the messages it queued (spec, Endpoints 3: the
 * API cannot take one back), by check, within `MAX_MESSAGES`, and those the budget kept back.
 * Pure: the console, conformance.md and the certificate print it. The messages the journal lists
 * as posted (left on the target) are counted by check too, the full list kept in conformance.json.
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
  const queued = `Messages queued: ${m.queued} of at most ${m.limit} (MAX_MESSAGES)${m.queued ? `: ${counted(m.byCheck)}` : ''}`;
  return `${[queued, ...budgetNotes(m)].join('; ')}.`;
}

/**
 * What the budget adds to a line that already counts the messages posted: "MAX_MESSAGES=20: 168
 * not sent, …"; undefined when it adds nothing.
 */
export function budgetLine(m: MessageReport | undefined): string | undefined {
  const notes = m ? budgetNotes(m) : [];
  return notes.length ? `MAX_MESSAGES=${m!.limit}: ${notes.join('; ')}.` : undefined;
}

function budgetNotes(m: MessageReport): string[] {
  const parts: string[] = [];
  if (m.unexpectedlyQueued)
    parts.push(`${m.unexpectedlyQueued} queued by requests the spec says the server refuses (no key, or a bad body)`);
  const refused = Object.values(m.refusedByBudget).reduce((a, b) => a + b, 0);
  if (refused)
    parts.push(
      `${refused} not sent, the budget spent (${counted(m.refusedByBudget)}): their checks are not certified, each named with the reason`,
    );
  return parts;
}

/** A message the run posted, as the journal records it (`by`: `<phase> <requirement>`). */
export interface PostedBy {
  address: string;
  at: string;
  by: string;
}

/** The requirement a journal entry's `by` names (`functional MSG-01` → `MSG-01`). */
export function postedFor(by: string): string {
  return by.trim().split(/\s+/).pop() ?? by;
}

/** The messages counted by requirement, most first (then by id). */
export function countByRequirement(messages: readonly PostedBy[]): [string, number][] {
  const by = new Map<string, number>();
  for (const m of messages) by.set(postedFor(m.by), (by.get(postedFor(m.by)) ?? 0) + 1);
  return [...by.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

/** `164 messages posted: GEN-01 140, MSG-01 6, … (and 3 more checks)`, or undefined when none was posted. */
export function messagesCountedText(messages: readonly PostedBy[], shown = 6): string | undefined {
  if (!messages.length) return undefined;
  const counted = countByRequirement(messages);
  const head = counted
    .slice(0, shown)
    .map(([id, n]) => `${id} ${n}`)
    .join(', ');
  const rest = counted.length - shown;
  const more = rest > 0 ? `, and ${rest} more requirement${rest === 1 ? '' : 's'}` : '';
  return `${messages.length} message${messages.length === 1 ? '' : 's'} posted: ${head}${more}`;
}

/** The addresses the messages went to (`…/quickstart/messages`), each once. */
export function messageAddresses(messages: readonly PostedBy[]): string[] {
  return [...new Set(messages.map((m) => `${m.address}/messages`))];
}
