/**
 * The countdown on RATE_LIMIT_KEY (`suites/rate-limit/countdown.ts`), which RL-04 and RL-11 judge
 * and the 429 sequence takes first: three sequential requests, three more only when a window
 * boundary fell inside them without Remaining falling.
 */
import { test, expect } from '../test.ts';
import { countsDown, runCountdown } from '../../suites/rate-limit/countdown.ts';
import type { Snapshot } from '../../suites/rate-limit/exhaust.ts';
import type { ApiClient, ApiResponse } from '../../suites/fixtures.ts';

/** An answer with these rate-limit headers (`undefined` leaves Remaining out). */
function answer(remaining: number | undefined, reset = 1_800_000_060): Snapshot {
  return {
    label: 'GET /v1/inventory → 200',
    status: 200,
    headers: {
      'x-ratelimit-limit': '60',
      ...(remaining === undefined ? {} : { 'x-ratelimit-remaining': String(remaining) }),
      'x-ratelimit-reset': String(reset),
    },
    text: '[]',
    receivedAtMs: 0,
  };
}

/** A client whose list answers are `answers`, in order; counts what it was asked. */
function scripted(answers: Snapshot[]): { api: ApiClient; sent: string[] } {
  const sent: string[] = [];
  const api = {
    async listInventory(credential?: string) {
      sent.push(String(credential));
      const next = answers.shift();
      if (!next) throw new Error('the countdown sent more than it was scripted for');
      return { ...next, curl: 'curl …' } as unknown as ApiResponse;
    },
  } as unknown as ApiClient;
  return { api, sent };
}

for (const [remaining, falls] of [
  [[5, 4, 3], true],
  [[5, 5, 4], true],
  [[5, 5, 5], false],
  [[1, 5, 4], false],
  [[5, undefined, 3], true],
  [[undefined, 4, 3], false],
] as const) {
  test(`Remaining ${remaining.join(' → ')} ${falls ? 'counts down' : 'does not count down'}`, () => {
    expect(countsDown(remaining.map((r) => answer(r)))).toBe(falls);
  });
}

test('a countdown that falls is taken once, on RATE_LIMIT_KEY', async () => {
  const { api, sent } = scripted([answer(9), answer(8), answer(7)]);
  const { attempts } = await runCountdown(api);
  expect(attempts).toHaveLength(1);
  expect(sent).toEqual(['rate-limit', 'rate-limit', 'rate-limit']);
});

test('a window boundary inside the first three (Remaining refilled, Reset moved) gives a second attempt', async () => {
  const { api } = scripted([
    answer(1),
    answer(0),
    answer(59, 1_800_000_120),
    answer(58, 1_800_000_120),
    answer(57, 1_800_000_120),
    answer(56, 1_800_000_120),
  ]);
  const { attempts } = await runCountdown(api);
  expect(attempts).toHaveLength(2);
  expect(countsDown(attempts[1]!)).toBe(true);
});

test('three answers in one window that do not fall end the countdown: RL-11 has its evidence, nothing more is sent', async () => {
  const { api, sent } = scripted([answer(5), answer(5), answer(5), answer(5)]);
  const { attempts } = await runCountdown(api);
  expect(attempts).toHaveLength(1);
  expect(sent).toHaveLength(3);
});
