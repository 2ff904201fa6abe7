import nock from 'nock';
import { test, expect } from '@playwright/test';
import {
  bearerChallenge,
  getHeader,
  headerValues,
  isJsonMediaType,
  mediaType,
  normalizeHeaders,
  parseChallenges,
} from '../../suites/lib/headers.ts';

test.afterEach(() => nock.cleanAll());

test('header names are matched case-insensitively, from fetch, records and pair lists', async ({ request }) => {
  nock('http://headers.test').get('/v1/inventory').reply(200, '[]', {
    'X-RATELIMIT-LIMIT': '60',
    'x-ratelimit-remaining': '59',
    'X-RateLimit-Reset': '1700000000',
    'Content-Type': 'Application/JSON; Charset=UTF-8',
  });
  const res = await request.get('http://headers.test/v1/inventory');
  const pairs = res.headersArray();
  for (const source of [res.headers(), pairs]) {
    expect(getHeader(source, 'x-ratelimit-limit')).toBe('60');
    expect(getHeader(source, 'X-RateLimit-Remaining')).toBe('59');
    expect(getHeader(source, 'x-ratelimit-reset')).toBe('1700000000');
    expect(isJsonMediaType(getHeader(source, 'content-type'))).toBe(true);
  }
  expect(getHeader({ Date: undefined }, 'date')).toBeUndefined();
});

test('repeated fields are joined with ", " and normalized under lowercase names', () => {
  const pairs = [
    { name: 'Vary', value: 'a' },
    { name: 'VARY', value: 'b' },
    { name: 'X-One', value: '1' },
  ];
  expect(headerValues(pairs, 'vary')).toEqual(['a', 'b']);
  expect(getHeader(pairs, 'Vary')).toBe('a, b');
  expect(normalizeHeaders(pairs)).toEqual({ vary: 'a, b', 'x-one': '1' });
  expect(normalizeHeaders({ 'Set-Cookie': ['x=1', 'y=2'] })).toEqual({ 'set-cookie': 'x=1, y=2' });
});

const mediaTypes: Array<[string | undefined, boolean]> = [
  ['application/json', true],
  ['application/json; charset=utf-8', true],
  ['APPLICATION/JSON;charset=UTF-8', true],
  [' application/json ', true],
  ['text/plain', false],
  ['text/plain; charset=utf-8', false],
  ['application/problem+json', false],
  ['application/jsonx', false],
  ['application', false],
  ['', false],
  [undefined, false],
];
for (const [value, json] of mediaTypes) {
  test(`media type ${JSON.stringify(value)} is ${json ? '' : 'not '}JSON`, () => {
    expect(isJsonMediaType(value)).toBe(json);
  });
}

test('mediaType strips parameters and rejects malformed values', () => {
  expect(mediaType('Text/HTML; charset=iso-8859-1')).toBe('text/html');
  expect(mediaType('not a type')).toBeUndefined();
  expect(mediaType(undefined)).toBeUndefined();
});

test('WWW-Authenticate challenges: scheme case-insensitive, quoted and token params, several challenges', () => {
  expect(bearerChallenge('Bearer realm="inventory", error="invalid_token"')).toEqual({
    scheme: 'Bearer',
    params: { realm: 'inventory', error: 'invalid_token' },
  });
  expect(bearerChallenge('bearer')?.scheme).toBe('bearer');
  expect(bearerChallenge('Basic realm="x", Bearer error=invalid_token')?.params).toEqual({ error: 'invalid_token' });
  expect(bearerChallenge('Basic realm="x"')).toBeUndefined();
  expect(bearerChallenge(undefined)).toBeUndefined();
  expect(bearerChallenge('')).toBeUndefined();
  expect(parseChallenges('Bearer realm="a \\"quoted\\" realm"')[0]!.params.realm).toBe('a "quoted" realm');
  expect(parseChallenges('Newauth realm="apps", type=1, Basic realm="simple"').map((c) => c.scheme)).toEqual(['Newauth', 'Basic']);
});
