/**
 * A pending 429 outlives its run (spec, Errors: "the client must wait for the time given in the Retry-After header"):
 * every 429 is journaled, and the next run or `restore` holds its key until then (docs/journal.md).
 */
import { appendRecord, newEntryId, targetIdentity, type JournalFile, type LimitRecord } from '../../core/journal.ts';
import type { InitialHold, Refusal } from '../../suites/pacing/coordinator.ts';

/** A 429 of an earlier run still pending when this run started (conformance.json `journal.holds`). */
export interface PendingHold {
  label: string;
  retryAfter: string | null;
  /** The server's Date of that 429, as sent. */
  date: string | null;
  /** When it was received (ISO 8601 UTC, local clock). */
  at: string;
  /** Until when nothing is sent on the key (ISO 8601 UTC, local clock). */
  until: string;
  /** Seconds left to wait when this run started. */
  waitS: number;
  /** Longer than MAX_RETRY_AFTER_S: the key is not used in this run, its checks not certified. */
  overMax: boolean;
  /** A 429 answered the first request once an earlier one's wait had passed, or it asks longer than MAX_RETRY_AFTER_S: the key looks banned. */
  banned?: boolean;
  /** The 429 held every key (its key's Remaining did not predict it). */
  all?: boolean;
  /** In words, for the console and the reports. */
  reason: string;
}

/** The 429s of `journals` for the target at `baseUrl` still pending at `nowMs`: the latest per key label. */
export function pendingHolds(journals: readonly JournalFile[], baseUrl: string, nowMs: number, maxRetryAfterS: number): PendingHold[] {
  const target = targetIdentity(baseUrl);
  const limits = journals
    .flatMap((j) => j.limits)
    .filter((l) => l.target === target)
    .sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  const byLabel = new Map<string, { last: LimitRecord; banned: boolean }>();
  for (const l of limits) {
    const key = l.all ? '*' : l.label;
    const prev = byLabel.get(key);
    const banned = (prev?.banned ?? false) || l.banned === true;
    if (!prev || l.untilMs >= prev.last.untilMs) byLabel.set(key, { last: l, banned });
    else prev.banned = banned;
  }
  const out: PendingHold[] = [];
  for (const [, { last, banned }] of byLabel) {
    if (last.untilMs <= nowMs) continue;
    const waitS = Math.ceil((last.untilMs - nowMs) / 1000);
    const overMax = waitS > maxRetryAfterS;
    const who = last.all ? `every key (a 429 on ${last.label} its Remaining did not predict)` : last.label;
    const until = new Date(last.untilMs).toISOString();
    const seenBanned = banned || overMax;
    const reason =
      `a 429 an earlier run met on ${last.label} at ${last.at} (server Date: ${last.date ?? 'none'}; Retry-After: ${last.retryAfter ?? 'none'}) ` +
      `asks that nothing be sent on ${who} before ${until}` +
      (seenBanned ? `; ${last.label} looks banned: it may be used again at ${until}` : '') +
      (overMax
        ? `; that is ${waitS} s away, longer than MAX_RETRY_AFTER_S=${maxRetryAfterS} s: nothing is sent on it in this run and its checks are not certified`
        : `: this run waits ${waitS} s before it sends anything on it`);
    out.push({
      label: last.label,
      retryAfter: last.retryAfter,
      date: last.date,
      at: last.at,
      until,
      waitS,
      overMax,
      ...(seenBanned ? { banned: true } : {}),
      ...(last.all ? { all: true } : {}),
      reason,
    });
  }
  return out;
}

/** The pacer's initial holds for `holds`. */
export function initialHoldsOf(holds: readonly PendingHold[]): InitialHold[] {
  return holds.map((h) => ({ label: h.all ? '*' : h.label, untilMs: Date.parse(h.until), reason: h.reason }));
}

/** Journals each 429 the pacer sees into `file` (absolute), for the target at `baseUrl`. */
export function journalRefusals(file: string, baseUrl: string, by: string): (r: Refusal) => void {
  const target = targetIdentity(baseUrl);
  return (r) =>
    appendRecord(file, {
      v: 1,
      kind: 'limit',
      entry: newEntryId(),
      at: new Date(r.receivedAtMs).toISOString(),
      by,
      target,
      label: r.label,
      retryAfter: r.retryAfter,
      date: r.date,
      untilMs: r.untilMs,
      ...(r.all ? { all: true } : {}),
      ...(r.afterWait ? { banned: true } : {}),
    });
}
