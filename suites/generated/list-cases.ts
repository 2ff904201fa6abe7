/**
 * `certify --list-cases`: the coverage cases of every operation, per location, marked where the
 * run's budget (GENERATED_BUDGET, or API_PLAN's two windows) would leave them out. Sends nothing.
 */
import { openapi } from '../../schemas/index.ts';
import { readGeneratedSettings } from '../../settings/generated.ts';
import { readSettings } from '../../settings/index.ts';
import { operationsOf } from './document.ts';
import { classesOf } from './classes.ts';
import { coverageCases, listCases } from './coverage.ts';
import { planGenerated } from './budget.ts';

/** The listing for a run's variables (`CONFORMANCE_PROFILE=readonly` leaves out the operations that change state). */
export function listCoverageCases(env: Record<string, string | undefined>): string {
  const settings = readGeneratedSettings(env);
  const readonly = readSettings(env).values.CONFORMANCE_PROFILE === 'readonly';
  const all = operationsOf(openapi);
  const operations = readonly ? all.filter((op) => ['GET', 'HEAD'].includes(op.method)) : all;
  const options = { safeMethodsOnly: readonly };
  const coverage = Object.fromEntries(operations.map((op) => [op.id, coverageCases(op, all, options)]));
  const plan = planGenerated(
    settings.budget,
    operations.map((op) => ({ id: op.id, classes: classesOf(op, all, options).length, overhead: (op.pathParameters.length ? 1 : 0) + (op.pathParameters.length && op.method !== 'GET' ? 2 : 0) })),
    Object.fromEntries(operations.map((op) => [op.id, op.pathParameters.length ? 1 : 0])),
    coverage,
    settings.writers,
  );
  return `Coverage cases of the generated phase (nothing was sent); budget ${settings.budget} requests (${settings.budgetBasis})\n${listCases(operations, options, plan.coverage, all)}`;
}
