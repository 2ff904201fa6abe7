/**
 * Spec: Endpoints > 3. Send message (quickstart); Resources > Message; States and transitions.
 * `POST {api_url}/messages` with `Authorization: Bearer <API_KEY>` and
 * `Content-Type: application/json`. Sending a message is a side effect: `@mutates`.
 */
import { test, expectFact, expectNoDeviation, expectStatus, expectErrorBody } from '../fixtures.ts';
import { isUtcTimestamp } from '../../schemas/index.ts';
import { isJsonMediaType } from '../lib/headers.ts';
import { abbreviate, describe as describeValue } from '../lib/error-body.ts';

const MUTATES = { tag: ['@mutates'] };

function text(prefix: string): string {
  return `${prefix} conformance check ${new Date().toISOString()}`;
}

test('MSG-01 a valid message is accepted with id, message, status and createdAt', MUTATES, async ({ api, warn }) => {
  const message = text('MSG-01');
  const res = await api.sendMessage({ message });
  expectStatus(res, '2xx', 'a valid message');
  if (![200, 201, 202].includes(res.status))
    warn(`MSG-01: success answered ${res.status} (the spec names no code; 200, 201 or 202 expected)`);
  const ct = res.header('content-type');
  expectFact(isJsonMediaType(ct), { expected: 'Content-Type application/json', observed: ct ?? 'none', res });
  const body = (res.json ?? {}) as Record<string, unknown>;
  const problems: string[] = [];
  if (res.json === null || typeof res.json !== 'object' || Array.isArray(res.json))
    problems.push(`body is not a JSON object: ${abbreviate(res.text)}`);
  for (const field of ['id', 'message', 'status', 'createdAt']) {
    if (typeof body[field] !== 'string') problems.push(`"${field}" is ${describeValue(body[field])}, expected a string`);
  }
  if (typeof body.message === 'string' && body.message !== message)
    problems.push(`"message" is ${JSON.stringify(abbreviate(body.message, 80))}, expected the text sent`);
  expectNoDeviation(problems, 'a Message response: string id, message (the text sent), status and createdAt', res.label, res);
});

test('MSG-02 createdAt is an ISO 8601 UTC timestamp', MUTATES, async ({ api }) => {
  const res = await api.sendMessage({ message: text('MSG-02') });
  expectStatus(res, '2xx', 'a valid message');
  const createdAt = (res.json as Record<string, unknown> | undefined)?.createdAt;
  expectFact(isUtcTimestamp(createdAt), {
    what: `createdAt of ${res.label}`,
    expected: 'an ISO 8601 UTC timestamp (Z or +00:00)',
    observed: describeValue(createdAt),
    res,
  });
});

test('MSG-05 status is queued or another string', MUTATES, async ({ api, warn }) => {
  const res = await api.sendMessage({ message: text('MSG-05') });
  // May-level: only ever a warning (MSG-01 judges the success and the shape).
  const status = (res.json as Record<string, unknown> | undefined)?.status;
  if (!(res.status >= 200 && res.status < 300) || typeof status !== 'string') {
    warn(`MSG-05: ${res.label}: status ${describeValue(status)} not judged (see MSG-01)`);
  } else if (status !== 'queued')
    warn(`MSG-05: status is ${JSON.stringify(status)}; only "queued" is named by the spec (other values: not shown)`);
});

test('MSG-06 the documented headers and body are accepted', MUTATES, async ({ api }) => {
  const res = await api.sendMessage({ message: text('MSG-06') }, { contentType: 'application/json' });
  expectStatus(res, '2xx', 'with Authorization: Bearer and Content-Type: application/json');
});

/** MSG-03: the three 400 cases of the quickstart, each with a valid key. */
const BAD_REQUESTS: { name: string; body: string; contentType: string | null }[] = [
  { name: 'invalid JSON', body: '{"message": "unterminated', contentType: 'application/json' },
  { name: 'a body without message', body: '{"text": "no message field"}', contentType: 'application/json' },
  { name: 'no Content-Type', body: '{"message": "hello"}', contentType: null },
];

for (const c of BAD_REQUESTS) {
  test(`MSG-03 ${c.name} yields 400 with an Error body`, MUTATES, async ({ api }) => {
    const res = await api.sendMessage(undefined, { body: c.body, contentType: c.contentType });
    expectStatus(res, 400, c.name);
    expectErrorBody(res, c.name);
  });
}

/** MSG-04: 401 for a missing or invalid key (the full matrix is AUTH-03). */
const BAD_KEYS = [
  { name: 'no Authorization header', credential: 'none' as const },
  { name: 'an unknown key', credential: 'unknown' as const },
];

for (const c of BAD_KEYS) {
  test(`MSG-04 ${c.name} yields 401 with an Error body`, async ({ api }) => {
    const credential = c.credential === 'none' ? 'none' : { authorization: `Bearer ${api.unknownKey}` };
    const res = await api.sendMessage({ message: text('MSG-04') }, { credential });
    expectStatus(res, 401, c.name);
    expectErrorBody(res, c.name);
  });
}
