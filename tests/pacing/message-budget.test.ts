/**
 * The run's message budget (MAX_MESSAGES, suites/pacing/message-budget.ts) through the coordinator:
 * shared by every client, a place given back when the server refused the message, requests the
 * spec says the server refuses sent without a place until one is queued, places kept for later
 * checks; and which POST /messages a conformant server may queue (suites/fixtures/message-place.ts).
 */
import { test, expect } from '../test.ts';
import { startPacerCoordinator } from '../../suites/pacing/coordinator.ts';
import { pacingClient } from '../../suites/pacing/client.ts';
import { wouldQueue } from '../../suites/fixtures/message-place.ts';

test('message budget: at most MAX_MESSAGES queued across clients; a refused message gives its place back', async () => {
  const c = await startPacerCoordinator({ maxMessages: 3 });
  try {
    const [a, b] = [pacingClient(c.url), pacingClient(c.url)];
    const first = await a.takeMessage!('MSG-01', true);
    const second = await b.takeMessage!('MSG-02', true);
    const third = await a.takeMessage!('MSG-05', true);
    // Three in flight: a fourth has no place, whoever asks.
    expect((await b.takeMessage!('GEN-01', true)).granted).toBe(false);
    await first.settle(true);
    await second.settle(false); // refused by the server: nothing was queued
    await third.settle(true);
    const fourth = await b.takeMessage!('GEN-01', true);
    expect(fourth.granted).toBe(true);
    // Keeping one place for a later check leaves none for this one.
    expect((await a.takeMessage!('GEN-01', true, 1)).granted).toBe(false);
    await fourth.settle(true);
    expect((await a.takeMessage!('GEN-06', true)).granted).toBe(false);
    expect(c.report().messages).toEqual({
      limit: 3,
      queued: 3,
      byCheck: { 'MSG-01': 1, 'MSG-05': 1, 'GEN-01': 1 },
      refusedByBudget: { 'GEN-01': 2, 'GEN-06': 1 },
      unexpectedlyQueued: 0,
    });
  } finally {
    await c.close();
  }
});

test('message budget: requests the server must refuse need no place until one was queued; then they count and need room', async () => {
  const c = await startPacerCoordinator({ maxMessages: 1 });
  try {
    const p = pacingClient(c.url);
    await (await p.takeMessage!('MSG-01', true)).settle(true);
    // The budget is spent, yet a request the spec says the server refuses is sent (and refused).
    const probe = await p.takeMessage!('MSG-03', false);
    expect(probe.granted).toBe(true);
    await probe.settle(false);
    // A server that queues one: it counts, and the next such request needs room.
    await (await p.takeMessage!('MSG-04', false)).settle(true);
    expect((await p.takeMessage!('MSG-03', false)).granted).toBe(false);
    expect(c.report().messages).toMatchObject({ queued: 2, unexpectedlyQueued: 1, byCheck: { 'MSG-01': 1, 'MSG-04': 1 } });
  } finally {
    await c.close();
  }
});

test('message budget: MAX_MESSAGES=0 sends no message at all', async () => {
  const c = await startPacerCoordinator({ maxMessages: 0 });
  try {
    expect((await pacingClient(c.url).takeMessage!('MSG-01', true)).granted).toBe(false);
  } finally {
    await c.close();
  }
});

test('a POST /messages a conformant server may queue: a key, a content type, JSON with a string message', () => {
  const json = { 'content-type': 'application/json' };
  expect(wouldQueue(true, json, '{"message":"hi"}')).toBe(true);
  expect(wouldQueue(true, { 'content-type': 'text/plain' }, '{"message":"hi"}')).toBe(true); // not refused by the spec
  expect(wouldQueue(true, json, '\uFEFF{"message":"hi"}')).toBe(true); // RFC 8259 §8.1
  expect(wouldQueue(false, json, '{"message":"hi"}')).toBe(false); // 401
  expect(wouldQueue(true, {}, '{"message":"hi"}')).toBe(false); // no content type: 400
  expect(wouldQueue(true, json, '{"message": "unterminated')).toBe(false); // invalid JSON: 400
  expect(wouldQueue(true, json, '{"text":"x"}')).toBe(false); // no message: 400
  expect(wouldQueue(true, json, '{"message":null}')).toBe(false); // an invalid value: 400
});
