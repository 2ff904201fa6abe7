/**
 * Two certifications at once, with the same keys, against one conformant target (two pipelines on
 * one staging): `npx tsx faults/two-runs.ts [case]` (default `baseline`). Each run must end
 * without a failure the other caused (a FAIL rests on evidence no conformant server can produce,
 * another client on the key included), the store must end as it started, and neither may send
 * on a key while a 429 on it is pending. A run that saw the other one names it (a Remaining that
 * fell by more than it sent: another client on the key) among the reasons of what it left not
 * certified.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { certifyCase, cleanup, startCaseTarget, type CaseOutcome, type MatrixCase } from './harness.ts';
import { SOURCE_TREE, type HarnessTree } from './tree.ts';
import { matrixCases, MATRIX_ENV } from './matrix.ts';
import { total, type RetryStats } from './retry-watch.ts';

export interface PairOutcome {
  runs: [CaseOutcome, CaseOutcome];
  /**
   * The proxy's counts once both runs ended (early requests and bans of both): each run's own
   * `retry` is a copy taken when it ended, so the run that went first misses the other.
   */
  retry: RetryStats;
  /** The stock list before and after both runs, as the target serves it (no keys). */
  storeBefore: string;
  storeAfter: string;
}

/** The inventory as served to `key` (GET /inventory straight to the target, not through the proxy). */
async function stock(baseUrl: string, key: string): Promise<string> {
  const r = await fetch(`${baseUrl}/inventory`, { headers: { authorization: `Bearer ${key}` } });
  return r.text();
}

/** Hard limit on each certify child of a pair: the run that waits for its turn runs after the other (certify/steps/target-lock.ts). */
export const PAIR_TIMEOUT_MS = 720_000;

/**
 * Runs case `c` twice at once against one target, each run on its own harness tree (default: both
 * on the sources of this clone), and reads the store before and after. `signal` stops both runs as
 * Ctrl-C would.
 */
export async function runPair(
  c: MatrixCase,
  env: Record<string, string> = MATRIX_ENV,
  trees: readonly [HarnessTree, HarnessTree] = [SOURCE_TREE, SOURCE_TREE],
  signal?: AbortSignal,
): Promise<PairOutcome> {
  const t = await startCaseTarget(c);
  try {
    const base = t.target.server.baseUrl;
    const key = t.target.env.LOAD_KEY;
    const storeBefore = await stock(base, key);
    const runs = await Promise.all([
      certifyCase(c, t, { env, timeoutMs: PAIR_TIMEOUT_MS, tree: trees[0], ...(signal ? { signal } : {}) }),
      certifyCase(c, t, { env, timeoutMs: PAIR_TIMEOUT_MS, tree: trees[1], ...(signal ? { signal } : {}) }),
    ]);
    const storeAfter = await stock(base, key);
    return { runs: runs as [CaseOutcome, CaseOutcome], retry: t.proxy.stats(), storeBefore, storeAfter };
  } finally {
    await t.close();
  }
}

/**
 * Where a run named another client: the other certification of the target on this machine it
 * waited for, or that waited for it (`otherRuns`), the pacer's finding (`pacing`), and what it left
 * not certified because of one.
 */
export function namesAnotherClient(o: CaseOutcome): string[] {
  return [
    ...o.otherRuns.waitedFor.map((pid) => `waited for run ${pid}`),
    ...o.otherRuns.waitedForThis.map((pid) => `run ${pid} waited for it`),
    ...(o.otherClients.length ? ['pacing'] : []),
    ...Object.entries(o.notCertified)
      .filter(([, why]) => /another client/.test(why))
      .map(([id]) => id),
  ];
}

async function main(): Promise<void> {
  const name = process.argv[2] ?? 'baseline';
  const c = matrixCases(true).find((x) => x.name === name && x.kind !== 'fault');
  if (!c) {
    process.stdout.write(`two-runs: "${name}" is not the baseline nor a conformant variant (npx tsx faults/cli.ts --list)\n`);
    process.exit(2);
  }
  const pair = await runPair(c);
  let ok = pair.storeAfter === pair.storeBefore;
  pair.runs.forEach((o, i) => {
    ok &&= o.verdict === 'pass';
    process.stdout.write(
      `run ${i + 1}: verdict ${o.verdict} in ${(o.durationMs / 1000).toFixed(1)} s; failing [${o.failing.join(', ')}]; ` +
        `names another client in [${namesAnotherClient(o).join(', ')}]; not certified [${Object.keys(o.notCertified).join(', ')}]\n`,
    );
    for (const seen of o.otherClients) process.stdout.write(`    pacing saw another client: ${seen.slice(0, 300)}\n`);
    for (const id of o.failing) process.stdout.write(`    ${id}: ${o.reasons[id]}\n`);
    for (const [id, why] of Object.entries(o.notCertified)) process.stdout.write(`    ${id} not certified: ${why.slice(0, 300)}\n`);
    if (o.problems.length) process.stdout.write(`    run problems: ${o.problems.join('; ')}\n`);
    cleanup(o);
  });
  const { early, bans } = pair.retry;
  ok &&= total(early) === 0 && total(bans) === 0;
  process.stdout.write(
    `store ${pair.storeAfter === pair.storeBefore ? 'as it started' : 'CHANGED'}; early requests ${total(early)}, bans ${total(bans)} (both runs, through one proxy): ${JSON.stringify(pair.retry)}\n`,
  );
  process.exit(ok ? 0 : 1);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
