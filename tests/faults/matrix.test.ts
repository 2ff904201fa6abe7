import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestInfo } from '@playwright/test';
import { test as base, expect } from '../test.ts';
import { cleanup, REPO_ROOT, runCase, SECOND_RUN_WINDOW_MS, type CaseOutcome } from '../../faults/harness.ts';
import { compiledTree, SOURCE_TREE, type HarnessTree } from '../../faults/tree.ts';
import { caseScheduler } from '../../faults/scheduler.ts';
import { caseHolds, inconclusiveIds, matrixCases, MATRIX_ENV, type NamedCase } from '../../faults/matrix.ts';
import { total } from '../../faults/retry-watch.ts';
import { namesAnotherClient, PAIR_TIMEOUT_MS, runPair, type PairOutcome } from '../../faults/two-runs.ts';
import { runInBackground } from '../background.ts';

const CASES = matrixCases();
const CONCURRENCY = Math.max(1, Number(process.env.MATRIX_CONCURRENCY) || 3);
const CASE_TIMEOUT_MS = 240_000;
/** How long the worker waits, when it ends, for the runs it calls off to stop. */
const CLOSE_DEADLINE_MS = 60_000;

interface Matrix {
  /** The case's outcome (the first run's, for the baseline's pair), and its pair's when it has one. */
  outcomeOf(c: NamedCase): Promise<CaseOutcome>;
  /** The case once more, on a reference server with `minuteWindowMs` windows. */
  again(c: NamedCase, minuteWindowMs: number): Promise<CaseOutcome>;
  pairOf(c: NamedCase): Promise<PairOutcome> | undefined;
}

/**
 * The harness the cases certify with: a tree compiled from this clone's sources the way the package
 * is built (faults/tree.ts), built once per worker. Its Playwright processes start without
 * Playwright's TypeScript loader, on less CPU, and the matrix runs hundreds of them. The cases run
 * through the worker's scheduler (faults/scheduler.ts), which, when the worker ends, calls off every
 * run still going (started ahead for tests that did not ask for them, in a subset of the matrix or
 * after a failed test, or asked for by a test that timed out) and removes what every run wrote,
 * before the tree is removed.
 */
const test = base.extend<object, { tree: HarnessTree; matrix: Matrix }>({
  tree: [
    async ({}, use) => {
      const built = await compiledTree();
      try {
        await use(built.tree);
      } finally {
        built.remove();
      }
    },
    { scope: 'worker', timeout: 300_000 },
  ],
  matrix: [
    async ({ tree }, use) => {
      const pairs = new Map<string, Promise<PairOutcome>>();
      const scheduler = caseScheduler<NamedCase, CaseOutcome, number>(
        CASES,
        CONCURRENCY,
        (c, signal, minuteWindowMs) => {
          if (c.kind !== 'baseline')
            return runCase(c, { env: MATRIX_ENV, timeoutMs: CASE_TIMEOUT_MS, tree, signal, ...(minuteWindowMs ? { minuteWindowMs } : {}) });
          // One run certifies as `npm run certify` does (`cli/bin.mjs certify`, the clone's tree), the
          // other with the compiled tree: the two ways a user runs the harness take turns on one
          // target and both pass. The outcome is the first run's, with the proxy's counts of both.
          const pair = runPair(c, MATRIX_ENV, [SOURCE_TREE, tree], signal);
          pairs.set(c.id, pair);
          return pair.then((p) => ({ ...p.runs[0], retry: p.retry }));
        },
        async (c, outcome) => {
          for (const o of (await pairs.get(c.id)?.catch(() => undefined))?.runs ?? [outcome]) cleanup(o);
        },
      );
      try {
        await use({ outcomeOf: scheduler.outcomeOf, again: scheduler.again, pairOf: (c) => pairs.get(c.id) });
      } finally {
        const { unfinished } = await scheduler.close(CLOSE_DEADLINE_MS);
        if (unfinished > 0)
          console.error(`[matrix] ${unfinished} certify run(s) did not stop within ${CLOSE_DEADLINE_MS / 1000} s of being called off`);
      }
    },
    { scope: 'worker', timeout: CLOSE_DEADLINE_MS + 30_000 },
  ],
});

// A certify run of a whole server: at a lower priority than the tests that judge timing (tests/background.ts).
test.beforeAll(runInBackground);

/**
 * The meta-test of the catalogue: a complete `certify` run per case, through the fault proxy in front of
 * a fresh reference server. Every fault must make the verdict `fail` with all its expected
 * requirement ids among the failing ones; every conformant variant and the unmodified reference
 * server must `pass`. The last test prints and writes the score.
 *
 * A fault runs only the certify phases that check its expected ids (`phasesFor`), and outside the
 * load phase only the tests of those ids, stopping at the first failure when it has one id
 * (`testsOption`); a requirement counts as caught only by a test that ran and failed. The baseline
 * and the variants run every phase through the CLI's `certify`, except a variant that names its
 * phases (`caseHolds` judges it on those). Every case certifies with a tree compiled from the
 * sources, as the installed package does; the baseline's second run as `npm run certify` does. Cases run in order in one worker
 * (mode `default`: a failure does not skip the rest), and `MATRIX_CONCURRENCY` certify runs
 * (default 3) are kept going ahead of the test that needs them.
 *
 * In every case the proxy counts requests sent on a key while a 429's Retry-After on it was
 * pending, and bans: both must be 0, except for faults built to mislead Retry-After; bans also
 * for faults that misstate Remaining (`misleadsRemaining`).
 *
 * The baseline runs as two certifications with the same keys at once against one target (two
 * pipelines on one staging, faults/two-runs.ts): both must pass, neither may send on a key while a
 * 429 on it is pending nor earn a ban, the store must end as it started, and each run must name the
 * other (runs of one target on one machine take turns: certify/steps/target-lock.ts).
 */

/**
 * Results of this run, shared by the worker and any worker started after a failure: in the test
 * run's own folder (`TEST_MATRIX_RESULTS_DIR`, tests/playwright.config.ts), removed when the run
 * ends, or else keyed by the Playwright runner's pid (the workers' parent) in the temp folder.
 */
function resultsDir(_testInfo: TestInfo): string {
  return process.env.TEST_MATRIX_RESULTS_DIR ?? path.join(os.tmpdir(), `fault-matrix-results-${process.ppid}`);
}

function record(testInfo: TestInfo, c: NamedCase, ok: boolean, outcome: CaseOutcome): void {
  fs.mkdirSync(resultsDir(testInfo), { recursive: true });
  fs.writeFileSync(
    path.join(resultsDir(testInfo), `${c.id.replace(/[^\w-]+/g, '_')}.json`),
    JSON.stringify({
      id: c.id,
      kind: c.kind,
      name: c.name,
      ok,
      verdict: outcome.verdict,
      expected: c.expect,
      failing: outcome.failing,
      seconds: Math.round(outcome.durationMs / 100) / 10,
      early: total(outcome.retry.early),
      bans: total(outcome.retry.bans),
      misleadsRetryAfter: !!c.misleadsRetryAfter,
      misleadsRemaining: !!c.misleadsRemaining,
    }),
  );
}

/** The two runs at once: both pass, each names the other, turns taken, the store as it was (early requests and bans: the case's own check, on both runs' counts). */
function expectPairHolds(pair: PairOutcome): void {
  pair.runs.forEach((o, i) => {
    const what = `run ${i + 1} of two at once: verdict ${o.verdict} (exit ${o.exitCode}) in ${(o.durationMs / 1000).toFixed(1)} s; failing ${JSON.stringify(o.reasons)}; problems ${JSON.stringify(o.problems)}${o.verdict === 'missing' ? `\n${o.tail}` : ''}`;
    expect.soft(o.verdict, what).toBe('pass');
    expect.soft(o.exitCode, what).toBe(0);
    expect.soft(namesAnotherClient(o), `run ${i + 1} names the other run it saw`).not.toEqual([]);
  });
  // One run waited for the other, and the other names the run that waited for it.
  const [a, b] = pair.runs.map((o) => o.otherRuns);
  expect
    .soft(
      [a.waitedFor.length > 0 && b.waitedForThis.length > 0, b.waitedFor.length > 0 && a.waitedForThis.length > 0],
      `turns: run 1 ${JSON.stringify(a)}, run 2 ${JSON.stringify(b)}`,
    )
    .toContain(true);
  expect.soft(pair.storeAfter, 'the store after both runs equals the store before').toBe(pair.storeBefore);
}

/**
 * A fault whose expected ids came out not certified (the run could not tell, e.g. on a runner too
 * busy to keep a short window's timing) runs once more, on longer windows, and that run is judged
 * (`inconclusiveIds`, `SECOND_RUN_WINDOW_MS`).
 */
async function againIfInconclusive(c: NamedCase, first: CaseOutcome, testInfo: TestInfo, matrix: Matrix): Promise<CaseOutcome> {
  const ids = inconclusiveIds(c, first);
  if (ids.length === 0) return first;
  testInfo.annotations.push({
    type: 'run again',
    description: `${ids.join(', ')} not certified in the first run (${ids.map((id) => first.notCertified[id]?.slice(0, 200)).join('; ')}); again with ${SECOND_RUN_WINDOW_MS / 1000}-s windows`,
  });
  cleanup(first);
  // The second run has the time of a whole case of its own, on top of what the first one took.
  testInfo.setTimeout(testInfo.timeout + CASE_TIMEOUT_MS + 30_000);
  return matrix.again(c, SECOND_RUN_WINDOW_MS);
}

function describeOutcome(o: CaseOutcome): string {
  const reasons = o.failing.map((id) => `    ${id}: ${o.reasons[id] ?? ''}`).join('\n');
  const tail = o.verdict === 'missing' ? `\n  certify output (tail):\n${o.tail}` : '';
  const unevidenced = o.unevidenced.length
    ? `\n  failing without a test result (phase not run, never a catch): ${o.unevidenced.join(', ')}`
    : '';
  const notCertified = Object.entries(o.notCertified)
    .map(([id, why]) => `\n    ${id}: ${why.slice(0, 300)}`)
    .join('');
  return `verdict ${o.verdict} (exit ${o.exitCode}) after ${(o.durationMs / 1000).toFixed(1)} s\n  failing requirements:\n${reasons || '    (none)'}${unevidenced}${notCertified ? `\n  not certified:${notCertified}` : ''}${o.problems.length ? `\n  run problems: ${o.problems.join('; ')}` : ''}${tail}`;
}

test.describe('fault matrix', () => {
  test.describe.configure({ mode: 'default', timeout: CASE_TIMEOUT_MS + 60_000 });

  for (const c of CASES) {
    const title =
      c.kind === 'fault'
        ? `fault ${c.name} is caught by ${c.expect.join(', ')}`
        : c.kind === 'variant'
          ? `conformant variant ${c.name} passes`
          : 'the unmodified reference server passes, twice at once with the same keys: nothing early, no ban, the store as it was, each run naming the other';
    test(title, async ({ matrix }, testInfo) => {
      if (c.kind === 'baseline') test.setTimeout(2 * PAIR_TIMEOUT_MS + 60_000);
      const outcome = await againIfInconclusive(c, await matrix.outcomeOf(c), testInfo, matrix);
      const pair = await matrix.pairOf(c);
      try {
        if (c.kind === 'fault') {
          const missing = c.expect.filter((id) => !outcome.caught.includes(id));
          const ok = caseHolds(c, outcome);
          record(testInfo, c, ok, outcome);
          expect(
            ok,
            `fault ${c.name}: expected verdict fail with failing ids including [${c.expect.join(', ')}], each failed by a test that ran; ` +
              `observed failing ids [${outcome.failing.join(', ')}]${missing.length ? `, missing [${missing.join(', ')}]` : ''}\n  ${describeOutcome(outcome)}`,
          ).toBe(true);
        } else {
          const ok = (pair?.runs ?? [outcome]).every((o) => caseHolds(c, o));
          record(testInfo, c, ok, outcome);
          const expected = c.phases
            ? `no failing requirement in its phases (${c.phases.join(', ')}) and every one of them evidenced`
            : 'verdict pass';
          expect(
            ok,
            `${c.kind} ${c.name}: expected ${expected} (a failure of a conformant server is an over-assertion of the suite)\n  ${describeOutcome(outcome)}`,
          ).toBe(true);
        }
        if (!c.misleadsRetryAfter) {
          expect(
            { early: outcome.retry.early, bans: c.misleadsRemaining ? {} : outcome.retry.bans },
            `${c.id}: requests sent on a key while its 429's Retry-After was pending, and bans, per key (the run must earn none)`,
          ).toEqual({ early: {}, bans: {} });
        }
        // A run alone on its target sees only its own traffic: it names no other client of a key.
        if (c.kind === 'variant') expect(outcome.otherClients, `${c.id}: a run alone on its target names no other client`).toEqual([]);
        // The messages it queued, counted at the target's door: at most MAX_MESSAGES (default 20).
        if (c.kind === 'variant')
          expect(outcome.retry.messagesQueued ?? 0, `${c.id}: messages queued (POST /messages answered 2xx)`).toBeLessThanOrEqual(20);
        if (pair) expectPairHolds(pair);
      } finally {
        for (const o of pair?.runs ?? [outcome]) cleanup(o);
      }
    });
  }

  test('score: faults caught N/M, conformant variants passed K/K', async ({}, testInfo) => {
    const dir = resultsDir(testInfo);
    const results = CASES.map((c) => {
      const file = path.join(dir, `${c.id.replace(/[^\w-]+/g, '_')}.json`);
      return fs.existsSync(file)
        ? (JSON.parse(fs.readFileSync(file, 'utf8')) as {
            id: string;
            kind: string;
            ok: boolean;
            seconds: number;
            early: number;
            bans: number;
            misleadsRetryAfter: boolean;
            misleadsRemaining: boolean;
          })
        : {
            id: c.id,
            kind: c.kind,
            ok: false,
            seconds: 0,
            early: 0,
            bans: 0,
            misleadsRetryAfter: false,
            misleadsRemaining: false,
            notRun: true,
          };
    });
    const faults = results.filter((r) => r.kind === 'fault');
    const variants = results.filter((r) => r.kind === 'variant');
    const baseline = results.find((r) => r.kind === 'baseline');
    const line = `faults caught ${faults.filter((r) => r.ok).length}/${faults.length}, conformant variants passed ${variants.filter((r) => r.ok).length}/${variants.length}`;
    const honest = results.filter((r) => !r.misleadsRetryAfter);
    const banFree = honest.filter((r) => !r.misleadsRemaining);
    const safety = `early requests ${honest.reduce((a, r) => a + r.early, 0)}, bans ${banFree.reduce((a, r) => a + r.bans, 0)} (cases not built to mislead Retry-After; bans: nor Remaining)`;
    console.log(`\n${line}${baseline ? `; reference server ${baseline.ok ? 'passes' : 'FAILS'}` : ''}\n${safety}\n`);
    testInfo.annotations.push({ type: 'safety', description: safety });
    testInfo.annotations.push({ type: 'score', description: line });
    // Beside Playwright's own output, never in the reports folder: a certify run refuses a folder
    // holding files it did not write.
    const scoreDir = path.resolve(REPO_ROOT, 'test-results');
    fs.mkdirSync(scoreDir, { recursive: true });
    fs.writeFileSync(
      path.join(scoreDir, 'meta-score.json'),
      `${JSON.stringify({ score: line, safety, generatedAt: new Date().toISOString(), concurrency: CONCURRENCY, cases: results }, null, 2)}\n`,
    );
    fs.rmSync(dir, { recursive: true, force: true });
    const notRun = results.filter((r) => 'notRun' in r).map((r) => r.id);
    expect(notRun, `every case of the matrix ran and recorded a result`).toEqual([]);
  });
});
