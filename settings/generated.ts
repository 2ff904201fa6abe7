/**
 * Settings of the generated phase (suites/generated): its request budget, its seed and the replay
 * of one saved case. `readGeneratedSettings` reads them by the one parser of `define.ts`.
 */
import { defineGroup, parseValue, setting, type Setting } from './define.ts';
import { PLAN_LIMITS, isPlan } from '../core/plans.ts';

/**
 * Requests the other phases send on API_KEY in a default run, with a margin: measured on the
 * reference server, about 185 of the requests on API_KEY went to the functional and rate-limit phases
 * (the functional phase writes back every pet it claimed).
 */
export const OTHER_PHASES_API_KEY_REQUESTS = 200;

/**
 * The default budget: two windows of the plan's per-minute limit less the other phases' needs,
 * and never less than one window (a free key then waits one window more). An unknown plan
 * (unset, or enterprise, whose limits the spec does not show) counts as free.
 */
export function defaultBudget(plan: string | undefined): { budget: number; basis: string } {
  const name = plan?.trim().toLowerCase();
  const known = isPlan(name) && name !== 'enterprise' ? name : undefined;
  const minute = PLAN_LIMITS[known ?? 'free'].minute;
  const budget = Math.max(minute, 2 * minute - OTHER_PHASES_API_KEY_REQUESTS);
  return {
    budget,
    basis: `${known ? `plan ${known}` : 'plan unknown, counted as free'}: 2 × ${minute} per minute less ${OTHER_PHASES_API_KEY_REQUESTS} for the other phases (at least one window)`,
  };
}

export const GENERATED_SETTINGS = defineGroup('generated', 'Generated checks (schema-driven, stateful, concurrent)', [
  setting({
    name: 'GENERATED_BUDGET',
    kind: 'integer',
    min: 20,
    max: 100_000,
    unit: 'requests',
    help: 'Most requests the generated phase sends on API_KEY, shrinking included. Default: what API_PLAN allows in two windows less what the other phases send on it, at least one window (no plan or enterprise: counted as free). Coverage cases go first; those that do not fit are listed as not certified.',
  }),
  setting({
    name: 'GENERATED_SEED',
    kind: 'integer',
    min: 0,
    max: 2 ** 31 - 1,
    default: 1,
    help: 'Seed of the generated cases: the same seed sends the same requests in the same order against the same inventory.',
  }),
  setting({
    name: 'GENERATED_WRITERS',
    kind: 'integer',
    min: 2,
    max: 16,
    default: 3,
    help: 'Concurrent updates of one pet in the consistency check.',
  }),
  setting({
    name: 'CONFORMANCE_REPLAY',
    kind: 'string',
    flag: '--replay',
    help: 'A replay token printed with a generated failure: the generated phase runs just that case (the other generated checks are skipped).',
  }),
] as const);

export interface GeneratedSettings {
  budget: number;
  /** Where the budget came from: `GENERATED_BUDGET`, or the plan (with the arithmetic). */
  budgetBasis: string;
  seed: number;
  writers: number;
  replay?: string;
  problems: string[];
}

/** Reads the group's settings from `env`; a bad value is a problem and falls back to the default. */
export function readGeneratedSettings(env: Record<string, string | undefined> = process.env): GeneratedSettings {
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const s of GENERATED_SETTINGS.settings as readonly Setting[]) {
    values[s.name] = s.default;
    const raw = env[s.name];
    if (raw === undefined || raw.trim() === '') continue;
    const parsed = parseValue(s, raw);
    if (parsed.ok) values[s.name] = parsed.value;
    else problems.push(parsed.message);
  }
  const derived = defaultBudget(env.API_PLAN);
  return {
    budget: (values.GENERATED_BUDGET as number | undefined) ?? derived.budget,
    budgetBasis: values.GENERATED_BUDGET !== undefined ? 'GENERATED_BUDGET' : derived.basis,
    seed: values.GENERATED_SEED as number,
    writers: values.GENERATED_WRITERS as number,
    replay: values.CONFORMANCE_REPLAY as string | undefined,
    problems,
  };
}
