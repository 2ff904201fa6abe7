/**
 * Step "repair first": what an earlier run left open in the journal for this target is put back and verified before
 * the phases send anything; at the end the same repair settles the run's own journal (docs/journal.md).
 */
import { readJournalFile, readJournals, targetIdentity, type JournalFile } from '../../core/journal.ts';
import type { RunProblem } from '../../core/results.ts';
import { createApi } from '../../suites/fixtures/api.ts';
import { pacingClient } from '../../suites/pacing/client.ts';
import { readEnv } from '../../suites/lib/env.ts';
import { emptyRepair, repairJournals, repairLines, type RepairOutcome } from '../../suites/journal/repair.ts';
import type { PendingHold } from './holds.ts';

/** What conformance.json says of the journal (`journal`). */
export interface JournalReport {
  /** This run's journal, relative to the reports folder. */
  file: string;
  /** Found open for this target in earlier runs' journals and repaired before the phases. */
  repair: RepairOutcome;
  /** This run's own journal at its end: what its checks left open, tried once more. */
  end: RepairOutcome;
  /** Requests the repairs sent (lists and PATCHes on API_KEY). */
  requests: number;
  /** 429s an earlier run met still pending when this run started: nothing was sent on their keys before they passed (steps/holds.ts). */
  holds?: PendingHold[];
}

export interface RepairInput {
  reportsDir: string;
  /** The children's environment: the target, its keys, the pacer's URL, the profile. */
  env: Record<string, string | undefined>;
  /** Journal files to repair from (relative to `reportsDir`). */
  journals: readonly JournalFile[];
  by: string;
  /** Read the list, say what would be done and why; write and close nothing (`restore --dry-run`). */
  dryRun?: boolean;
}

/** Runs one repair through the run's pacer; `requests` is what it sent. */
export async function repairWith(o: RepairInput): Promise<{ outcome: RepairOutcome; requests: number }> {
  const env = readEnv(o.env);
  if (!env.baseUrl) return { outcome: emptyRepair(), requests: 0 };
  const open = o.journals.filter((j) => j.open.length);
  if (!open.length) return { outcome: emptyRepair(), requests: 0 };
  const api = createApi({
    env,
    pacing: pacingClient(o.env.CONFORMANCE_PACER_URL),
    annotate: () => undefined,
    requirementId: o.by,
    // Restores go out on keys closed for the checks once their holds have passed (never while a 429 is pending).
    restore: true,
    notCertified: (reason) => {
      throw new Error(reason);
    },
  });
  const outcome = await repairJournals({
    api,
    reportsDir: o.reportsDir,
    journals: open,
    target: targetIdentity(env.baseUrl),
    by: o.by,
    readonly: env.profile === 'readonly',
    ...(o.dryRun ? { dryRun: true } : {}),
  });
  return { outcome, requests: api.requests };
}

/** Repairs from every journal of the reports folder but the run's own; says what it did. */
export async function repairFirst(
  reportsDir: string,
  ownFile: string,
  env: Record<string, string | undefined>,
  say: (line: string) => void,
): Promise<{ outcome: RepairOutcome; requests: number }> {
  const journals = readJournals(reportsDir).filter((j) => j.file !== ownFile);
  const open = journals.filter((j) => j.open.length);
  if (!open.length) return { outcome: emptyRepair(), requests: 0 };
  say(
    `certify: the reports folder holds ${open.length} journal(s) with open entries (an earlier run did not finish): repairing before anything else is sent\n`,
  );
  const r = await repairWith({ reportsDir, env, journals, by: 'repair (certify)' });
  for (const line of repairLines(r.outcome, 'certify: repair')) say(`${line}\n`);
  return r;
}

/** The run's own journal; undefined when it was never written (no check changed anything). */
function ownJournal(reportsDir: string, ownFile: string): JournalFile | undefined {
  try {
    return readJournalFile(reportsDir, ownFile);
  } catch {
    return undefined;
  }
}

/**
 * After a signal the run sends nothing more: what its own journal leaves open (pets changed and not
 * put back, requests on ids not listed), from the journal alone, as a run-level problem whose reason
 * names it with the two ways to put it back. None when nothing is open.
 */
export function openAfterStopProblem(reportsDir: string, ownFile: string, signal: string): RunProblem | undefined {
  const own = ownJournal(reportsDir, ownFile);
  if (!own) return undefined;
  const changes = own.open.filter((e) => e.kind === 'change');
  if (!changes.length) return undefined;
  const listed = changes.filter((e) => e.original !== null);
  const unlisted = [...new Set(changes.filter((e) => e.original === null).map((e) => e.petId))];
  const parts = [
    ...(listed.length
      ? [
          `${listed.length} pet(s) it changed: ${listed.map((e) => `pet ${e.petId} (quantity ${e.original} before; by ${e.by})`).join(', ')}`,
        ]
      : []),
    ...(unlisted.length
      ? [
          `requests on ${unlisted.length} pet id(s) that were not listed (${unlisted.slice(0, 5).join(', ')}${unlisted.length > 5 ? ` and ${unlisted.length - 5} more` : ''}), not yet checked to have created nothing`,
        ]
      : []),
  ];
  const observed = parts.join('; and ');
  return {
    kind: 'target-left-changed',
    reason: `stopped by ${signal} before it put back or confirmed ${observed}; they are in ${ownFile}: the next certify with this reports folder puts them back first, or \`inventory-conformance restore\` does it alone`,
    expected: 'every pet the run changed put back, and every id it was not shown confirmed not created, before the run ends',
    observed,
  };
}

/** Settles the run's own journal at its end (nothing when it was never written). */
export async function settleOwn(
  reportsDir: string,
  ownFile: string,
  env: Record<string, string | undefined>,
  say: (line: string) => void,
): Promise<{ outcome: RepairOutcome; requests: number }> {
  const own = ownJournal(reportsDir, ownFile);
  if (!own) return { outcome: emptyRepair(), requests: 0 };
  const r = await repairWith({ reportsDir, env, journals: [own], by: 'end of run (certify)' });
  for (const line of repairLines(r.outcome, 'certify: end of run')) say(`${line}\n`);
  return r;
}

/** The run-level problem of what the journal shows left changed (created pets, counts not put back), or none. */
export function journalProblem(report: JournalReport | undefined): RunProblem | undefined {
  if (!report) return undefined;
  const left = [...report.repair.left, ...report.end.left];
  if (!left.length) return undefined;
  const pets = left.map((l) => ({
    petId: l.petId,
    original: l.original ?? 'not listed',
    current: l.current,
    ...(l.created ? { created: true } : {}),
    action: l.reason,
  }));
  const list = pets
    .map((p) =>
      p.created
        ? `pet ${p.petId} (created by the run)`
        : `pet ${p.petId} (original ${p.original}, now ${p.current ?? (p.action.startsWith('not tried') ? 'not read' : 'missing')})`,
    )
    .join(', ');
  return {
    kind: 'target-left-changed',
    reason: `target left changed: ${left.length} pet(s) could not be put back: ${list}`,
    expected: 'every pet the run changed restored to its original quantity, and no pet created',
    observed: list,
    pets,
  };
}
