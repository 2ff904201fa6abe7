/**
 * What a run left on the target by design, counted for a reader: the messages it posted, by the
 * check that posted them (`164 messages posted: GEN-01 140, MSG-01 6, …`). The console, the
 * certificate and `conformance.md` say the count; the full list stays in `conformance.json` (and
 * behind a click in the certificate). Pure.
 */

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
  const more = counted.length > shown ? `, and ${counted.length - shown} more check(s)` : '';
  return `${messages.length} message${messages.length === 1 ? '' : 's'} posted: ${head}${more}`;
}

/** The addresses the messages went to (`…/quickstart/messages`), each once. */
export function messageAddresses(messages: readonly PostedBy[]): string[] {
  return [...new Set(messages.map((m) => `${m.address}/messages`))];
}
