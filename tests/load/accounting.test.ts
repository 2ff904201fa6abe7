/**
 * LOAD-02's accounting of the run's own requests on RATE_LIMIT_KEY (suites/load/overload-check.ts):
 * over two window lengths, the window read from Reset − Date, and a minute when the Limit is the
 * per-minute figure of the plan the user named (a token bucket may show only its next token in
 * Reset). A longer window can only leave another client unseen, never invent one.
 */
import { expect, test } from '../test.ts';
import { accountingWindowS, ownRequestsAt } from '../../suites/load/overload-check.ts';

const WINDOWS: { name: string; longestResetS: number; limit: number; plan?: number; windowS: number }[] = [
  { name: 'no plan named: Reset − Date', longestResetS: 2, limit: 60, windowS: 2 },
  { name: 'a free plan whose Limit is the minute figure: a minute', longestResetS: 2, limit: 60, plan: 60, windowS: 60 },
  { name: 'the day figure in the headers: Reset − Date', longestResetS: 40_000, limit: 1000, plan: 60, windowS: 40_000 },
  { name: 'a Reset further than a minute: kept', longestResetS: 75, limit: 60, plan: 60, windowS: 75 },
];

for (const w of WINDOWS) {
  test(`LOAD-02 accounting window, ${w.name}`, () => {
    expect(accountingWindowS(w.longestResetS, w.limit, w.plan)).toBe(w.windowS);
  });
}

test('LOAD-02 own requests: every answer within two window lengths and a second before the probe', () => {
  const at = 1_000_000;
  const answered = [at - 121_500, at - 120_500, at - 60_000, at - 4_000, at - 1];
  expect(ownRequestsAt(answered, at, 2)).toBe(2);
  expect(ownRequestsAt(answered, at, 60)).toBe(4);
});
