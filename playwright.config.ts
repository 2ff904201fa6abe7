import type { PlaywrightTestConfig } from '@playwright/test';
import { CODE_EXT, phaseOutputDir } from './core/paths.ts';
import { readSettings } from './settings/index.ts';

/**
 * The conformance run (docs/architecture.md): suites in `suites/`, one Playwright project per
 * phase, every phase in one Playwright run with workers of its own (`workers` is their sum, so no
 * phase waits for another's). This file is the one home of the phase list: certify's reporter
 * opens a phase as soon as the phases of its `metadata.after` have ended (no project
 * `dependencies`: a failing phase must not skip the next one), and `metadata.readonly` says
 * whether the `readonly` profile runs it.
 *
 * Traces, screenshots and videos stay off: a trace copies request headers, the key among them,
 * verbatim. No `extraHTTPHeaders`: the suites' `api` fixture sets Authorization per request and
 * redacts it from everything it records. Workers, reports folder and the wait limit come from
 * `settings/` (one rule per variable).
 */
const { values } = readSettings(process.env);
/** `.ts` in a clone, `.js` in the installed package (compiled at pack time). */
const ext = CODE_EXT;

/** Metadata certify reads from each project (phase). */
export interface PhaseMetadata {
  /** The `readonly` profile runs this phase (it sends no state-changing request with a valid key). */
  readonly: boolean;
  /**
   * Phases that must have ended before this one starts (they send on a key this one drives to its
   * limit, or change what it reads). Phases without such a tie run at the same time: each works on
   * its own key, and the run-wide pacer holds every key for every phase.
   */
  after?: string[];
  /**
   * A key that, when the run has it, lifts `after`: the phase then sends only on that key, and
   * whatever another phase sends on it is taken once per run before this phase drives it (the
   * countdown on RATE_LIMIT_KEY, `suites/rate-limit/countdown.ts`).
   */
  aloneWith?: 'RATE_LIMIT_KEY';
  /**
   * The phase's length is set by the target's windows, or by a run of fixed length that a later
   * phase waits for: when it starts with phases that are not, it gets the cores first while
   * Playwright's processes start, and they start once it has sent its first request
   * (`yieldsAtStart`, certify/phase-list.ts).
   */
  startFirst?: boolean;
}

/** Workers of the phases that run their checks one at a time. */
const ONE = 1;

// A plain object, not `defineConfig(…)`: certify reads the phase list from this file, and a
// runtime import of @playwright/test would load the whole test runner into every certify process.
const config: PlaywrightTestConfig = {
  testDir: 'suites',
  testMatch: `**/*.spec${ext}`,
  // Each project (phase) has its own output folder (`phaseOutputDir`): phases overlap, and
  // Playwright empties a project's output folder when it starts.
  // The run-wide pacer (suites/pacing): started here unless certify passes CONFORMANCE_PACER_URL.
  globalSetup: `./suites/pacing/global-setup${ext}`,
  // A pacing wait or a Retry-After wait may take up to MAX_RETRY_AFTER_S; the 429 check sets its own.
  timeout: (values.MAX_RETRY_AFTER_S + 60) * 1000,
  // Every phase's workers at once (functional's WORKERS, one each for rate-limit, load and generated).
  workers: values.WORKERS + 3 * ONE,
  fullyParallel: true,
  retries: 0,
  forbidOnly: !!process.env.CI,
  reporter: [['list']],
  use: {
    // The suites send through their own transport (TLS verified explicitly); a check that used
    // Playwright's `request` would verify too, never trusting NODE_TLS_REJECT_UNAUTHORIZED.
    ignoreHTTPSErrors: false,
    trace: 'off',
    screenshot: 'off',
    video: 'off',
  },
  projects: [
    {
      // API_KEY (and RL-04 and RL-11 on RATE_LIMIT_KEY, judged on the run's countdown on it).
      name: 'functional',
      outputDir: phaseOutputDir(values.REPORTS_DIR, 'functional'),
      testIgnore: [`rate-limit/retry-after.spec${ext}`, 'load/**', 'generated/**'],
      workers: values.WORKERS,
      metadata: { readonly: true } satisfies PhaseMetadata,
    },
    {
      // RATE_LIMIT_KEY: the 429 sequence, then the overload bursts (its recovery window is the first
      // burst window). Without RATE_LIMIT_KEY the sequence spends API_KEY's window: after the functional checks.
      name: 'rate-limit',
      outputDir: phaseOutputDir(values.REPORTS_DIR, 'rate-limit'),
      testMatch: [`rate-limit/retry-after.spec${ext}`, `load/overload.spec${ext}`],
      fullyParallel: false,
      // One worker: both files judge the one sequence and the bursts that follow it on the key's
      // windows (`oncePerRun`), whichever file comes first, so a second worker would only start.
      workers: ONE,
      metadata: { readonly: false, after: ['functional'], aloneWith: 'RATE_LIMIT_KEY', startFirst: true } satisfies PhaseMetadata,
    },
    {
      // LOAD_KEY, while the other phases run on their own keys: the capacity mix (it leases its
      // pet, and the generated checks wait for it: suites/generated/pets-held.ts) and the capacity
      // run that lists (it changes nothing), at once when the key has room for both, else in turn
      // (suites/load/capacity-together.ts).
      name: 'load',
      outputDir: phaseOutputDir(values.REPORTS_DIR, 'load'),
      testMatch: `load/capacity.spec${ext}`,
      fullyParallel: false,
      workers: ONE,
      metadata: { readonly: false, startFirst: true } satisfies PhaseMetadata,
    },
    {
      // The checks that change pets under a model of the store, one at a time: the schema-driven,
      // stateful and concurrent generated checks (suites/generated), holding every listed pet's
      // lease while they run; @mutates left out in readonly.
      name: 'generated',
      outputDir: phaseOutputDir(values.REPORTS_DIR, 'generated'),
      testMatch: `generated/**/*.spec${ext}`,
      fullyParallel: false,
      // One at a time: the generated cases, the sequences and the concurrency check share the pets they change.
      workers: ONE,
      metadata: { readonly: true, after: ['functional'] } satisfies PhaseMetadata,
    },
  ],
};

export default config;
