/**
 * The one module the conformance suites import `test` and `expect` from (docs/architecture.md,
 * "The conformance run"). A short chain of small fixture files (suites/fixtures/):
 * - `run`: the environment, the run-wide pacer's client, `oncePerRun`;
 * - `verdicts`: `warn`, `notCertified`, the readonly profile gate;
 * - `api`: the HTTP client (paced, redacted, with evidence) and `apiFactory`;
 * - `stock`: pets a test owns alone, restored and verified afterwards;
 * - `assertions`: `expectFact`, `expectStatus`, `expectErrorBody`, `expectNoDeviation`, `failWith`: the
 *   one way a check fails, a typed finding (requirement id from the running test).
 */
// Playwright's public `test`: its browser fixtures are set up only when a check asks for one (none does).
import { test as base, expect } from '@playwright/test';
import { runFixtures } from './fixtures/run.ts';
import { verdictFixtures } from './fixtures/verdicts.ts';
import { apiFixtures } from './fixtures/api.ts';
import { stockFixtures } from './fixtures/stock.ts';
import { phaseFixtures } from './fixtures/phase-gate.ts';

/**
 * `fixtures` with no step of their own in the report (`box: 'self'`): a check's evidence is its
 * annotations and attachments, and a step per fixture set up and torn down around every test (with
 * the stack of its call, sent from the worker to the runner and through every reporter) costs the
 * run more than its checks. A fixture that fails still fails its test, with its error.
 */
function withoutSteps<F extends object>(fixtures: F): F {
  return Object.fromEntries(
    Object.entries(fixtures).map(([name, value]) => [
      name,
      Array.isArray(value) ? [value[0], { ...value[1], box: 'self' }] : [value, { box: 'self' }],
    ]),
  ) as F;
}

export const test = base
  .extend(withoutSteps(phaseFixtures))
  .extend(withoutSteps(runFixtures))
  .extend(withoutSteps(verdictFixtures))
  .extend(withoutSteps(apiFixtures))
  .extend(withoutSteps(stockFixtures));
export { expect };

export {
  expectFact,
  expectStatus,
  expectErrorBody,
  expectNoDeviation,
  failWith,
  currentRequirement,
  type Fact,
  type Exchange,
} from './fixtures/assertions.ts';
export {
  createApi,
  type ApiClient,
  type ApiResponse,
  type AnnotationSink,
  type Credential,
  type InventoryEntry,
  type KeyName,
  type SendOptions,
} from './fixtures/api.ts';
export type { Stock, CountReading } from './fixtures/stock.ts';
export { countAfterRefused, countAfterUpdate } from './fixtures/stock.ts';
export { NotCertified, markNotCertified, missingPrerequisiteReason } from './fixtures/verdicts.ts';
export type { OncePerRun } from './fixtures/run.ts';
export type { ConformanceEnv } from './lib/env.ts';
