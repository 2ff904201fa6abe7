/**
 * The generated phase's plan for a run's variables: one derivation shared by the cases
 * (`cases.spec.ts`), the stateful and concurrency checks (`model.spec.ts`) and `--list-cases`, so
 * the shares they spend add up to the budget and the listing says what the run does.
 */
import { openapiDocument } from '../../schemas/index.ts';
import { readGeneratedSettings, type GeneratedSettings } from '../../settings/generated.ts';
import { readSettings } from '../../settings/index.ts';
import { operationsOf, type Operation } from './document.ts';
import { planGenerated, type GeneratedPlan } from './budget.ts';
import { coverageCases, type CoverageCase } from './coverage.ts';
import { classesOf, type ClassOptions } from './classes.ts';

export interface PhasePlan {
  settings: GeneratedSettings;
  readonly: boolean;
  operations: Operation[];
  options: ClassOptions;
  /** Coverage cases per operation id (none for an operation that changes state, under readonly). */
  coverage: Record<string, CoverageCase[]>;
  plan: GeneratedPlan;
}

/** The operation changes state (anything but GET and HEAD). */
export const mutates = (op: Operation): boolean => !['GET', 'HEAD'].includes(op.method);

/** Requests an operation sends besides its cases: a listing for a path id, and a read-back and restore for a change. */
export const overheadOf = (op: Operation): number => (op.pathParameters.length ? 1 : 0) + (op.pathParameters.length && mutates(op) ? 2 : 0);

/** The plan of the generated phase under `env` (the budget, the profile, the seed's settings). */
export function phasePlan(env: Record<string, string | undefined>): PhasePlan {
  const settings = readGeneratedSettings(env);
  const readonly = readSettings(env).values.CONFORMANCE_PROFILE === 'readonly';
  const operations = operationsOf(openapiDocument());
  const options: ClassOptions = { safeMethodsOnly: readonly };
  const coverage = Object.fromEntries(
    operations.map((op) => [op.id, readonly && mutates(op) ? [] : coverageCases(op, operations, options)]),
  );
  const plan = planGenerated(
    settings.budget,
    operations.map((op) => ({ id: op.id, classes: classesOf(op, operations, options).length, overhead: overheadOf(op) })),
    Object.fromEntries(operations.map((op) => [op.id, op.pathParameters.length ? 1 : 0])),
    coverage,
    settings.writers,
  );
  return { settings, readonly, operations, options, coverage, plan };
}
