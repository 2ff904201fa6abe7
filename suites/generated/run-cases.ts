/**
 * Runs the generated request classes of one operation through the suites' `api` client (so every
 * request goes through the run's pacer): one fast-check property per class, seeded, each failure
 * shrunk within the operation's share of the budget, then reported with its replay token and a
 * curl line. A pet the operation may change (a listed id under a state-changing method) is put
 * back and verified through the list afterwards.
 */
import fc from 'fast-check';
import type { ApiClient, SendOptions } from '../fixtures.ts';
import type { Finding } from '../../core/finding.ts';
import type { Operation, Schema } from './document.ts';
import { classesOf, fillPath, type CaseClass, type GeneratedRequest } from './classes.ts';
import { judge } from './judge.ts';
import { Budget, runsPerClass } from './budget.ts';
import { encodeToken, type ReplayToken } from './replay.ts';
import { curlOf, describeRequest, sendGenerated } from './send.ts';
import { MessageBudgetSpent } from '../fixtures/message-place.ts';
import { validValue } from './keywords.ts';
import { writeJson } from './json-text.ts';
import { countText, describeUnrestored, restorable, sameCount, type Unrestored } from '../lib/unrestored.ts';
import { anotherClientBetweenWriteBacks } from '../lib/count-origin.ts';
import { writeBackLeftAlone } from '../journal/decision.ts';
import { sendWriteBack, transient5xxWarning } from '../lib/write-back.ts';
import { emptyCoverageRun, runCoverage, type CoverageRun } from './run-coverage.ts';
import type { CoverageCase } from './coverage.ts';

/** A failure of one class, shrunk. */
export interface ClassFailure {
  findings: Finding[];
  /** The shrunk request as sent. */
  request: string;
  token: string;
  curl: string;
  shrinks: number;
  /** Shrinking stopped because the share was used up. */
  shrinkCut: boolean;
}

export interface ClassRun {
  name: string;
  /** Cases sent (shrinking included). */
  sent: number;
  /** Cases not sent because the share was used up. */
  unsent: number;
  failure?: ClassFailure;
  /** Warnings of requests outside the API (a front door's own answer), one per rule and status, each with its curl line. */
  warnings?: Finding[];
}

export interface OperationRun {
  op: string;
  seed: number;
  classes: ClassRun[];
  /** Requests sent, listing and restoring included. */
  requests: number;
  /** Problems outside the cases (restoration), as findings. */
  findings: Finding[];
  notes: string[];
  /** The coverage cases of the operation (run before the random classes). */
  coverage: CoverageRun;
  /** Items the run changed and could not put back. */
  unrestored: Unrestored[];
  /** Write-backs accepted only when sent again after a 5xx (GEN-06 warnings). */
  warnings: string[];
  /** Set when the write-backs showed another client's count (GEN-06 not certified). */
  notCertified?: string;
}

export interface RunOptions {
  seed: number;
  share: number;
  safeMethodsOnly: boolean;
  /** Run only this case (a replay). */
  replay?: ReplayToken;
  /** The coverage cases within the budget, in order, and the names of those left out. */
  coverage?: { cases: CoverageCase[]; leftOut: string[] };
}

/** Stable 31-bit hash of a class name: each class gets its own seed derived from the run's. */
export function classSeed(seed: number, name: string): number {
  let h = seed | 0;
  for (let i = 0; i < name.length; i++) h = (Math.imul(h ^ name.charCodeAt(i), 0x01000193) + 0x9e3779b9) | 0;
  return h & 0x7fffffff;
}

/** The operation (a list without parameters) whose items carry a property named `name`. */
export function sourceOf(name: string, operations: Operation[]): Operation | undefined {
  return operations.find((o) => {
    if (o.method !== 'GET' || o.pathParameters.length || o.requestBody) return false;
    return Object.values(o.successSchemas).some(
      (s) =>
        s.type === 'array' && ((s.items as Schema | undefined)?.properties as Record<string, unknown> | undefined)?.[name] !== undefined,
    );
  });
}

/** True for an integer id beyond 2^53, the values a double would round (listed first: the precision class). */
export function isUnsafeInteger(text: string): boolean {
  return /^-?\d+$/.test(text) && !Number.isSafeInteger(Number(text));
}

/** The listed values of an operation's path parameters (one list request per source), unsafe integers first. */
export async function listedValues(
  api: ApiClient,
  op: Operation,
  operations: Operation[],
  seed: number,
  budget: Budget,
): Promise<{ values: Record<string, string>; item?: Record<string, unknown>; listed: boolean }> {
  const values: Record<string, string> = {};
  let item: Record<string, unknown> | undefined;
  let listed = op.pathParameters.length > 0;
  for (const p of op.pathParameters) {
    const source = sourceOf(p.name, operations);
    if (source && budget.take()) {
      const res = await api.send({ method: source.method, base: source.base, path: source.path, evidence: false });
      const items = Array.isArray(res.json) ? (res.json as Record<string, unknown>[]) : [];
      const candidates = items.filter((i) => i && i[p.name] !== undefined);
      const chosen = candidates.find((i) => isUnsafeInteger(String(i[p.name]))) ?? candidates[0];
      if (chosen) {
        values[p.name] = String(chosen[p.name]);
        item = chosen;
        continue;
      }
    }
    listed = false;
    values[p.name] = String(fc.sample(validValue(p.schema), { seed, numRuns: 1 })[0]);
  }
  return { values, item, listed };
}

/** Runs one class: `runs` cases, the first failure shrunk while the budget lasts. */
async function runClass(
  api: ApiClient,
  op: Operation,
  cls: CaseClass,
  values: Record<string, string>,
  listed: boolean,
  seed: number,
  runs: number,
  budget: Budget,
  replay?: ReplayToken,
): Promise<ClassRun> {
  let sent = 0;
  let unsent = 0;
  let last: { findings: Finding[]; options: SendOptions; req: GeneratedRequest } | undefined;
  let cut = false;
  const warned = new Map<string, Finding>();
  const property = fc.asyncProperty(cls.arbitrary, async (req) => {
    if (!budget.take()) {
      if (last) cut = true;
      else unsent++;
      return true;
    }
    let result: Awaited<ReturnType<typeof sendGenerated>>;
    try {
      result = await sendGenerated(api, op, req, values);
    } catch (e) {
      if (!(e instanceof MessageBudgetSpent)) throw e;
      unsent++;
      return true;
    }
    sent++;
    const { outcome, options } = result;
    const judged = judge(op, req, outcome, listed);
    for (const w of judged.filter((f) => f.level === 'warn')) {
      const seen = `${w.id} ${outcome.kind === 'response' ? outcome.response.status : ''}`;
      if (warned.has(seen)) continue;
      warned.set(seen, {
        ...w,
        message: api.redact(`${cls.name}: ${w.message}`),
        observed: api.redact(w.observed),
        curl: curlOf(api, op, options, req),
      });
    }
    const findings = judged.filter((f) => f.level === 'fail');
    if (findings.length) last = { findings, options, req };
    return findings.length === 0;
  });
  const classSeedValue = replay?.seed ?? classSeed(seed, cls.name);
  const details = await fc.check(property, {
    seed: classSeedValue,
    numRuns: replay ? 1 : runs,
    ...(replay?.path ? { path: replay.path } : {}),
  });
  const run: ClassRun = { name: cls.name, sent, unsent, ...(warned.size ? { warnings: [...warned.values()] } : {}) };
  if (details.failed && last) {
    const token: ReplayToken = {
      check: 'cases',
      op: op.id,
      cls: cls.name,
      seed: classSeedValue,
      ...(details.counterexamplePath ? { path: details.counterexamplePath } : {}),
    };
    run.failure = {
      findings: last.findings.map((f) => ({ ...f, message: api.redact(f.message), observed: api.redact(f.observed) })),
      request: api.redact(describeRequest(last.options, last.req)),
      token: encodeToken(token),
      curl: curlOf(api, op, last.options, last.req),
      shrinks: details.numShrinks,
      shrinkCut: cut,
    };
  } else if (details.failed && details.errorInstance) {
    throw details.errorInstance;
  }
  return run;
}

/** The body that puts an item back: the request schema's properties, taken from the item as listed (a count as the integer it denotes). */
function restoreBody(op: Operation, item: Record<string, unknown>): string | undefined {
  const props = Object.keys((op.requestBody?.schema.properties as Record<string, unknown> | undefined) ?? {});
  if (!props.length) return undefined;
  return writeJson(Object.fromEntries(props.filter((p) => p in item).map((p) => [p, restorable(item[p]) ?? item[p]])));
}

/** Reads of the list that verify a restore (a list may lag behind updates), a pause between them. */
const VERIFY_READS = 5;
const VERIFY_PAUSE_MS = 300;

/**
 * Puts a listed item back, and verifies through the list. When the run changed it (`changed`),
 * it is written back whatever the list shows (a lagging list may show the original); the members
 * the request body writes are compared, by value (`5.0` is 5). A write-back answered with a 2xx
 * that the list does not show is sent once more: the same count shown again is the server's (a
 * GEN-06 finding), another count is another client's (not certified). An item it cannot put back is
 * a typed record for the run.
 */
async function restore(
  api: ApiClient,
  op: Operation,
  operations: Operation[],
  values: Record<string, string>,
  item: Record<string, unknown>,
  changed: boolean,
): Promise<{ findings: Finding[]; unrestored: Unrestored[]; warnings: string[]; notCertified?: string; leftAlone?: boolean }> {
  const name = op.pathParameters[0]!.name;
  const source = sourceOf(name, operations)!;
  const read = async () => {
    const res = await api.send({ method: source.method, base: source.base, path: source.path, evidence: false });
    return (Array.isArray(res.json) ? (res.json as Record<string, unknown>[]) : []).find((i) => String(i?.[name]) === values[name]);
  };
  // Only what the run writes back is compared: other members (an `updatedAt`, a revision) may
  // change with every update on a conformant server (the spec lists required fields only).
  const writable = Object.keys((op.requestBody?.schema.properties as Record<string, unknown> | undefined) ?? {}).filter((k) => k in item);
  const compared = writable.length ? writable : Object.keys(item);
  const same = (a?: Record<string, unknown>) => !!a && compared.every((k) => sameCount(a[k], item[k]));
  const readUntilSame = async () => {
    let now = await read();
    for (let i = 1; i < VERIFY_READS && !same(now); i++) {
      await new Promise((r) => setTimeout(r, VERIFY_PAUSE_MS));
      now = await read();
    }
    return now;
  };
  const body = restoreBody(op, item);
  const field = Object.keys((op.requestBody?.schema.properties as Record<string, unknown> | undefined) ?? {})[0] ?? name;
  const warnings: string[] = [];
  // A 5xx goes once more (suites/lib/write-back.ts); accepted then, it is a warning.
  const writeBack = async () => {
    if (body === undefined) return undefined;
    const path = fillPath(op.path, values);
    const sent = await sendWriteBack(() =>
      api.send({ method: op.method, base: op.base, path, body, contentType: 'application/json', evidence: false }),
    );
    const { res, first5xx } = sent;
    if (first5xx !== undefined && res.status >= 200 && res.status < 300)
      warnings.push(`${op.id}: ${transient5xxWarning(values[name]!, countText(item[field]), first5xx, res.status)}`);
    return res;
  };
  let now = await read();
  if (!changed && same(now)) return { findings: [], unrestored: [], warnings };
  // The journal's rule (suites/journal/decision.ts): somebody else's count is left alone and named, never written over.
  const pet = values[name]!;
  const alone = now ? writeBackLeftAlone(pet, countText(item[field]), api.journal?.writtenOn(pet), countText(now[field])) : undefined;
  if (alone) return { findings: [], unrestored: [], warnings, notCertified: `${op.id}: ${alone}`, leftAlone: true };
  let written = await writeBack();
  now = await readUntilSame();
  if (same(now)) return { findings: [], unrestored: [], warnings };
  const shown = now ? countText(now[field]) : null;
  if (now && written && written.status >= 200 && written.status < 300) {
    written = await writeBack();
    now = await readUntilSame();
    if (same(now)) return { findings: [], unrestored: [], warnings };
  }
  const u: Unrestored = { petId: values[name]!, original: countText(item[field]), current: now ? countText(now[field]) : null };
  if (anotherClientBetweenWriteBacks(shown, u.current))
    return {
      findings: [],
      unrestored: [u],
      warnings,
      notCertified: `${op.id}: pet ${u.petId} showed quantity ${shown} after one write-back and ${u.current ?? 'nothing'} after the next (original ${u.original}): another client wrote it meanwhile`,
    };
  return {
    findings: [
      {
        id: 'GEN-06',
        part: 'restore',
        level: 'fail',
        message: `${op.id}: ${describeUnrestored(u)}${written ? ` (the write-back answered ${written.status}${written.status >= 200 && written.status < 300 ? ', twice' : ''})` : ''}`,
        expected: writeJson(item),
        observed: now ? writeJson(now) : 'missing from the list',
      },
    ],
    unrestored: [u],
    warnings,
  };
}

/** Journals the listed item a state-changing operation may change: its id and its count as listed. */
function journalItem(api: ApiClient, op: Operation, values: Record<string, string>, item: Record<string, unknown>): string | undefined {
  const name = op.pathParameters[0]!.name;
  const field = Object.keys((op.requestBody?.schema.properties as Record<string, unknown> | undefined) ?? {})[0] ?? name;
  return api.journal?.change(values[name]!, countText(item[field]), op.id);
}

/**
 * The coverage cases of `op` first (in their fixed order), then every random class (or just the
 * replayed case), within `options.share` requests. Restoration requests are not counted against
 * the share (they are the price of changing nothing).
 */
export async function runOperation(api: ApiClient, op: Operation, operations: Operation[], options: RunOptions): Promise<OperationRun> {
  const budget = new Budget(options.share);
  const start = api.requests;
  const replay = options.replay;
  let classes = replay?.check === 'coverage' ? [] : classesOf(op, operations, { safeMethodsOnly: options.safeMethodsOnly });
  if (replay?.check === 'cases') classes = classes.filter((c) => c.name === replay.cls);
  let cases = options.coverage?.cases ?? [];
  if (replay) cases = cases.filter((c) => replay.check === 'coverage' && c.name === replay.cls);
  const { values, item, listed } = await listedValues(api, op, operations, options.seed, budget);
  const mutating = !['GET', 'HEAD'].includes(op.method) && listed && item !== undefined;
  const run: OperationRun = {
    op: op.id,
    seed: options.seed,
    classes: [],
    requests: 0,
    findings: [],
    notes: [],
    coverage: emptyCoverageRun(),
    unrestored: [],
    warnings: [],
  };
  // Write-ahead (core/journal.ts): the listed item's count is on disk before any case may change it.
  const journaled = mutating ? journalItem(api, op, values, item!) : undefined;
  try {
    run.coverage = await runCoverage(api, op, cases, replay ? [] : (options.coverage?.leftOut ?? []), values, listed, budget);
    const runs = replay ? 1 : runsPerClass(options.share, budget.used, classes.length);
    for (const cls of classes) run.classes.push(await runClass(api, op, cls, values, listed, options.seed, runs, budget, replay));
  } finally {
    if (mutating) {
      const changed = run.coverage.changed || run.classes.some((c) => c.sent > 0);
      const restored = await restore(api, op, operations, values, item!, changed);
      run.findings.push(...restored.findings);
      run.unrestored.push(...restored.unrestored);
      run.warnings.push(...restored.warnings);
      if (restored.notCertified) run.notCertified = restored.notCertified;
      if (journaled && !restored.unrestored.length)
        api.journal?.done([journaled], restored.leftAlone ? 'left-alone' : changed ? 'restored' : 'unchanged', `${op.id} (restore)`);
    }
  }
  run.requests = api.requests - start;
  const unsent = run.classes.filter((c) => c.sent === 0).map((c) => c.name);
  if (unsent.length)
    run.notes.push(
      `random classes not sent (GENERATED_BUDGET share of ${options.share} used up by the coverage cases first): ${unsent.join('; ')}`,
    );
  return run;
}
