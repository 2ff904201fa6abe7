import { test, expect } from '../test.ts';
import { mergeEnv, parseArgs } from '../../cli/args.ts';
import { plain } from '../../cli/output.ts';
import { SETTINGS } from '../../settings/index.ts';

const parse = (...argv: string[]) => parseArgs(argv, SETTINGS);

test('args: every non-key setting has a flag that sets its variable; --plan is API_PLAN', () => {
  const p = parse(
    'certify',
    '--base-url',
    'https://s.example.com/v1',
    '--api-url=https://s.example.com/q',
    '--plan',
    'pro',
    '--profile',
    'readonly',
    '--max-retry-after-s',
    '30',
  );
  expect(p.errors).toEqual([]);
  expect(p.env).toEqual({
    BASE_URL: 'https://s.example.com/v1',
    API_URL: 'https://s.example.com/q',
    API_PLAN: 'pro',
    CONFORMANCE_PROFILE: 'readonly',
    MAX_RETRY_AFTER_S: '30',
  });
  for (const s of SETTINGS.filter((x) => !x.secret)) {
    const value = s.kind === 'boolean' ? [] : ['1'];
    expect(parse('certify', s.flag!, ...value).env[s.name], s.name).toBeDefined();
  }
});

test('args: a key given as a flag is refused without echoing it', () => {
  const p = parse('certify', '--api-key', 'sk_live_abcdefgh123', '--load-key=sk_load_zyx98765');
  expect(p.errors).toHaveLength(2);
  expect(p.errors.join('\n')).not.toMatch(/sk_live|sk_load/);
  expect(p.errors[0]).toContain('read only from the environment (API_KEY)');
});

test('args: booleans take no value; --no-<flag> and --flag=false turn them off', () => {
  expect(parse('certify', '--strict').env.CONFORMANCE_STRICT).toBe('true');
  expect(parse('certify', '--no-strict').env.CONFORMANCE_STRICT).toBe('false');
  expect(parse('certify', '--strict=false').env.CONFORMANCE_STRICT).toBe('false');
});

const BAD: [string[], RegExp][] = [
  [['certfy'], /unknown command "certfy"/],
  [['certify', '--bogus'], /unknown option --bogus/],
  [['certify', '--base-url'], /--base-url needs a value \(BASE_URL\)/],
  [['certify', '--base-url', '--strict'], /--base-url needs a value/],
  [['verify', '--write-baseline', 'x'], /--write-baseline does not apply to verify/],
];
for (const [argv, message] of BAD) {
  test(`args: usage error for ${argv.join(' ')}`, () => {
    expect(parse(...argv).errors.join('\n')).toMatch(message);
  });
}

test('args: flag > variable > config file; an empty variable counts as unset', () => {
  const env = mergeEnv(
    { API_PLAN: 'free', RATE_LIMIT_PLAN: '', WORKERS: '3', PATH: '/bin' },
    { API_PLAN: 'business', RATE_LIMIT_PLAN: 'pro', WORKERS: '1', LOAD_P99_MS: '500' },
    { API_PLAN: 'enterprise' },
  );
  expect(env).toMatchObject({ API_PLAN: 'enterprise', RATE_LIMIT_PLAN: 'pro', WORKERS: '3', LOAD_P99_MS: '500', PATH: '/bin' });
});

test('output: off a terminal, colours, cursor moves and carriage returns are removed', () => {
  expect(plain('\u001b[32m✓\u001b[39m ok\r\n\u001b[2K\u001b[1Gphase 1/3\rdone\u0007\n')).toBe('✓ ok\nphase 1/3\ndone\n');
});
