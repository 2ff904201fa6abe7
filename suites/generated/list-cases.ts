/**
 * `certify --list-cases`: the coverage cases of every operation, per location, marked where the
 * run's budget (GENERATED_BUDGET, or API_PLAN's two windows) would leave them out. Sends nothing.
 * The plan is the run's own (`phase-plan.ts`), so the listing says what a run does.
 */
import { listCases } from './coverage.ts';
import { mutates, phasePlan } from './phase-plan.ts';

/** The listing for a run's variables (`CONFORMANCE_PROFILE=readonly` leaves out the operations that change state). */
export function listCoverageCases(env: Record<string, string | undefined>): string {
  const { settings, readonly, operations, options, plan } = phasePlan(env);
  const listed = readonly ? operations.filter((op) => !mutates(op)) : operations;
  return `Coverage cases of the generated phase (nothing was sent); budget ${settings.budget} requests (${settings.budgetBasis})\n${listCases(listed, options, plan.coverage, operations)}`;
}
