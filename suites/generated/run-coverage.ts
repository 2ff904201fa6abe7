/**
 * Sends the coverage cases of one operation (`coverage.ts`) in their fixed order, one request
 * each, through the suites' `api` client (so through the run's pacer), judges each by the rules of
 * `judge.ts`, and keeps every failing case with its location, value, the request as sent, a curl
 * line and a replay token. One loop over data; pure apart from the requests.
 */
import type { ApiClient } from '../fixtures.ts';
import type { Finding } from '../../core/finding.ts';
import type { Operation } from './document.ts';
import { judge } from './judge.ts';
import { countByLocation, type CoverageCase, type Location } from './coverage.ts';
import { encodeToken } from './replay.ts';
import { curlOf, describeRequest, sendGenerated } from './send.ts';
import type { Budget } from './budget.ts';
import { MessageBudgetSpent } from '../fixtures/message-place.ts';

/** A failing coverage case, ready to print. */
export interface CaseFailure {
  location: Location;
  name: string;
  value: string;
  findings: Finding[];
  request: string;
  curl: string;
  token: string;
}

export interface CoverageRun {
  /** Cases of the operation within the budget, per location. */
  planned: Record<Location, number>;
  /** Cases sent, per location. */
  sent: Record<Location, number>;
  /** Cases of the operation the budget left out, by name. */
  leftOut: string[];
  failures: CaseFailure[];
  /** Warnings of cases outside the API (a front door's own answer), each with its curl line; at most `MAX_WARNINGS`. */
  warnings: Finding[];
  /** Some case got a 2xx to a state-changing request (the item may need restoring). */
  changed: boolean;
  /** Cases not sent because the target stopped answering this operation (`MAX_UNANSWERED` requests got no response). */
  abandoned: string[];
  /** Cases not sent because the run's messages were spent (`MAX_MESSAGES`), by name. */
  messagesSpent?: string[];
}

/** Requests of one operation that may go unanswered before its remaining cases are no longer sent (each costs REQUEST_TIMEOUT_MS). */
export const MAX_UNANSWERED = 3;

/** Warnings kept per operation: enough to name every front door's answer, not one per case of a server that warns on all. */
export const MAX_WARNINGS = 24;

/** A run that sent nothing. */
export function emptyCoverageRun(): CoverageRun {
  return {
    planned: countByLocation([]),
    sent: countByLocation([]),
    leftOut: [],
    failures: [],
    warnings: [],
    changed: false,
    abandoned: [],
  };
}

/** Runs `cases` in order while `budget` lasts; `leftOut` are the names the plan did not fit. */
export async function runCoverage(
  api: ApiClient,
  op: Operation,
  cases: readonly CoverageCase[],
  leftOut: string[],
  values: Record<string, string>,
  listed: boolean,
  budget: Budget,
): Promise<CoverageRun> {
  const run: CoverageRun = {
    planned: countByLocation(cases),
    sent: countByLocation([]),
    leftOut: [...leftOut],
    failures: [],
    warnings: [],
    changed: false,
    abandoned: [],
  };
  let unanswered = 0;
  for (const c of cases) {
    if (unanswered >= MAX_UNANSWERED) {
      run.abandoned.push(c.name);
      continue;
    }
    if (!budget.take()) {
      run.leftOut.push(c.name);
      continue;
    }
    let sent: Awaited<ReturnType<typeof sendGenerated>>;
    try {
      sent = await sendGenerated(api, op, c.request, values);
    } catch (e) {
      if (!(e instanceof MessageBudgetSpent)) throw e;
      (run.messagesSpent ??= []).push(c.name);
      continue;
    }
    run.sent[c.location]++;
    const { outcome, options } = sent;
    if (outcome.kind === 'no-response') unanswered++;
    if (
      outcome.kind === 'response' &&
      outcome.response.status < 300 &&
      !['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND', 'SEARCH'].includes(c.request.method)
    )
      run.changed = true;
    const judged = judge(op, c.request, outcome, listed);
    for (const w of judged.filter((f) => f.level === 'warn').slice(0, MAX_WARNINGS - run.warnings.length)) {
      const message = api.redact(`coverage ${op.id} ${c.name}: ${w.message}`);
      run.warnings.push({ ...w, message, observed: api.redact(w.observed), curl: curlOf(api, op, options, c.request) });
    }
    const findings = judged.filter((f) => f.level === 'fail');
    if (!findings.length) continue;
    run.failures.push({
      location: c.location,
      name: c.name,
      value: api.redact(c.value),
      findings: findings.map((f) => ({ ...f, message: api.redact(f.message), observed: api.redact(f.observed) })),
      request: api.redact(describeRequest(options, c.request)),
      curl: curlOf(api, op, options, c.request),
      token: encodeToken({ check: 'coverage', op: op.id, cls: c.name, seed: 0 }),
    });
  }
  return run;
}
