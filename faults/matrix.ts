import { faults } from './catalogue/index.ts';
import { variants } from './variants.ts';
import type { MatrixCase } from './harness.ts';
import { listSuites, phasesByRequirement, type ListedTest } from '../core/ledger.ts';
import { requirementIds } from '../core/results.ts';

/**
 * The cases of the fault matrix, in the order the meta-test runs them: the unmodified reference
 * server, every fault, every variant. Each fault names the ledger ids that must fail; a variant
 * and the baseline must pass.
 */
export interface NamedCase extends MatrixCase {
  kind: 'baseline' | 'fault' | 'variant';
  name: string;
  expect: string[];
  /** The fault misleads about Retry-After: early requests and bans are not held against the run. */
  misleadsRetryAfter?: boolean;
  /** The fault misstates Remaining (`FaultDefinition.misleadsRemaining`): bans are not held against the run, early requests are. */
  misleadsRemaining?: boolean;
}

/**
 * Settings for certify in the matrix: short load runs and a lenient latency threshold (many runs
 * share two cores; the matrix proves what is caught, not how fast the machine is).
 */
export const MATRIX_ENV: Record<string, string> = {
  WORKERS: '2',
  LOAD_DURATION_S: '1',
  LOAD_CONNECTIONS: '4',
  LOAD_P99_MS: '10000',
  LOAD_MAX_ERROR_RATE: '0.05',
  LOAD_BURST_MAX: '200',
  // As many as LOAD_BURST_MAX, as the default (500) is: a burst goes out at once, in one wave, as a
  // user's does (a larger burst goes in waves, each once the one before is answered).
  LOAD_BURST_CONNECTIONS: '200',
  MAX_RETRY_AFTER_S: '30',
};

/**
 * Each requirement's certify phases, derived from where its tests live (the Playwright projects of
 * the root config, `listSuites` in core/ledger.ts): listed once per process, on first use.
 */
let requirementPhases: { byId: Map<string, string[]>; order: string[]; tests: ListedTest[] } | undefined;
function phasesOfRequirements(): { byId: Map<string, string[]>; order: string[]; tests: ListedTest[] } {
  if (!requirementPhases) {
    const { tests, projects, errors } = listSuites();
    if (errors.length) throw new Error(`the conformance suites do not load: ${JSON.stringify(errors).slice(0, 500)}`);
    requirementPhases = { byId: phasesByRequirement(tests, projects), order: projects, tests };
  }
  return requirementPhases;
}

/** The tests of the suites as the matrix lists them (once per process). */
export function listedSuiteTests(): readonly ListedTest[] {
  return phasesOfRequirements().tests;
}

/**
 * Phases whose tests are independent of one another, so a test run alone behaves as it does among
 * the others: `functional` (fully parallel, each test in any worker, in any order), `generated`
 * (one test at a time, each restoring what it changed; its plan of requests comes from the run's
 * variables, not from the tests selected) and `rate-limit` (its tests judge two records made once
 * per run by whichever test needs them first, in the same order: the 429 sequence, a fixture every
 * test of the phase uses, then the bursts, `oncePerRun`). A fault limited to such phases runs only
 * the tests that evidence its expected ids. The load phase always runs whole: its checks follow one
 * another on LOAD_KEY's windows.
 */
const INDEPENDENT_PHASES: readonly string[] = ['functional', 'generated', 'rate-limit'];

/**
 * The tests (`file:line` of `suites/`) that evidence `ids` when every phase in `phases` runs its
 * tests independently; undefined otherwise (the phases run whole). Tests generated in one loop share
 * a line, so a location may hold tests of other ids; `testsOption` leaves those out by title. The
 * other requirements of the phase go without a test result, which the matrix never counts as a
 * catch (`caseHolds`).
 */
export function testsFor(
  ids: readonly string[],
  phases: readonly string[],
  tests: readonly ListedTest[] = phasesOfRequirements().tests,
): string[] | undefined {
  return testsOption(ids, phases, tests).tests;
}

function evidencingTests(ids: readonly string[], phases: readonly string[], tests: readonly ListedTest[]): ListedTest[] | undefined {
  if (!phases.length || !phases.every((p) => INDEPENDENT_PHASES.includes(p))) return undefined;
  const wanted = new Set(ids);
  const found = tests.filter(
    (t) => t.file && t.line && (t.projects ?? []).some((p) => phases.includes(p)) && requirementIds(t).some((id) => wanted.has(id)),
  );
  return found.length ? found : undefined;
}

/**
 * The certify phases whose checks evidence `ids` (every project that runs a test of one of them),
 * in the config's order. A fault runs only those; a wrong phase cannot pass unnoticed, because a
 * requirement whose phase did not run fails with "no test result" and the matrix never counts
 * that as a catch.
 */
export function phasesFor(
  ids: readonly string[],
  known: Map<string, string[]> = phasesOfRequirements().byId,
  order: readonly string[] = phasesOfRequirements().order,
): string[] {
  const wanted = new Set(ids.flatMap((id) => known.get(id) ?? []));
  return order.filter((p) => wanted.has(p));
}

/** What `caseHolds` needs of a certify run's outcome (`CaseOutcome` of `harness.ts`). */
export interface JudgedOutcome {
  verdict: 'pass' | 'fail' | 'missing';
  failing: readonly string[];
  /** Failing requirements with a test that ran and failed: only these count as a fault's catch. */
  caught: readonly string[];
  unevidenced: readonly string[];
  problems: readonly string[];
}

/**
 * Whether a case came out as it must. A fault: verdict `fail` with every expected id failing by a
 * test that ran and failed (not by one a stop left without a result). The
 * baseline and a variant of every phase: verdict `pass`. A variant limited to some phases: the
 * requirements left out fail with "no test result", so it holds when nothing its phases evidence
 * failed, no requirement of its own phases went without a test result, and the run had no problem.
 */
export function caseHolds(
  c: Pick<NamedCase, 'kind' | 'expect' | 'phases'>,
  out: JudgedOutcome,
  known: Map<string, string[]> = phasesOfRequirements().byId,
): boolean {
  if (c.kind === 'fault') return out.verdict === 'fail' && c.expect.every((id) => out.caught.includes(id));
  if (!c.phases) return out.verdict === 'pass';
  const ranButUnevidenced = out.unevidenced.filter((id) => (known.get(id) ?? []).some((p) => c.phases!.includes(p)));
  return out.verdict !== 'missing' && out.failing.length === 0 && ranButUnevidenced.length === 0 && out.problems.length === 0;
}

/**
 * The expected ids a fault's run left not certified, when they are all that keeps it from holding:
 * the run could not tell what it saw (its own limits, such as a runner too busy to keep a short
 * window's timing), which is never a catch and never a miss of the suite. The matrix runs such a
 * case once more, with longer windows (`SECOND_RUN_WINDOW_MS` of `harness.ts`), and judges that
 * run; any other miss is judged as it is (empty).
 */
export function inconclusiveIds(
  c: Pick<NamedCase, 'kind' | 'expect'>,
  out: JudgedOutcome & { notCertified: Readonly<Record<string, string>> },
): string[] {
  if (c.kind !== 'fault' || out.verdict === 'missing') return [];
  const missing = c.expect.filter((id) => !out.caught.includes(id));
  return missing.length > 0 && missing.every((id) => id in out.notCertified) ? missing : [];
}

/**
 * A fault run uses one Playwright worker per phase (each failing check restarts a worker anyway)
 * and a generated budget of 300 requests: the coverage cases go first and every generated fault is
 * caught within them (a fault whose cases come later, such as updateInventory's boundary
 * quantities, sets a larger budget in its own `env`), and a larger budget only sends more cases, so
 * a fault caught here is caught by a default run too. A request deadline of 8 s bounds a fault that
 * leaves a request unanswered (a hang sets a shorter one in its own `env`).
 *
 * The baseline and the variants keep the defaults: their pass must hold at the size a user runs,
 * and with the deadline a user gets. A shorter one would fail a conformant server whose answer a
 * busy runner delays past it (measured once, with four matrix runs at once: a conformant variant
 * failed three checks on answers not complete within 8 s).
 */
export const FAULT_ENV: Record<string, string> = { WORKERS: '1', GENERATED_BUDGET: '300', REQUEST_TIMEOUT_MS: '8000' };

/**
 * A fault's `tests` and `titles` (the tests that evidence its expected ids), when its phases allow
 * it: a loop's location also holds tests of other requirements, which the run leaves out by title.
 * With one expected id every test the run selects evidences it, so the run stops at the first
 * failed test (`maxFailures: 1`): that failure is the catch, and what would follow only restarts a
 * worker per failed test. A requirement counts as caught only by a test that ran and failed
 * (`harness.ts`), never by one the stop left without a result.
 */
export function testsOption(
  expect: readonly string[],
  phases: readonly string[] = phasesFor(expect),
  listed: readonly ListedTest[] = phasesOfRequirements().tests,
): { tests?: string[]; titles?: string[]; maxFailures?: number } {
  const evidencing = evidencingTests(expect, phases, listed);
  if (!evidencing) return {};
  const tests = [...new Set(evidencing.map((t) => `${t.file}:${t.line}`))];
  const titles = [...new Set(evidencing.map((t) => t.title))];
  return expect.length === 1 ? { tests, titles, maxFailures: 1 } : { tests, titles };
}

/** The cases; extended faults only with `extended` (default: `MATRIX_EXTENDED=1`). */
export function matrixCases(extended = process.env.MATRIX_EXTENDED === '1'): NamedCase[] {
  return [
    { kind: 'baseline', name: 'baseline', id: 'baseline', expect: [] },
    ...faults
      .filter((f) => extended || !f.extended)
      .map(
        (f): NamedCase => ({
          kind: 'fault',
          name: f.name,
          id: `fault:${f.name}`,
          expect: f.expect,
          phases: phasesFor(f.expect),
          env: { ...FAULT_ENV, ...f.env },
          ...testsOption(f.expect),
          ...(f.misleadsRetryAfter ? { misleadsRetryAfter: true } : {}),
          ...(f.misleadsRemaining ? { misleadsRemaining: true } : {}),
          ...(f.proxy ? { proxy: f.proxy } : {}),
          ...(f.store ? { store: f.store } : {}),
          ...(f.upstream ? { upstream: f.upstream } : {}),
          ...(f.basePath ? { basePath: f.basePath } : {}),
        }),
      ),
    ...variants.map(
      (v): NamedCase => ({
        kind: 'variant',
        name: v.name,
        id: `variant:${v.name}`,
        expect: [],
        ...(v.phases ? { phases: v.phases } : {}),
        ...(v.proxy ? { proxy: v.proxy } : {}),
        ...(v.store ? { store: v.store } : {}),
        ...(v.upstream ? { upstream: v.upstream } : {}),
        ...(v.connectionClose ? { connectionClose: true } : {}),
      }),
    ),
  ];
}
