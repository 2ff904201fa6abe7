import { test, expect } from '../test.ts';
import { parseEnv, PHASES } from '../../certify/env.ts';
import { SETTINGS } from '../../settings/index.ts';
import { describeRule } from '../../settings/define.ts';

const external = { BASE_URL: 'https://staging.example.com/v1', API_KEY: 'ik_live_abcdef123456' };

function errorsOf(env: Record<string, string>): string[] {
  const r = parseEnv(env);
  return r.ok ? [] : r.errors;
}

test('env: no BASE_URL certifies the reference server with every phase', () => {
  const r = parseEnv({});
  expect(r.ok).toBe(true);
  if (!r.ok) return;
  expect(r.config.baseUrl).toBeUndefined();
  expect(r.config.phases).toEqual([...PHASES]);
  expect(r.config.phases).toEqual(expect.arrayContaining(['functional', 'rate-limit', 'load']));
  expect(r.config.profile).toBe('full');
  expect(r.config.reportsDir).toBe('reports');
});

test('env: BASE_URL without API_KEY is a usage error naming API_KEY', () => {
  const errors = errorsOf({ BASE_URL: external.BASE_URL });
  expect(errors).toHaveLength(1);
  expect(errors[0]).toContain('API_KEY is required when BASE_URL is set');
});

test('env: an external target with only the required variables is accepted, with notes for the optional ones', () => {
  const r = parseEnv(external);
  expect(r.ok).toBe(true);
  if (!r.ok) return;
  expect(r.config.baseUrl).toBe('https://staging.example.com/v1');
  expect(r.config.notes.join('\n')).toContain('API_URL is not set');
  expect(r.config.notes.join('\n')).toContain('RATE_LIMIT_KEY is not set');
  expect(r.config.notes.join('\n')).toContain('LOAD_KEY is not set');
  for (const note of r.config.notes) expect(note.includes(external.API_KEY), 'a note shows no key').toBe(false);
});

test('env: readonly runs only the phases whose project is marked readonly (functional, not rate-limit or load)', () => {
  const r = parseEnv({ ...external, CONFORMANCE_PROFILE: 'readonly' });
  expect(r.ok && r.config.phases).toEqual(expect.arrayContaining(['functional']));
  expect(r.ok && r.config.phases).not.toContain('rate-limit');
  expect(r.ok && r.config.phases).not.toContain('load');
});

const BAD: [string, Record<string, string>, RegExp][] = [
  ['a relative BASE_URL', { ...external, BASE_URL: 'staging/v1' }, /BASE_URL must be an absolute http\(s\) URL/],
  ['a non-http BASE_URL', { ...external, BASE_URL: 'ftp://x/v1' }, /BASE_URL must use http or https/],
  ['credentials in BASE_URL', { ...external, BASE_URL: 'https://u:p@x/v1' }, /must not carry credentials/],
  ['a query in API_URL', { ...external, API_URL: 'https://x/quickstart?k=1' }, /API_URL must not have a query/],
  ['an unknown API_PLAN', { ...external, API_PLAN: 'gold' }, /API_PLAN="gold" must be one of free, pro, business, enterprise/],
  [
    'an unknown RATE_LIMIT_PLAN',
    { ...external, RATE_LIMIT_KEY: 'rk_123456789', RATE_LIMIT_PLAN: 'premium' },
    /RATE_LIMIT_PLAN="premium" must be one of/,
  ],
  ['RATE_LIMIT_PLAN without RATE_LIMIT_KEY', { ...external, RATE_LIMIT_PLAN: 'free' }, /RATE_LIMIT_PLAN is set but RATE_LIMIT_KEY is not/],
  ['an unknown profile', { ...external, CONFORMANCE_PROFILE: 'safe' }, /CONFORMANCE_PROFILE="safe" must be one of full, readonly/],
  ['a key with a space', { ...external, API_KEY: 'ab cd' }, /API_KEY must be visible ASCII/],
  ['a non-integer MISSING_PET_ID', { ...external, MISSING_PET_ID: '12abc' }, /MISSING_PET_ID="12abc" must be an int64 integer/],
  [
    'a MISSING_PET_ID beyond int64',
    { ...external, MISSING_PET_ID: '9223372036854775808' },
    /MISSING_PET_ID="9223372036854775808" must be an int64 integer/,
  ],
  ['WORKERS zero', { ...external, WORKERS: '0' }, /WORKERS="0" must be a positive integer/],
  [
    'MAX_RETRY_AFTER_S not a number',
    { ...external, MAX_RETRY_AFTER_S: 'soon' },
    /MAX_RETRY_AFTER_S="soon" must be an integer in \[1, 86400\]/,
  ],
  ['PHASE_TIMEOUT_S negative', { ...external, PHASE_TIMEOUT_S: '-1' }, /PHASE_TIMEOUT_S="-1" must be a positive integer/],
  ['API_KEY without BASE_URL', { API_KEY: 'ik_live_abcdef123456' }, /API_KEY needs BASE_URL/],
];

for (const [what, env, message] of BAD) {
  test(`env: ${what} is a usage error with a clear message`, () => {
    const errors = errorsOf(env);
    expect(
      errors.some((e) => message.test(e)),
      `expected an error matching ${message}, observed ${JSON.stringify(errors)}`,
    ).toBe(true);
    for (const e of errors) expect(e.includes('ik_live_abcdef123456'), 'the usage error shows no key').toBe(false);
  });
}

test("env: a bad value of any group (load, generated, cli) is a usage error by that setting's own rule", () => {
  for (const s of SETTINGS.filter((x) => x.kind === 'integer' || x.kind === 'number')) {
    const errors = errorsOf({ ...external, [s.name]: 'not-a-number' });
    expect(errors, s.name).toEqual([`${s.name}="not-a-number" must be ${describeRule(s)}`]);
  }
});

// Spec, Versioning: a base address without /v1 is the deployment's deviation (VER-01), judged by the run, not a usage error.
for (const base of ['https://staging.example.com', 'https://staging.example.com/api', 'https://staging.example.com/api/v1/']) {
  test(`env: BASE_URL ${base} is taken (VER-01 judges the /v1 segment)`, () => {
    expect(errorsOf({ ...external, BASE_URL: base })).toEqual([]);
  });
}

test('env: every problem is reported at once', () => {
  const errors = errorsOf({ BASE_URL: 'nope', API_PLAN: 'gold', CONFORMANCE_PROFILE: 'x' });
  expect(errors.length).toBeGreaterThanOrEqual(4);
});

// A key inside a URL (userinfo or query) never reaches the usage error.
const KEY = 'ik_live_abcdef123456';
for (const [what, env] of [
  ['BASE_URL with the key as password', { ...external, BASE_URL: `https://user:${KEY}@staging.example.com/v1` }],
  ['BASE_URL with the key as user', { ...external, BASE_URL: `https://${KEY}@staging.example.com/v1` }],
  ['BASE_URL with the key in the query', { ...external, BASE_URL: `https://staging.example.com/v1?api_key=${KEY}` }],
  ['API_URL with the key in the query', { ...external, API_URL: `https://staging.example.com/quickstart?key=${KEY}` }],
  ['an unparsable BASE_URL around the key', { ...external, BASE_URL: `staging/${KEY}` }],
] as const) {
  test(`env: ${what} is a usage error that never shows the key`, () => {
    const errors = errorsOf(env);
    expect(errors.length).toBeGreaterThan(0);
    for (const e of errors) expect(e.includes(KEY), 'the usage error shows no key').toBe(false);
  });
}
