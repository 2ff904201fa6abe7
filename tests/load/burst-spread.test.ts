/**
 * A burst tests a limiter's atomicity only when it left at once (suites/load/burst-spread.ts): a
 * spread too wide leaves LOAD-02's admission not certified, and over-admission seen is still a
 * failure whatever the spread. The engine measures the spread of a burst it sends.
 */
import { test, expect } from '../test.ts';
import { AT_ONCE_FLOOR_MS, leftAtOnce, spreadFinding } from '../../suites/load/burst-spread.ts';
import { runLoad } from '../../suites/load/engine.ts';
import { fakeApi, inventoryHandler } from './helpers.ts';

test('a burst is at once when every request left before the first answer, or within the floor', () => {
  expect(leftAtOnce({ sendSpreadMs: 3, firstAnswerMs: 8 })).toBe(true);
  expect(leftAtOnce({ sendSpreadMs: AT_ONCE_FLOOR_MS, firstAnswerMs: 0.5 })).toBe(true);
  expect(leftAtOnce({ sendSpreadMs: 40, firstAnswerMs: 12 })).toBe(false);
  expect(leftAtOnce({ sendSpreadMs: null, firstAnswerMs: 2 })).toBe(false);
});

test('no burst at once and nothing over-admitted: LOAD-02 admission not certified, naming the spread', () => {
  const f = spreadFinding(
    [
      { sendSpreadMs: 40, firstAnswerMs: 12 },
      { sendSpreadMs: 25, firstAnswerMs: 9 },
    ],
    false,
    'LOAD-02',
    'admission',
  );
  expect(f?.level).toBe('not-certified');
  expect(f?.id).toBe('LOAD-02');
  expect(f?.part).toBe('admission');
  expect(f?.observed).toContain('sent within 40 ms (first answer after 12 ms): not at once');
});

test('one burst at once, or over-admission seen however wide the spread: nothing is added', () => {
  expect(
    spreadFinding(
      [
        { sendSpreadMs: 40, firstAnswerMs: 12 },
        { sendSpreadMs: 2, firstAnswerMs: 7 },
      ],
      false,
      'LOAD-02',
      'admission',
    ),
  ).toBe(undefined);
  expect(spreadFinding([{ sendSpreadMs: 40, firstAnswerMs: 12 }], true, 'LOAD-02', 'admission')).toBe(undefined);
  expect(spreadFinding([], false, 'LOAD-02', 'admission')).toBe(undefined);
});

test('the engine measures a burst: the spread of its first bytes and its first answer', async () => {
  const api = await fakeApi(inventoryHandler({ delayMs: 20 }));
  try {
    const r = await runLoad({
      label: 'spread test',
      url: api.baseUrl,
      steps: [{ name: 'GET /inventory', path: '/v1/inventory' }],
      model: { kind: 'burst', count: 20 },
      connections: 20,
      maxRequests: 20,
      maxDurationS: 20,
      progress: () => undefined,
    });
    expect(r.figures.requests).toBe(20);
    expect(r.figures.sendSpreadMs).not.toBeNull();
    expect(r.figures.sendSpreadMs!).toBeGreaterThanOrEqual(0);
    expect(r.figures.firstAnswerMs!).toBeGreaterThanOrEqual(20 - 1);
  } finally {
    await api.close();
  }
});
