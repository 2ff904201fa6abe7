import nock from 'nock';
import { test, expect } from '@playwright/test';
import { containsSecret, redact, secretForms } from '../../suites/lib/redact.ts';
import { describeAuthorization, formatEvidence } from '../../suites/lib/evidence.ts';

test.afterEach(() => nock.cleanAll());

const KEY = 'ik_free_b63b0ccd181e40a5529f0b3a0c3052e3';
const SECRETS = [{ name: 'API_KEY', value: KEY }];

const FORMS: Array<[string, string]> = [
  ['raw', `Authorization: Bearer ${KEY}`],
  ['upper case', KEY.toUpperCase()],
  ['url-encoded', encodeURIComponent(`k=${KEY}&x=1`)],
  ['base64', Buffer.from(KEY).toString('base64')],
  ['base64 inside a larger blob', Buffer.from(`{"headers":{"authorization":"Bearer ${KEY}"}}`).toString('base64')],
  ['base64 at offset 1', Buffer.from(`x${KEY}`).toString('base64')],
  ['base64 at offset 2', Buffer.from(`xy${KEY}`).toString('base64')],
  ['JSON', JSON.stringify({ authorization: `Bearer ${KEY}` })],
];
for (const [name, text] of FORMS) {
  test(`redact hides the key (${name})`, () => {
    expect(containsSecret(text, SECRETS)).toBe(true);
    const out = redact(text, SECRETS);
    expect(out).not.toContain(KEY);
    expect(out.toLowerCase()).not.toContain(KEY.toLowerCase());
    expect(containsSecret(out, SECRETS)).toBe(false);
  });
}

test('redact leaves text without the key alone and ignores tiny secrets', () => {
  expect(redact('GET /v1/inventory → 200', SECRETS)).toBe('GET /v1/inventory → 200');
  expect(redact('a b c', [{ name: 'X', value: 'a' }])).toBe('a b c');
  expect(secretForms(KEY)).toContain(KEY);
});

test('evidence of a real exchange shows rate-limit headers and never the key', async ({ request }) => {
  nock('http://ev.test').get('/v1/inventory').reply(200, '[]', { 'X-RateLimit-Limit': '60', 'x-ratelimit-remaining': '57', 'X-RateLimit-Reset': '1700000000' });
  const res = await request.get('http://ev.test/v1/inventory', { headers: { Authorization: `Bearer ${KEY}` } });
  const line = formatEvidence({ method: 'GET', path: '/v1/inventory', status: res.status(), headers: res.headersArray(), authorization: `Bearer ${KEY}` }, SECRETS);
  expect(line).toBe('GET /v1/inventory → 200, X-RateLimit-Limit: 60, X-RateLimit-Remaining: 57, X-RateLimit-Reset: 1700000000, Authorization: Bearer <API_KEY>');
  expect(formatEvidence({ method: 'GET', path: `/v1/x?key=${KEY}`, status: 'network error', headers: {} }, SECRETS)).not.toContain(KEY);
});

test('foreign tokens are shortened, empty and missing ones named', () => {
  expect(describeAuthorization('', SECRETS)).toBe('(empty)');
  expect(describeAuthorization(`Bearer ${'x'.repeat(200)}`, SECRETS)).toHaveLength(81);
  expect(formatEvidence({ method: 'GET', path: '/', status: 401, headers: {} }, SECRETS)).toMatch(/Authorization: \(none\)$/);
});
