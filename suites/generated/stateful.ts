/**
 * Stateful, model-based sequences (ledger GEN-06): list, update and send-message commands in
 * generated orders (`fc.commands`, `fc.asyncModelRun`) against a model of the store, the
 * quantity of each listed pet. Every list must equal the model (so an update's 200 is seen by the
 * very next list, and nothing else changes); every update goes to the id exactly as the list shows
 * it (ids beyond 2^53 first, kept exact by `parseJson`) and answers that id and quantity; a message
 * changes no stock. Every change is restored and verified after each sequence.
 */
import fc from 'fast-check';
import type { ApiClient } from '../fixtures.ts';
import { finding, type Finding } from '../../core/finding.ts';
import { abbreviate } from '../lib/error-body.ts';
import { Budget } from './budget.ts';
import { MessageBudgetSpent } from '../fixtures/message-place.ts';
import { isUnsafeInteger } from './run-cases.ts';
import { encodeToken, type ReplayToken } from './replay.ts';
import { anotherWriterReason, countOrigin } from '../lib/count-origin.ts';
import { countText } from '../lib/unrestored.ts';
import { writeBackLeftAlone } from '../journal/decision.ts';

const ID = 'GEN-06';

interface Model {
  quantities: Map<string, number>;
}
interface Real {
  api: ApiClient;
  budget: Budget;
  /** Original quantity of every pet a sequence changed. */
  changed: Map<string, number>;
  /** The journal entry of each changed pet (core/journal.ts), closed once its restore is seen in the list. */
  journaled: Map<string, string | undefined>;
  /** The quantity each pet had when the sequence began. */
  original: Map<string, number>;
  /** Every quantity the sequence sent to each pet. */
  sent: Map<string, number[]>;
  /** Message steps sent, and left out because the run's messages (MAX_MESSAGES) were spent. */
  messages: { sent: number; leftOut: number };
}

/**
 * A count neither the pet's original nor one this sequence sent: another client wrote the pet
 * (suites/lib/count-origin.ts). It says nothing about the server: the sequence ends, not certified.
 */
export class AnotherWriter extends Error {
  readonly reason: string;
  constructor(reason: string) {
    super(reason);
    this.reason = reason;
  }
}

/** Throws `AnotherWriter` when `seen` for pet `id` is a count no request of the sequence carried. */
function unlessAnotherWriter(real: Real, id: string, seen: unknown): void {
  const sent = real.sent.get(id) ?? [];
  if (countOrigin(seen, real.original.get(id), sent) === 'foreign')
    throw new AnotherWriter(anotherWriterReason(id, real.original.get(id), seen, sent));
}

/** A deviation found by a command: stops the sequence and is shrunk by fast-check. */
export class SequenceDeviation extends Error {
  readonly finding: Finding;
  constructor(finding: Finding) {
    super(`${finding.message}: expected ${finding.expected}; observed ${finding.observed}`);
    this.finding = finding;
  }
}

const deviation = (part: string, message: string, expected: string, observed: string) =>
  new SequenceDeviation(finding({ id: ID, part, level: 'fail', message, expected, observed }));

class ListCommand implements fc.AsyncCommand<Model, Real> {
  check = () => true;
  async run(model: Model, real: Real) {
    if (!real.budget.take()) return;
    const res = await real.api.listInventory('api', { evidence: false });
    if (res.status !== 200 || !Array.isArray(res.json))
      throw deviation('list', 'the list failed', '200 with a JSON array', `${res.status}`);
    const seen = new Map((res.json as Array<{ petId: unknown; quantity: unknown }>).map((i) => [String(i.petId), i.quantity]));
    for (const [id, q] of model.quantities) {
      if (!seen.has(id)) throw deviation('list', `pet ${id} vanished from the list`, `pet ${id} with quantity ${q}`, 'missing');
      if (seen.get(id) !== q) unlessAnotherWriter(real, id, seen.get(id));
      if (seen.get(id) !== q)
        throw deviation(
          'list',
          `the list shows pet ${id} with another quantity than the last acknowledged update or the original`,
          String(q),
          String(seen.get(id)),
        );
    }
  }
  toString = () => 'list';
}

class UpdateCommand implements fc.AsyncCommand<Model, Real> {
  readonly id: string;
  readonly quantity: number;
  constructor(id: string, quantity: number) {
    this.id = id;
    this.quantity = quantity;
  }
  check = () => true;
  async run(model: Model, real: Real) {
    if (!real.budget.take()) return;
    if (!real.changed.has(this.id)) {
      real.changed.set(this.id, model.quantities.get(this.id)!);
      real.journaled.set(this.id, real.api.journal?.change(this.id, String(model.quantities.get(this.id)), ID));
    }
    real.sent.set(this.id, [...(real.sent.get(this.id) ?? []), this.quantity]);
    const res = await real.api.updateInventory(this.id, { quantity: this.quantity }, { evidence: false });
    if (res.status === 400) return; // a refusal the spec allows (quantity bounds not shown): nothing changes
    if (res.status !== 200)
      throw deviation(
        'update',
        `PATCH /inventory/${this.id} (the id as listed) was not applied`,
        '200 (or 400 for a quantity the server refuses)',
        `${res.status} ${abbreviate(real.api.redact(res.text), 160)}`,
      );
    const body = res.json as { petId?: unknown; quantity?: unknown } | undefined;
    if (String(body?.petId) !== this.id)
      throw deviation('update', `PATCH /inventory/${this.id} answered another petId`, this.id, String(body?.petId));
    if (body?.quantity !== this.quantity)
      throw deviation('update', `PATCH /inventory/${this.id} answered another quantity`, String(this.quantity), String(body?.quantity));
    model.quantities.set(this.id, this.quantity);
  }
  toString = () => `update ${this.id} to ${this.quantity}`;
}

class MessageCommand implements fc.AsyncCommand<Model, Real> {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  check = () => true;
  async run(_model: Model, real: Real) {
    if (!real.budget.take()) return;
    let res: Awaited<ReturnType<Real['api']['sendMessage']>>;
    try {
      res = await real.api.sendMessage({ message: this.text }, { evidence: false, throwWhenMessagesSpent: true });
    } catch (e) {
      // The run's messages (MAX_MESSAGES) were spent: the step is left out, named in the run's notes.
      if (!(e instanceof MessageBudgetSpent)) throw e;
      real.messages.leftOut++;
      return;
    }
    real.messages.sent++;
    if (res.status < 200 || res.status >= 300)
      throw deviation(
        'message',
        'a valid message was not accepted',
        'a 2xx',
        `${res.status} ${abbreviate(real.api.redact(res.text), 160)}`,
      );
  }
  toString = () => `send message ${JSON.stringify(this.text)}`;
}

export interface StatefulRun {
  sequences: number;
  requests: number;
  findings: Finding[];
  failure?: { sequence: string; token: string; shrinks: number; shrinkCut: boolean };
  /** Set when another client's count showed: the sequences ended there, not certified. */
  notCertified?: string;
  /** Message steps sent, and left out because the run's messages (MAX_MESSAGES) were spent. */
  messages: { sent: number; leftOut: number };
}

/**
 * Puts every changed pet back and verifies it through the list. A pet showing another client's
 * count is left to the run's journal (it is reported at run level) and named in `foreign`.
 */
async function restore(real: Real, foreign: (reason: string) => void): Promise<Finding[]> {
  if (!real.changed.size) return [];
  // The journal's rule (suites/journal/decision.ts): a pet showing somebody else's count is left alone and named, never written over.
  const before = await real.api.inventory(`${ID} (restore)`);
  for (const [id, q] of [...real.changed]) {
    const now = before.find((i) => i.id === id);
    const alone = writeBackLeftAlone(id, String(q), (real.sent.get(id) ?? []).map(String), now ? countText(now.quantity) : null);
    if (!alone) continue;
    foreign(`${ID}: ${alone}`);
    if (real.journaled.get(id)) real.api.journal?.done([real.journaled.get(id)!], 'left-alone', `${ID} (restore)`);
    real.changed.delete(id);
    real.journaled.delete(id);
  }
  for (const [id, q] of real.changed) await real.api.updateInventory(id, { quantity: q }, { evidence: false });
  const items = await real.api.inventory(`${ID} (restore)`);
  const out: Finding[] = [];
  for (const [id, q] of real.changed) {
    const now = items.find((i) => i.id === id);
    if (now && now.quantity !== q && countOrigin(now.quantity, q, real.sent.get(id) ?? []) === 'foreign')
      foreign(anotherWriterReason(id, q, now.quantity, real.sent.get(id) ?? []));
    else if (now?.quantity !== q)
      out.push(
        finding({
          id: ID,
          part: 'restore',
          level: 'fail',
          message: `pet ${id} was not restored after a sequence`,
          expected: `quantity ${q}`,
          observed: now ? String(now.quantity) : 'missing',
        }),
      );
    else if (real.journaled.get(id)) real.api.journal?.done([real.journaled.get(id)!], 'restored', `${ID} (restore)`);
  }
  real.changed.clear();
  real.journaled.clear();
  return out;
}

/**
 * Runs generated sequences within `share` requests (restoration not counted). With a replay
 * token, runs that sequence only.
 */
export async function runStateful(api: ApiClient, share: number, seed: number, replay?: ReplayToken): Promise<StatefulRun> {
  const start = api.requests;
  const items = await api.inventory(ID);
  if (!items.length) throw new Error(`${ID}: the inventory list is empty; the sequences need one pet`);
  const budget = new Budget(Math.max(0, share - 1));
  // Ids a double would round come first: the pet choice shrinks towards them.
  const pets = [...items.filter((i) => isUnsafeInteger(i.id)), ...items.filter((i) => !isUnsafeInteger(i.id))];
  const petIndex = fc.oneof({ weight: 2, arbitrary: fc.constant(0) }, { weight: 3, arbitrary: fc.nat({ max: pets.length - 1 }) });
  const maxCommands = Math.max(2, Math.min(8, share - 4));
  const commands = [
    fc.constant(new ListCommand()),
    fc.tuple(petIndex, fc.integer({ min: 0, max: 10_000 })).map(([i, q]) => new UpdateCommand(pets[i]!.id, q)),
    fc.constantFrom('restock note', 'é😀', '').map((t) => new MessageCommand(t)),
  ];
  const findings: Finding[] = [];
  let sequences = 0;
  let last: Finding | undefined;
  let cut = false;
  let foreign: string | undefined;
  const messages = { sent: 0, leftOut: 0 };
  const sawAnotherWriter = (reason: string) => {
    foreign ??= reason;
  };
  // Every sequence opens with an update of the first pet (an id beyond 2^53 when the list has one),
  // so each run proves a listed id is updatable by the id as listed; the rest is generated.
  const opening = fc.integer({ min: 0, max: 10_000 });
  const property = fc.asyncProperty(
    opening,
    fc.commands(commands, { maxCommands, ...(replay?.replayPath ? { replayPath: replay.replayPath } : {}) }),
    async (first, cmds) => {
      if (budget.left <= 1 || foreign) {
        if (last) cut = true;
        return true;
      }
      sequences++;
      const real: Real = {
        api,
        budget,
        changed: new Map(),
        journaled: new Map(),
        original: new Map(pets.map((p) => [p.id, p.quantity])),
        sent: new Map(),
        messages,
      };
      const model: Model = { quantities: new Map(pets.map((p) => [p.id, p.quantity])) };
      try {
        // Every update is followed by a list at the end, so the last one is judged too.
        await fc.asyncModelRun(() => ({ model, real }), [new UpdateCommand(pets[0]!.id, first), ...cmds, new ListCommand()]);
        return true;
      } catch (e) {
        if (e instanceof AnotherWriter) {
          sawAnotherWriter(e.reason);
          return true;
        }
        if (!(e instanceof SequenceDeviation)) throw e;
        last = e.finding;
        return false;
      } finally {
        findings.push(...(await restore(real, sawAnotherWriter)));
      }
    },
  );
  const runSeed = replay?.seed ?? seed;
  const details = await fc.check(property, { seed: runSeed, numRuns: 1, ...(replay?.path ? { path: replay.path } : {}) });
  const run: StatefulRun = { sequences, requests: api.requests - start, findings, messages, ...(foreign ? { notCertified: foreign } : {}) };
  if (details.failed && last) {
    const generated = String(details.counterexample?.[1] ?? '');
    const text = [
      `update ${pets[0]!.id} to ${String(details.counterexample?.[0])}`,
      generated.replace(/\s*\/\*replayPath=.*\*\//, ''),
      'list',
    ]
      .filter(Boolean)
      .join(', ');
    const replayPath = /replayPath="([^"]+)"/.exec(generated)?.[1];
    const token: ReplayToken = {
      check: 'stateful',
      seed: runSeed,
      ...(details.counterexamplePath ? { path: details.counterexamplePath } : {}),
      ...(replayPath ? { replayPath } : {}),
    };
    findings.push({ ...last, message: api.redact(last.message), observed: api.redact(last.observed) });
    run.failure = { sequence: text, token: encodeToken(token), shrinks: details.numShrinks, shrinkCut: cut };
  } else if (details.failed && details.errorInstance) {
    throw details.errorInstance;
  }
  return run;
}
