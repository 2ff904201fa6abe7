/**
 * Runs the generated request classes of one operation through the suites' `api` client (so every
 * request goes through the run's pacer): one fast-check property per class, seeded, each failure
 * shrunk within the operation's share of the budget, then reported with its replay token and a
 * curl line. A pet the operation may change (a listed id under a state-changing method) is put
 * back and verified through the list afterwards.
 */
import fc from 'fast-check';
import type { ApiClient, ApiResponse, SendOptions } from '../fixtures.ts';
import type { Finding } from '../lib/finding.ts';
import { abbreviate } from '../lib/error-body.ts';
import { type Operation, type Schema } from './document.ts';
import { classesOf, fillPath, type CaseClass, type GeneratedRequest } from './classes.ts';
import { judge, type JudgedResponse, type Outcome } from './judge.ts';
import { Budget, runsPerClass } from './budget.ts';
import { curlCommand, encodeToken, type ReplayToken } from './replay.ts';
import { validValue } from './keywords.ts';
import { writeJson } from './json-text.ts';

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
}

export interface RunOptions {
  seed: number;
  share: number;
  safeMethodsOnly: boolean;
  /** Run only this case (a replay). */
  replay?: ReplayToken;
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
    return Object.values(o.successSchemas).some((s) => s.type === 'array' && ((s.items as Schema | undefined)?.properties as Record<string, unknown> | undefined)?.[name] !== undefined);
  });
}

/** True for an integer id beyond 2^53, the values a double would round (listed first: the precision class). */
export function isUnsafeInteger(text: string): boolean {
  return /^-?\d+$/.test(text) && !Number.isSafeInteger(Number(text));
}

/** Sends one generated request; a transport failure is an outcome, not an exception. */
export async function sendGenerated(api: ApiClient, op: Operation, req: GeneratedRequest, values: Record<string, string>): Promise<{ outcome: Outcome; options: SendOptions }> {
  const headers = { ...req.headers };
  let contentType: string | null | undefined = req.contentType;
  if (req.body !== undefined && contentType === undefined) contentType = 'application/json';
  if (contentType === '') {
    headers['content-type'] = '';
    contentType = null;
  }
  const options: SendOptions = {
    method: req.method,
    base: op.base,
    path: fillPath(req.path, values),
    credential: req.scheme ? { key: 'api', format: (k) => `${req.scheme} ${k}` } : 'api',
    ...(req.body !== undefined ? { body: req.body } : {}),
    contentType: contentType ?? null,
    headers,
    evidence: false,
  };
  try {
    const res = await api.send(options);
    return { outcome: { kind: 'response', response: judged(res) }, options };
  } catch (e) {
    const message = (e as Error).message;
    if (/request failed:/.test(message)) return { outcome: { kind: 'no-response', error: message.replace(/^.*request failed: /, '') }, options };
    throw e;
  }
}

function judged(res: ApiResponse): JudgedResponse {
  return { method: res.method, status: res.status, headers: res.headers, json: res.json, jsonError: res.jsonError, text: res.text, missingRateLimit: res.rateLimit.missing };
}

/** The listed values of an operation's path parameters (one list request per source), unsafe integers first. */
export async function listedValues(api: ApiClient, op: Operation, operations: Operation[], seed: number, budget: Budget): Promise<{ values: Record<string, string>; item?: Record<string, unknown>; listed: boolean }> {
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

/** A request as one line for messages (method, path, headers of note, body abbreviated). */
function describeRequest(o: SendOptions, req: GeneratedRequest): string {
  const extra = Object.entries(o.headers ?? {}).map(([k, v]) => `${k}: ${abbreviate(v, 40)}`);
  if (req.scheme) extra.push(`Authorization: ${req.scheme} <API_KEY>`);
  if (o.contentType) extra.push(`Content-Type: ${o.contentType}`);
  return `${o.method} ${abbreviate(o.path, 120)}${extra.length ? ` [${extra.join('; ')}]` : ''}${o.body !== undefined ? ` body ${abbreviate(JSON.stringify(o.body), 160)}` : ''}`;
}

/** Runs one class: `runs` cases, the first failure shrunk while the budget lasts. */
async function runClass(api: ApiClient, op: Operation, cls: CaseClass, values: Record<string, string>, listed: boolean, seed: number, runs: number, budget: Budget, replay?: ReplayToken): Promise<ClassRun> {
  let sent = 0;
  let unsent = 0;
  let last: { findings: Finding[]; options: SendOptions; req: GeneratedRequest } | undefined;
  let cut = false;
  const property = fc.asyncProperty(cls.arbitrary, async (req) => {
    if (!budget.take()) {
      if (last) cut = true;
      else unsent++;
      return true;
    }
    sent++;
    const { outcome, options } = await sendGenerated(api, op, req, values);
    const findings = judge(op, req, outcome, listed).filter((f) => f.level === 'fail');
    if (findings.length) last = { findings, options, req };
    return findings.length === 0;
  });
  const classSeedValue = replay?.seed ?? classSeed(seed, cls.name);
  const details = await fc.check(property, {
    seed: classSeedValue,
    numRuns: replay ? 1 : runs,
    ...(replay?.path ? { path: replay.path } : {}),
  });
  const run: ClassRun = { name: cls.name, sent, unsent };
  if (details.failed && last) {
    const token: ReplayToken = { check: 'cases', op: op.id, cls: cls.name, seed: classSeedValue, ...(details.counterexamplePath ? { path: details.counterexamplePath } : {}) };
    const url = `${op.base === 'inventory' ? api.env.baseUrl : api.env.apiUrl}${last.options.path}`;
    run.failure = {
      findings: last.findings.map((f) => ({ ...f, message: api.redact(f.message), observed: api.redact(f.observed) })),
      request: api.redact(describeRequest(last.options, last.req)),
      token: encodeToken(token),
      curl: api.redact(curlCommand({
        method: last.options.method, url, headers: last.options.headers ?? {}, scheme: last.req.scheme ?? 'Bearer',
        contentType: last.options.contentType, body: last.options.body,
      })),
      shrinks: details.numShrinks,
      shrinkCut: cut,
    };
  } else if (details.failed && details.errorInstance) {
    throw details.errorInstance;
  }
  return run;
}

/** The body that puts an item back: the request schema's properties, taken from the item as listed. */
function restoreBody(op: Operation, item: Record<string, unknown>): string | undefined {
  const props = Object.keys((op.requestBody?.schema.properties as Record<string, unknown> | undefined) ?? {});
  if (!props.length) return undefined;
  return writeJson(Object.fromEntries(props.filter((p) => p in item).map((p) => [p, item[p]])));
}

/** Puts a listed item back when the run changed it, and verifies through the list. */
async function restore(api: ApiClient, op: Operation, operations: Operation[], values: Record<string, string>, item: Record<string, unknown>): Promise<Finding[]> {
  const name = op.pathParameters[0]!.name;
  const source = sourceOf(name, operations)!;
  const read = async () => {
    const res = await api.send({ method: source.method, base: source.base, path: source.path, evidence: false });
    return (Array.isArray(res.json) ? (res.json as Record<string, unknown>[]) : []).find((i) => String(i?.[name]) === values[name]);
  };
  const same = (a?: Record<string, unknown>) => !!a && Object.keys(item).every((k) => String(a[k]) === String(item[k]));
  let now = await read();
  if (same(now)) return [];
  const body = restoreBody(op, item);
  if (body !== undefined) {
    await api.send({ method: op.method, base: op.base, path: fillPath(op.path, values), body, contentType: 'application/json', evidence: false });
    now = await read();
  }
  if (same(now)) return [];
  return [{ id: 'GEN-06', part: 'restore', level: 'fail', message: `${op.id}: item ${values[name]} was not restored after the generated cases`, expected: writeJson(item), observed: now ? writeJson(now) : 'missing from the list' }];
}

/**
 * Every class of `op` (or just the replayed one), within `options.share` requests. Restoration
 * requests are not counted against the share (they are the price of changing nothing).
 */
export async function runOperation(api: ApiClient, op: Operation, operations: Operation[], options: RunOptions): Promise<OperationRun> {
  const budget = new Budget(options.share);
  const start = api.requests;
  let classes = classesOf(op, operations, { safeMethodsOnly: options.safeMethodsOnly });
  if (options.replay) classes = classes.filter((c) => c.name === options.replay!.cls);
  const { values, item, listed } = await listedValues(api, op, operations, options.seed, budget);
  const mutating = !['GET', 'HEAD'].includes(op.method) && listed && item !== undefined;
  const overhead = budget.used;
  const runs = options.replay ? 1 : runsPerClass(options.share, overhead, classes.length);
  const run: OperationRun = { op: op.id, seed: options.seed, classes: [], requests: 0, findings: [], notes: [] };
  try {
    for (const cls of classes) run.classes.push(await runClass(api, op, cls, values, listed, options.seed, runs, budget, options.replay));
  } finally {
    if (mutating) run.findings.push(...(await restore(api, op, operations, values, item!)));
  }
  run.requests = api.requests - start;
  const unsent = run.classes.filter((c) => c.sent === 0).map((c) => c.name);
  if (unsent.length) run.notes.push(`not sent (GENERATED_BUDGET share of ${options.share} used up): ${unsent.join('; ')}`);
  return run;
}
