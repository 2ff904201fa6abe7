/**
 * Settings of the conformance run: the target, its keys and plans, the profile, where reports go,
 * workers and timeouts. Read by certify, the suites' fixtures and `playwright.config.ts` through
 * `settings/index.ts`; documented by `--help` and the README tables generated from this file.
 */
import { PLAN_LIMITS, type Plan } from '../core/plans.ts';
import { defineGroup, setting } from './define.ts';

/** Plans of the spec's Limits table, from the one plan-limits table (`suites/lib/rate-limit.ts`); enterprise is custom. */
export const PLANS: readonly Plan[] = [...(Object.keys(PLAN_LIMITS) as Plan[]), 'enterprise'];
/** Profiles: `readonly` sends no state-changing request with a valid key, no 429 probe, no load. */
export const PROFILES = ['full', 'readonly'] as const;

export const RUN_SETTINGS = defineGroup('run', 'Target, keys and run', [
  setting({ name: 'BASE_URL', kind: 'url', help: 'Inventory base address, ends in /v1. Unset: certify the bundled reference server.' }),
  setting({
    name: 'API_URL',
    kind: 'url',
    help: 'Quickstart base address; the suite posts to ${API_URL}/messages. Without it the messages checks are not certified, naming API_URL.',
  }),
  setting({ name: 'API_KEY', kind: 'secret', help: 'A valid key of the target. Required with BASE_URL. Never printed or written.' }),
  setting({ name: 'API_PLAN', kind: 'enum', values: PLANS, help: 'Plan of API_KEY; when given, X-RateLimit-Limit must match the plan.' }),
  setting({
    name: 'RATE_LIMIT_KEY',
    kind: 'secret',
    help: 'A key the 429 and overload checks may exhaust (and, on a server that bans, get banned). Without it the 429 checks run last, on API_KEY, and the overload burst is not certified.',
  }),
  setting({ name: 'RATE_LIMIT_PLAN', kind: 'enum', values: PLANS, help: 'Plan of RATE_LIMIT_KEY.' }),
  setting({
    name: 'LOAD_KEY',
    kind: 'secret',
    help: 'A key whose limits the capacity load will not reach. Without it the capacity checks send nothing and are not certified.',
  }),
  setting({
    name: 'CONFORMANCE_PROFILE',
    kind: 'enum',
    values: PROFILES,
    default: 'full',
    flag: '--profile',
    help: 'full, or readonly: no state-changing request with a valid key, no 429 probe, no load; the report lists what was not certified.',
  }),
  setting({
    name: 'MISSING_PET_ID',
    kind: 'int64',
    help: 'A pet id that does not exist on the target (the 404 checks); otherwise one is derived from the list.',
  }),
  setting({
    name: 'REPORTS_DIR',
    kind: 'path',
    default: 'reports',
    help: 'Where the reports go: a fresh or empty folder, or one an earlier run wrote (it holds `.conformance-run.json`); certify deletes only what that run listed. A symbolic link, the repository root, / or your home (or a folder holding them), and a folder holding files certify did not write are refused (exit 2).',
  }),
  setting({
    name: 'WORKERS',
    kind: 'integer',
    min: 1,
    default: 2,
    help: 'Playwright workers per phase, at most (the rate-limit and generated phases run their checks one at a time); the suites keep WORKERS + 1 requests in reserve when pacing by X-RateLimit-Remaining.',
  }),
  setting({
    name: 'MAX_RETRY_AFTER_S',
    kind: 'integer',
    min: 1,
    max: 86_400,
    default: 120,
    unit: 'seconds',
    help: 'Longest Retry-After or window reset the run waits; a longer one makes the requirement not certified, naming this variable, and nothing more is sent on that key.',
  }),
  setting({
    name: 'MAX_EXHAUST_REQUESTS',
    kind: 'integer',
    min: 1,
    default: 2000,
    help: 'Most requests the 429 checks send to drive a key to its limit; more needed: not certified.',
  }),
  setting({
    name: 'MAX_MESSAGES',
    kind: 'integer',
    min: 0,
    default: 20,
    help: 'Most messages a run may queue on POST ${API_URL}/messages, all phases together (each is a real message on the target; the API cannot take one back); a check that would post one more is not certified, naming this variable. 0: none.',
  }),
  setting({
    name: 'REQUEST_TIMEOUT_MS',
    kind: 'integer',
    min: 1,
    default: 15_000,
    unit: 'milliseconds',
    help: 'Per-request deadline of the suites, wall clock to the last byte of the answer (the preflight uses at most 10 s): a request not answered in full by then fails its check when the list, asked for right after it with the same key, comes back within half of it; otherwise the check is not certified.',
  }),
  setting({
    name: 'PHASE_TIMEOUT_S',
    kind: 'integer',
    min: 1,
    default: 900,
    unit: 'seconds',
    help: 'Hard limit per phase (Playwright --global-timeout, then SIGTERM and SIGKILL 30 s later); a phase over it is a run problem.',
  }),
  setting({
    name: 'OTHER_RUN_WAIT_S',
    kind: 'integer',
    min: 1,
    default: 3600,
    unit: 'seconds',
    help: 'Certifications of one target on one machine take turns: the longest a run waits for another to end before it sends anything to the target; past it the run stops (exit 5), having sent nothing.',
  }),
] as const);
