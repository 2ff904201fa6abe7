/**
 * Consistency under concurrency on one pet (ledger GEN-07): `writers` concurrent updates of the
 * same pet with distinct quantities, a list sent while they are in flight, then a list on a new
 * connection once every update was acknowledged. Judged per pet as a register
 * (`linearizability.ts`): every update answers with a value that was written, a list never shows a
 * value nobody wrote, the final value is one of the writes, and an update acknowledged on one
 * connection is seen on another. The pet's quantity is restored and verified afterwards.
 */
import { performance } from 'node:perf_hooks';
import type { ApiClient, ApiResponse } from '../fixtures.ts';
import { finding, type Finding } from '../../core/finding.ts';
import { checkRegister, type RegisterOp } from './linearizability.ts';
import { isUnsafeInteger } from './run-cases.ts';
import { anotherWriterReason, countOrigin } from '../lib/count-origin.ts';
import { countText } from '../lib/unrestored.ts';
import { writeBackLeftAlone } from '../journal/decision.ts';

export interface ConsistencyRun {
  petId: string;
  writes: string[];
  history: RegisterOp[];
  findings: Finding[];
  requests: number;
  /** Set when another client's count showed: the reads were not judged, not certified. */
  notCertified?: string;
}

const ID = 'GEN-07';
type Item = { petId: unknown; quantity: unknown };

const quantityIn = (res: ApiResponse, id: string): string | undefined => {
  const item = (Array.isArray(res.json) ? (res.json as Item[]) : []).find((i) => String(i?.petId) === id);
  return item === undefined ? undefined : String(item.quantity);
};

/** The answers of one round: every update, the list sent while they were in flight, the list after. */
interface RoundAnswers {
  responses: ApiResponse[];
  during: ApiResponse;
  after: ApiResponse;
}

/** A sender that times each request and records the value it wrote or read in `history`. */
function timedSender(history: RegisterOp[]) {
  return async (
    label: string,
    kind: 'write' | 'read',
    send: () => Promise<ApiResponse>,
    value: (res: ApiResponse) => string | undefined,
  ) => {
    const t0 = performance.now();
    const res = await send();
    const t1 = performance.now();
    const v = value(res);
    if (v !== undefined) history.push({ kind, value: v, start: t0, end: t1, label });
    return res;
  };
}

/** Sends the concurrent updates of `petId` and a list while they are in flight, then a list on a new connection once every update was acknowledged. */
async function sendRound(api: ApiClient, petId: string, writes: string[], history: RegisterOp[]): Promise<RoundAnswers> {
  const timed = timedSender(history);
  const updates = writes.map((q, i) =>
    timed(
      `PATCH #${i + 1}`,
      'write',
      () => api.updateInventory(petId, { quantity: Number(q) }, { evidence: false, headers: { connection: 'close' } }),
      (res) => (res.status === 200 ? q : undefined),
    ),
  );
  const during = timed(
    'GET during the updates',
    'read',
    () => api.listInventory('api', { evidence: false, headers: { connection: 'close' } }),
    (res) => quantityIn(res, petId),
  );
  const responses = await Promise.all(updates);
  const duringRes = await during;
  const after = await timed(
    'GET on a new connection after every acknowledgement',
    'read',
    () => api.listInventory('api', { evidence: false, headers: { connection: 'close' } }),
    (res) => quantityIn(res, petId),
  );
  return { responses, during: duringRes, after };
}

/** Every update answers 200 with a value that was written. */
function judgeUpdates(api: ApiClient, petId: string, writes: string[], responses: ApiResponse[]): Finding[] {
  const findings: Finding[] = [];
  responses.forEach((res, i) => {
    if (res.status !== 200) {
      findings.push(
        finding({
          id: ID,
          part: 'update',
          level: 'fail',
          message: `PATCH #${i + 1} of pet ${petId} was not applied`,
          expected: '200 with the updated InventoryItem',
          observed: `${res.status} ${api.redact(res.text).slice(0, 160)}`,
        }),
      );
      return;
    }
    const body = res.json as Item | undefined;
    const answered = String(body?.quantity);
    if (!writes.includes(answered))
      findings.push(
        finding({
          id: ID,
          part: 'answer',
          level: 'fail',
          message: `PATCH #${i + 1} of pet ${petId} answered a value nobody wrote`,
          expected: `one of ${writes.join(', ')}`,
          observed: answered,
        }),
      );
  });
  return findings;
}

/**
 * A list of the round that shows a count neither the pet's original nor one of the writes: another
 * client wrote the pet (suites/lib/count-origin.ts), so the reads say nothing about the server.
 */
export function anotherWriterIn(
  petId: string,
  initial: number,
  writes: string[],
  answers: Pick<RoundAnswers, 'during' | 'after'>,
): string | undefined {
  for (const res of [answers.during, answers.after]) {
    const seen = quantityIn(res, petId);
    if (seen !== undefined && countOrigin(seen, initial, writes) === 'foreign') return anotherWriterReason(petId, initial, seen, writes);
  }
  return undefined;
}

/** Judges one round as a register: every update answers a written value, no list shows a value nobody wrote, the final value is a write, the history is linearizable. */
function judgeRound(
  api: ApiClient,
  petId: string,
  initial: number,
  writes: string[],
  history: RegisterOp[],
  answers: RoundAnswers,
): Finding[] {
  const findings = judgeUpdates(api, petId, writes, answers.responses);
  const seenDuring = quantityIn(answers.during, petId);
  if (seenDuring !== undefined && seenDuring !== String(initial) && !writes.includes(seenDuring)) {
    findings.push(
      finding({
        id: ID,
        part: 'list',
        level: 'fail',
        message: `a list during the updates showed pet ${petId} with a value nobody wrote`,
        expected: `${initial} or one of ${writes.join(', ')}`,
        observed: seenDuring,
      }),
    );
  }
  const final = quantityIn(answers.after, petId);
  if (final === undefined || !writes.includes(final)) {
    findings.push(
      finding({
        id: ID,
        part: 'final',
        level: 'fail',
        message: `after every update was acknowledged, a list on another connection shows pet ${petId} with a value that is not one of the writes`,
        expected: `one of ${writes.join(', ')}`,
        observed: final ?? 'pet missing',
      }),
    );
  }
  if (!findings.length) {
    const result = checkRegister(String(initial), history);
    if (!result.linearizable)
      findings.push(
        finding({
          id: ID,
          part: 'linearizability',
          level: 'fail',
          message: `the history of pet ${petId} is not linearizable`,
          expected: 'one order of the operations that respects real time and the register',
          observed: result.reason ?? '',
        }),
      );
  }
  return findings;
}

/**
 * Writes `initial` back to the pet and verifies it through the list; closes the journal entry when
 * it holds, else a finding. A list showing another client's count (neither the original nor one of
 * `writes`) is left to the run's journal and reported as not certified.
 */
async function restorePet(
  api: ApiClient,
  petId: string,
  initial: number,
  writes: string[],
  journaled: string | undefined,
): Promise<{ findings: Finding[]; notCertified?: string }> {
  // The journal's rule (suites/journal/decision.ts): somebody else's count is left alone and named, never written over.
  const before = (await api.inventory(ID)).find((e) => e.id === petId);
  const alone = writeBackLeftAlone(petId, String(initial), writes, before ? countText(before.quantity) : null);
  if (alone) {
    if (journaled) api.journal?.done([journaled], 'left-alone', `${ID} (restore)`);
    return { findings: [], notCertified: `${ID}: ${alone}` };
  }
  const restored = await api.updateInventory(petId, { quantity: initial }, { evidence: false });
  const check = (await api.inventory(ID)).find((e) => e.id === petId);
  if (restored.status === 200 && check?.quantity === initial && journaled) api.journal?.done([journaled], 'restored', `${ID} (restore)`);
  if (restored.status === 200 && check && check.quantity !== initial && countOrigin(check.quantity, initial, writes) === 'foreign')
    return { findings: [], notCertified: anotherWriterReason(petId, initial, check.quantity, writes) };
  if (restored.status !== 200 || check?.quantity !== initial) {
    return {
      findings: [
        finding({
          id: ID,
          part: 'restore',
          level: 'fail',
          message: `pet ${petId} was not restored`,
          expected: `quantity ${initial}`,
          observed: `PATCH ${restored.status}, list shows ${check?.quantity ?? 'pet missing'}`,
        }),
      ],
    };
  }
  return { findings: [] };
}

/** Runs one round on the pet the list shows first among ids beyond 2^53 (else the first). */
export async function runConsistency(api: ApiClient, writers: number, seed: number): Promise<ConsistencyRun> {
  const start = api.requests;
  const findings: Finding[] = [];
  const items = await api.inventory(ID);
  if (!items.length) throw new Error(`${ID}: the inventory list is empty; this check needs one pet`);
  const pet = items.find((i) => isUnsafeInteger(i.id)) ?? items[seed % items.length]!;
  const initial = pet.quantity;
  const journaled = api.journal?.change(pet.id, String(initial), ID);
  const writes = Array.from({ length: writers }, (_, i) => String(initial + 101 + i * 7 + (seed % 5)));
  const history: RegisterOp[] = [];
  let notCertified: string | undefined;
  try {
    const answers = await sendRound(api, pet.id, writes, history);
    notCertified = anotherWriterIn(pet.id, initial, writes, answers);
    findings.push(
      ...(notCertified ? judgeUpdates(api, pet.id, writes, answers.responses) : judgeRound(api, pet.id, initial, writes, history, answers)),
    );
  } finally {
    const restore = await restorePet(api, pet.id, initial, writes, journaled);
    findings.push(...restore.findings);
    notCertified ??= restore.notCertified;
  }
  return { petId: pet.id, writes, history, findings, requests: api.requests - start, ...(notCertified ? { notCertified } : {}) };
}
