/**
 * The write-back of every restore (suites/lib/write-back.ts): answered 5xx, it goes once more after
 * a pause (the answer's Retry-After when it asks for at most 10 s), and a second refusal stands.
 */
import { test, expect } from '../test.ts';
import { pauseBefore5xxRetry, sendWriteBack, transient5xxWarning } from '../../suites/lib/write-back.ts';

const DATE = 'Thu, 26 Nov 2026 12:00:00 GMT';
for (const [retryAfter, pause] of [
  [undefined, 300],
  ['0', 300],
  ['2', 2000],
  ['10', 10_000],
  ['11', undefined],
  ['Thu, 26 Nov 2026 12:00:05 GMT', 5000],
  ['Thu, 26 Nov 2026 13:00:00 GMT', undefined],
  ['soon', 300],
] as const) {
  test(`a write-back answered 503 with Retry-After ${retryAfter ?? '(none)'} goes once more ${pause === undefined ? 'never: the refusal stands' : `after ${pause} ms`}`, () => {
    const headers: Record<string, string> = { date: DATE, ...(retryAfter === undefined ? {} : { 'retry-after': retryAfter }) };
    expect(pauseBefore5xxRetry({ headers })).toBe(pause);
  });
}

const answer = (status: number, headers: Record<string, string> = {}) => ({ status, headers });

for (const c of [
  { name: 'a 200 goes once', answers: [answer(200)], sent: 1, status: 200, first5xx: undefined },
  { name: 'a 4xx goes once and stands', answers: [answer(400)], sent: 1, status: 400, first5xx: undefined },
  { name: 'a 502 then a 200: sent twice, the 200 stands', answers: [answer(502), answer(200)], sent: 2, status: 200, first5xx: 502 },
  { name: 'a 503 twice: sent twice, the second refusal stands', answers: [answer(503), answer(503)], sent: 2, status: 503, first5xx: 503 },
  {
    name: 'a 503 asking for a minute: sent once, the refusal stands',
    answers: [answer(503, { 'retry-after': '60' }), answer(200)],
    sent: 1,
    status: 503,
    first5xx: undefined,
  },
  {
    name: 'a failed request (no status) goes once',
    answers: [{ ok: false }, answer(200)],
    sent: 1,
    status: undefined,
    first5xx: undefined,
  },
]) {
  test(`sendWriteBack: ${c.name}`, async () => {
    let sent = 0;
    const out = await sendWriteBack(async () => c.answers[sent++] as { status?: number; headers?: Record<string, string> });
    expect(sent).toBe(c.sent);
    expect(out.res.status).toBe(c.status);
    expect(out.first5xx).toBe(c.first5xx);
  });
}

test('the warning names the pet, both answers and the HTTP rule', () => {
  expect(transient5xxWarning('7', '5', 502, 200)).toBe(
    'restoring pet 7 to quantity 5 got 502, and 200 when sent once more: a valid request answered 5xx (HTTP rules: 2xx or 4xx)',
  );
});
