/**
 * `inventory-conformance restore`: certify's repair step (certify/steps/repair.ts) on its own: every entry
 * an earlier run left open for `BASE_URL` put back and verified, or named (docs/journal.md, "restore on its own").
 */
import path from 'node:path';
import fs from 'node:fs';
import { appendRecord, doneRecord, newJournalName, readJournals, targetIdentity, type JournalFile } from '../core/journal.ts';
import { EXIT } from '../core/exit-codes.ts';
import { redactorFor, secretsFromEnv } from '../core/secrets.ts';
import { readSettings } from '../settings/index.ts';
import { emptyRepair, repairLines, type RepairOutcome } from '../suites/journal/repair.ts';
import { inputRedactor, TLS_ENV_REFUSAL } from './env.ts';
import { interruptedExit, preflight, PREFLIGHT_EXIT } from './steps/preflight.ts';
import { startRunPacer } from './steps/pacer.ts';
import { isLocked, lockTarget } from './steps/target-lock.ts';
import { reportsDirProblem } from './steps/reports-dir.ts';
import { repairWith } from './steps/repair.ts';
import { initialHoldsOf, journalRefusals, pendingHolds } from './steps/holds.ts';

export interface RestoreOptions {
  env: Record<string, string | undefined>;
  write: (text: string) => void;
  signal?: AbortSignal;
  /** Receives the outcome (for `--json`). */
  onOutcome?: (outcome: RepairOutcome) => void;
  /** Read the list and say what would be put back and why; send no change, close nothing. */
  dryRun?: boolean;
  /** Pet ids whose open entries a person dealt with by hand: closed as `forgotten`, nothing sent. */
  forget?: readonly string[];
}

/** Why the environment cannot run a restore, or nothing. */
function usageProblems(env: Record<string, string | undefined>, needsKey: boolean): string[] {
  const { values: v, problems } = readSettings(env);
  const errors = problems
    .filter((p) =>
      ['BASE_URL', 'API_URL', 'API_KEY', 'REPORTS_DIR', 'REQUEST_TIMEOUT_MS', 'MAX_RETRY_AFTER_S', 'INSECURE_TLS', 'WORKERS'].includes(
        p.name,
      ),
    )
    .map((p) => p.message);
  if (env.NODE_TLS_REJECT_UNAUTHORIZED?.trim() === '0') errors.push(TLS_ENV_REFUSAL);
  if (!v.BASE_URL)
    errors.push(
      'restore needs BASE_URL: the target whose changes the journal lists (the bundled reference server keeps nothing between runs)',
    );
  if (!v.API_KEY && needsKey)
    errors.push('restore needs API_KEY (from the environment, as for certify): a valid key of the target; it is never written or printed');
  const dirProblem = v.REPORTS_DIR ? reportsDirProblem(v.REPORTS_DIR) : undefined;
  if (dirProblem) errors.push(dirProblem);
  return errors;
}

/** Runs the restore; returns its exit code. */
export async function runRestore(o: RestoreOptions): Promise<number> {
  const { env } = o;
  const errors = usageProblems(env, !o.forget?.length);
  if (errors.length) {
    const redact = inputRedactor(env);
    o.write('restore: usage error:\n');
    for (const e of errors) o.write(redact(`  - ${e}\n`));
    return EXIT.usage;
  }
  const v = readSettings(env).values;
  const say = (text: string) => o.write(redactorFor(secretsFromEnv(env))(text));
  const reportsDir = path.resolve(v.REPORTS_DIR);
  const journals = fs.existsSync(reportsDir) ? readJournals(reportsDir) : [];
  if (o.forget?.length) return forget(journals, reportsDir, v.BASE_URL!, o.forget, say);
  const open = journals.filter((j) => j.open.length);
  if (!open.length) {
    o.onOutcome?.(emptyRepair());
    say(`restore: no open entry in ${path.join(reportsDir, 'journal')}: nothing to restore\n`);
    return EXIT.pass;
  }
  const pre = await preflight(
    { baseUrl: v.BASE_URL!, ...(v.API_URL ? { apiUrl: v.API_URL } : {}) },
    { timeoutMs: Math.min(v.REQUEST_TIMEOUT_MS, 10_000), insecure: v.INSECURE_TLS === true, ...(o.signal ? { signal: o.signal } : {}) },
  );
  if (!pre.ok) {
    say(`restore: ${pre.interrupted ? '' : 'preflight failed: '}${pre.line}\n`);
    return pre.interrupted ? interruptedExit(o.signal) : PREFLIGHT_EXIT;
  }
  // A certification of the target on this machine may hold counts it changed for a moment: wait for its turn (steps/target-lock.ts).
  const turn = await lockTarget(v.BASE_URL!, { maxWaitMs: v.OTHER_RUN_WAIT_S * 1000, ...(o.signal ? { signal: o.signal } : {}) });
  if (!isLocked(turn)) {
    say(
      `restore: ${turn.kind === 'aborted' ? 'stopped while waiting for' : `gave up after OTHER_RUN_WAIT_S waiting for`} another certification of this target on this machine; nothing was sent with a key\n`,
    );
    return turn.kind === 'aborted' ? interruptedExit(o.signal) : EXIT.harness;
  }
  // A 429 an earlier run met, still pending: nothing is sent on its key before it has passed.
  const holds = pendingHolds(journals, v.BASE_URL!, Date.now(), v.MAX_RETRY_AFTER_S);
  for (const h of holds) say(`restore: ${h.reason}\n`);
  const pacer = await startRunPacer({
    maxRetryAfterS: v.MAX_RETRY_AFTER_S,
    workers: v.WORKERS,
    initialHolds: initialHoldsOf(holds),
    onRefusal: journalRefusals(path.join(reportsDir, newJournalName()), v.BASE_URL!, 'restore'),
  });
  let outcome: RepairOutcome;
  let requests = 0;
  try {
    const r = await repairWith({
      reportsDir,
      env: { ...env, CONFORMANCE_PROFILE: 'full', ...pacer.env },
      journals,
      by: 'restore',
      dryRun: o.dryRun === true,
    });
    outcome = r.outcome;
    requests = r.requests;
  } finally {
    await pacer.close();
    turn.release(pacer.pendingUntilMs());
  }
  o.onOutcome?.(outcome);
  for (const line of repairLines(outcome, 'restore')) say(`${line}\n`);
  const alone = outcome.leftAlone?.length ?? 0;
  if (o.dryRun) {
    say(`restore: dry run: nothing was written and no entry closed; requests sent: ${requests} (reads of the list)\n`);
    return outcome.stopped ? EXIT.fail : EXIT.pass;
  }
  say(
    `restore: ${outcome.restored.length} entr${outcome.restored.length === 1 ? 'y' : 'ies'} closed, ${outcome.left.length} left changed, ${alone} left alone (somebody else wrote it since); requests sent: ${requests}\n`,
  );
  return outcome.left.length || alone || outcome.stopped ? EXIT.fail : EXIT.pass;
}

/** `--forget`: closes the open entries of `pets` for this target as `forgotten`; a pet with none is a usage error (nothing is closed). */
function forget(
  journals: readonly JournalFile[],
  reportsDir: string,
  baseUrl: string,
  pets: readonly string[],
  say: (text: string) => void,
): number {
  const target = targetIdentity(baseUrl);
  const entries = journals.flatMap((j) =>
    j.open.filter((e) => e.kind === 'change' && e.target === target && pets.includes(e.petId)).map((e) => ({ file: j.file, e })),
  );
  const missing = pets.filter((p) => !entries.some(({ e }) => e.kind === 'change' && e.petId === p));
  if (missing.length) {
    say(
      `restore: usage error:\n  - --forget: no open entry for pet ${missing.join(', ')} of ${target} in ${path.join(reportsDir, 'journal')}; nothing was closed\n`,
    );
    return EXIT.usage;
  }
  for (const { file, e } of entries) appendRecord(path.join(reportsDir, file), doneRecord(e.entry, 'forgotten', 'restore --forget'));
  say(
    `restore: forgot ${entries.length} open entr${entries.length === 1 ? 'y' : 'ies'} of pet ${pets.join(', ')} (closed as dealt with by hand); nothing was sent\n`,
  );
  return EXIT.pass;
}
