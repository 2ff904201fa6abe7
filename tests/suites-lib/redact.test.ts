import assert from 'node:assert/strict';
import fc from 'fast-check';
import nock from 'nock';
import { test, expect } from '@playwright/test';
import {
  containsSecret,
  findNeedle,
  mayHoldPattern,
  needlesOf,
  normaliseKey,
  redact,
  redactText,
  secretNeedles,
  secretsOf,
} from '../../core/secrets.ts';
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
  ['first character \\u-escaped', `{"status":"\\u0069${KEY.slice(1)}"}`],
  ['every character \\u-escaped', [...KEY].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')],
  ['\\u-escaped inside a JSON string (double backslash)', JSON.stringify({ message: `{"status":"\\u0069${KEY.slice(1)}"}` })],
  ['upper-case \\u escape', `\\u0049${KEY.slice(1)}`],
  ['HTML decimal references', [...KEY].map((c) => `&#${c.charCodeAt(0)};`).join('')],
  ['HTML hex reference for one character', `&#x69;${KEY.slice(1)}`],
  ['percent-encoded characters mixed with raw ones', `%69%6B${KEY.slice(2)}`],
  ['base64url', Buffer.from(`??${KEY}`).toString('base64url')],
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
});

test('redact keeps one redactor per set of keys: sets taken in turn, more of them than it keeps, each redact by their own keys', () => {
  for (let round = 0; round < 20; round++) {
    const name = `KEY_${round % 10}`;
    const value = `ik_set${round % 10}_0123456789abcdef`;
    const set = [{ name, value }];
    expect(redact(`a ${value} b ${KEY}`, set)).toBe(`a <${name}> b ${KEY}`);
    expect(redact(`a ${value} b ${KEY}`, SECRETS)).toBe(`a ${value} b <API_KEY>`);
    expect(needlesOf(set), 'one set of needles per set of keys').toBe(needlesOf([{ name, value }]));
    expect(needlesOf(set).map((n) => n.name)).toEqual(secretNeedles(set).map((n) => n.name));
  }
});

test('a key is normalised once: surrounding whitespace trimmed, control characters and inner spaces refused', () => {
  expect(normaliseKey(`${KEY}\n`)).toEqual({ ok: true, value: KEY });
  expect(normaliseKey(`  ${KEY}\r\n`)).toEqual({ ok: true, value: KEY });
  for (const bad of [`${KEY.slice(0, 5)} ${KEY.slice(5)}`, `${KEY.slice(0, 5)}\u0000${KEY.slice(5)}`, `${KEY}é`, '   '])
    expect(normaliseKey(bad).ok).toBe(false);
  const pasted = secretsOf({ API_KEY: `${KEY}\n` });
  expect(pasted).toEqual([{ name: 'API_KEY', value: KEY }]);
  expect(redact(`{"echo":"${KEY}"}`, pasted)).toBe('{"echo":"<API_KEY>"}');
});

test('evidence of a real exchange shows rate-limit headers and never the key', async ({ request }) => {
  nock('http://ev.test')
    .get('/v1/inventory')
    .reply(200, '[]', { 'X-RateLimit-Limit': '60', 'x-ratelimit-remaining': '57', 'X-RateLimit-Reset': '1700000000' });
  const res = await request.get('http://ev.test/v1/inventory', { headers: { Authorization: `Bearer ${KEY}` } });
  const line = formatEvidence(
    { method: 'GET', path: '/v1/inventory', status: res.status(), headers: res.headersArray(), authorization: `Bearer ${KEY}` },
    SECRETS,
  );
  expect(line).toBe(
    'GET /v1/inventory → 200, X-RateLimit-Limit: 60, X-RateLimit-Remaining: 57, X-RateLimit-Reset: 1700000000, Authorization: Bearer <API_KEY>',
  );
  expect(formatEvidence({ method: 'GET', path: `/v1/x?key=${KEY}`, status: 'network error', headers: {} }, SECRETS)).not.toContain(KEY);
});

test('foreign tokens are shortened, empty and missing ones named', () => {
  expect(describeAuthorization('', SECRETS)).toBe('(empty)');
  expect(describeAuthorization(`Bearer ${'x'.repeat(200)}`, SECRETS)).toHaveLength(81);
  expect(formatEvidence({ method: 'GET', path: '/', status: 401, headers: {} }, SECRETS)).toMatch(/Authorization: \(none\)$/);
});

/**
 * The prefilter (`mayHoldPattern`) only skips a pattern that cannot match: on texts built of every
 * form a key's characters can take, of near misses and of characters whose case folding reaches
 * ASCII, redaction and the search for a needle with it equal those by the patterns alone, and it
 * skipped many of them.
 */
test('redact and findNeedle with the prefilter equal the patterns alone, on generated texts', () => {
  const keys = [KEY, 'Sk-Live_KeLvIn%&x', 'ab\\cd/ef"gh'];
  const secrets = keys.map((value, i) => ({ name: ['API_KEY', 'RATE_LIMIT_KEY', 'LOAD_KEY'][i]!, value }));
  const needles = secretNeedles(secrets);
  const patternsOnly = needles.map(({ plainLower: _, ...n }) => n);
  // Each form of a character, by family; a key's form mixes the families of a chosen set, so
  // texts with only one kind of escape (or none, in any letter case) come up as often as mixes.
  const FAMILIES: Record<string, (c: string) => string[]> = {
    raw: (c) => [c, c.toUpperCase(), c.toLowerCase()],
    json: (c) => [`\\u00${c.charCodeAt(0).toString(16).padStart(2, '0')}`, `\\\\u00${c.charCodeAt(0).toString(16)}`],
    percent: (c) => [`%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`],
    html: (c) => [`&#${c.charCodeAt(0)};`, `&#x${c.charCodeAt(0).toString(16)};`, `&#X0${c.charCodeAt(0).toString(16)};`],
    // A JSON backslash before `/`, `"` and `\`, and HTML's named references, where the character has them.
    backslash: (c) => ('/"\\'.includes(c) ? [`\\${c}`, `\\\\\\${c}`] : [c]),
    named: (c) => {
      const name = ({ '&': 'amp', '"': 'quot' } as Record<string, string>)[c];
      return name ? [`&${name};`, `&${name.toUpperCase()};`] : [c];
    },
  };
  const keyForm = fc
    .tuple(fc.constantFrom(...keys), fc.subarray(Object.keys(FAMILIES), { minLength: 1 }))
    .chain(([k, families]) =>
      fc.tuple(...[...k].map((c) => fc.constantFrom(...families.flatMap((f) => FAMILIES[f]!(c))))).map((parts) => parts.join('')),
    );
  const nearMiss = fc.constantFrom(...keys).chain((k) => fc.integer({ min: 1, max: k.length - 1 }).map((cut) => k.slice(0, cut)));
  // Besides letters whose case folding reaches ASCII, the characters escapes are made of, so that
  // texts hold near misses of the prefilter's escapes too (`\n`, `\"`, `50%`, `&x`).
  const noise = fc.string({
    unit: fc.constantFrom('a', 'K', '\u212a', '\u017f', '\u0130', ' ', '\n', '"', '/', 'x', '0', '\\', '%', '&', '#', ';', 'u', '4'),
  });
  const text = fc.array(fc.oneof(keyForm, nearMiss, noise), { maxLength: 6 }).map((parts) => parts.join(''));
  let skipped = 0;
  fc.assert(
    fc.property(text, (t) => {
      if (needles.some((n) => n.pattern && !mayHoldPattern(t, n))) skipped++;
      // node:assert, not expect: in 6000 calls expect's bookkeeping (about 1 ms a call) was most of this test's time.
      assert.deepStrictEqual(redactText(t, needles), redactText(t, patternsOnly));
      assert.deepStrictEqual(
        needles.map((n) => findNeedle(t, n)),
        patternsOnly.map((n) => findNeedle(t, n)),
      );
    }),
    { seed: 27, numRuns: 3000 },
  );
  expect(skipped, 'texts on which the prefilter spared a pattern').toBeGreaterThan(300);
});
