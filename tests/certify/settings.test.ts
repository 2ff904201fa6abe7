import fs from 'node:fs';
import { test, expect } from '../test.ts';
import { fillReadme, readSettings, renderHelp, SETTINGS } from '../../settings/index.ts';
import { READMES } from '../../settings/readme.ts';
import { help } from '../../certify/help.ts';
import { SECRET_VARIABLES } from '../../core/secrets.ts';

test('settings: every variable is defined once, with a help line and a CLI flag unless it is a key', () => {
  const names = SETTINGS.map((s) => s.name);
  expect(new Set(names).size, `duplicate settings: ${names.filter((n, i) => names.indexOf(n) !== i)}`).toBe(names.length);
  for (const s of SETTINGS) {
    expect(s.help.length, `${s.name}: help line`).toBeGreaterThan(10);
    expect(s.group, `${s.name}: group`).not.toBe('');
    if (s.secret) expect(s.flag, `${s.name} is a key: no flag`).toBeUndefined();
    else expect(s.flag, `${s.name}: flag`).toMatch(/^--[a-z0-9-]+$/);
  }
  expect(SETTINGS.find((s) => s.name === 'MAX_RETRY_AFTER_S')?.flag).toBe('--max-retry-after-s');
});

test('settings: defaults when nothing is set, typed values when set', () => {
  const { values, problems } = readSettings({});
  expect(problems).toEqual([]);
  expect(values).toMatchObject({ MAX_RETRY_AFTER_S: 120, WORKERS: 2, CONFORMANCE_PROFILE: 'full', REPORTS_DIR: 'reports' });
  expect(values.BASE_URL).toBeUndefined();
  const set = readSettings({
    BASE_URL: ' https://h/v1/ ',
    API_PLAN: 'Pro',
    MAX_RETRY_AFTER_S: '30',
    MISSING_PET_ID: '9223372036854775807',
    WORKERS: ' ',
  });
  expect(set.problems).toEqual([]);
  expect(set.values).toMatchObject({
    BASE_URL: 'https://h/v1',
    API_PLAN: 'pro',
    MAX_RETRY_AFTER_S: 30,
    MISSING_PET_ID: '9223372036854775807',
    WORKERS: 2,
  });
});

// One rule per setting: the same value is judged the same way by every reader (certify, suites, load).
const BAD: [string, string, RegExp][] = [
  ['MAX_RETRY_AFTER_S', '0', /^MAX_RETRY_AFTER_S="0" must be an integer in \[1, 86400\]/],
  ['MAX_RETRY_AFTER_S', '1.5', /^MAX_RETRY_AFTER_S="1.5" must be an integer/],
  ['WORKERS', 'two', /^WORKERS="two" must be a positive integer/],
  ['REQUEST_TIMEOUT_MS', 'soon', /^REQUEST_TIMEOUT_MS="soon" must be a positive integer \(milliseconds\)/],
  ['CONFORMANCE_PROFILE', 'safe', /^CONFORMANCE_PROFILE="safe" must be one of full, readonly$/],
  ['MISSING_PET_ID', '9223372036854775808', /^MISSING_PET_ID="9223372036854775808" must be an int64 integer$/],
];
for (const [name, raw, message] of BAD) {
  test(`settings: ${name}="${raw}" breaks its one rule and falls back to the default`, () => {
    const { values, problems } = readSettings({ [name]: raw });
    expect(problems.map((p) => p.name)).toEqual([name]);
    expect(problems[0].message).toMatch(message);
    expect((values as Record<string, unknown>)[name]).toEqual(SETTINGS.find((s) => s.name === name)?.default);
  });
}

test('settings: a problem never shows the value of a key or of a URL', () => {
  const key = 'sk_live_0123456789abcdef';
  const { problems } = readSettings({ API_KEY: `${key} x`, BASE_URL: `https://user:${key}@h/v1`, API_URL: `https://h/q?key=${key}` });
  expect(problems.map((p) => p.name).sort()).toEqual(['API_KEY', 'API_URL', 'BASE_URL']);
  for (const p of problems) expect(p.message.includes(key), `${p.name}: the message shows no key`).toBe(false);
});

test('settings: --help lists every setting with its default', () => {
  const text = help();
  for (const s of SETTINGS) {
    expect(text, `--help names ${s.name}`).toContain(s.name);
    if (s.default !== undefined) expect(text).toMatch(new RegExp(`${s.name} .*default ${String(s.default).replace('.', '\\.')}`));
  }
  expect(renderHelp(undefined, { flags: true })).toContain('--max-retry-after-s');
});

test('settings: the README tables are the ones generated from settings/ (npx tsx settings/readme.ts)', () => {
  for (const file of READMES) {
    const text = fs.readFileSync(file, 'utf8');
    expect(text, `${file} has a settings table`).toMatch(/<!-- settings:[a-z,-]+ -->/);
    expect(text, `${file} drifted from settings/: run npx tsx settings/readme.ts`).toBe(fillReadme(text));
  }
  const all = READMES.map((f) => fs.readFileSync(f, 'utf8')).join('\n');
  for (const s of SETTINGS) expect(all, `a README documents ${s.name}`).toContain(`| \`${s.name}\` |`);
});

test('settings: the keys certify scans for are exactly the settings of kind secret', () => {
  expect(
    SETTINGS.filter((s) => s.secret)
      .map((s) => s.name)
      .sort(),
  ).toEqual([...SECRET_VARIABLES].sort());
});
