import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, expect } from '../test.ts';
import { crossTargetConflict } from '../../cli/config.ts';
import { EXIT } from '../../core/exit-codes.ts';
import { secretsOf } from '../../core/secrets.ts';
import { keyOccurrences, runCli, startHostile } from './servers.ts';

/**
 * A careless user's input: a key where no key belongs (a YAML mapping key, a comment, a plan), and
 * a config file whose target is not the one given by flag or variable. Each is refused with exit 2
 * before anything is sent, the key in no encoding on stdout or stderr, and no request at all
 * reaches the counting server.
 */

const KEY = 'sk_live_1nput_5G7h9J2k4L6z';
const STAGING_KEY = 'sk_live_st4ging_8M1n3B5v7C9x';

interface InputCase {
  name: string;
  /** The config file's text (`{origin}`: the counting server), if any. */
  config?: string;
  args: (origin: string) => string[];
  env: (origin: string) => Record<string, string>;
  says: RegExp;
}

const CASES: InputCase[] = [
  {
    name: 'a key written as a YAML mapping key is refused like a literal key, not quoted',
    config: `version: 1\ntargets:\n  s:\n    baseUrl: {origin}/v1\n    apiKey: \${API_KEY}\n    ${KEY}: true\n`,
    args: () => [],
    env: () => ({ API_KEY: KEY }),
    says: /targets\.s \(a mapping key\) holds a literal key/,
  },
  {
    name: 'a key in a YAML comment is refused like a literal key, naming its line',
    config: `version: 1\n# the old key was ${KEY}\ntargets:\n  s:\n    baseUrl: {origin}/v1\n    apiKey: \${API_KEY}\n`,
    args: () => [],
    env: () => ({ API_KEY: KEY }),
    says: /line 2 holds a literal key/,
  },
  {
    name: "a key in a comment is refused when it is the value of a variable the file's key field refers to",
    config: `version: 1\ntargets:\n  s:\n    baseUrl: {origin}/v1\n    apiKey: \${STAGING_API_KEY} # ${STAGING_KEY}\n`,
    args: () => [],
    env: () => ({ STAGING_API_KEY: STAGING_KEY }),
    says: /line 5 holds a literal key/,
  },
  {
    name: 'a key given to --plan is not echoed in the usage error',
    args: (origin) => ['--base-url', `${origin}/v1`, '--plan', KEY],
    env: () => ({ API_KEY: KEY }),
    says: /API_PLAN/,
  },
  {
    name: '--dry-run shows a key given to --plan as its placeholder, and the usage error does not echo it',
    args: (origin) => ['--dry-run', '--base-url', `${origin}/v1`, '--plan', KEY],
    env: () => ({ API_KEY: KEY }),
    says: /API_PLAN\s+<API_KEY>\s+\(flag\)/,
  },
  {
    name: 'a key given to --plan, known only as a variable a config refers to, is not echoed',
    args: (origin) => ['--base-url', `${origin}/v1`, '--plan', STAGING_KEY],
    env: () => ({ API_KEY: KEY, STAGING_API_KEY: STAGING_KEY }),
    says: /API_PLAN/,
  },
  {
    name: "keys never cross targets: --base-url takes no key, URL or plan from the config file's other target",
    config: `version: 1\ntargets:\n  staging:\n    baseUrl: https://staging.example.com/v1\n    apiUrl: https://staging.example.com/quickstart\n    apiKey: \${STAGING_API_KEY}\n    apiPlan: pro\n`,
    args: (origin) => ['--base-url', `${origin}/v1`],
    env: () => ({ STAGING_API_KEY: STAGING_KEY }),
    says: /BASE_URL from --base-url \(http:\/\/127\.0\.0\.1:\d+\/v1\) is not the address of config target "staging" \(its baseUrl https:\/\/staging\.example\.com\/v1\); its apiUrl, apiPlan, apiKey would go to another target/,
  },
  {
    name: "keys never cross targets: BASE_URL in the environment takes no key from the config file's other target",
    config: `version: 1\ntargets:\n  staging:\n    baseUrl: https://staging.example.com/v1\n    apiKey: \${STAGING_API_KEY}\n`,
    args: () => [],
    env: (origin) => ({ BASE_URL: `${origin}/v1`, STAGING_API_KEY: STAGING_KEY }),
    says: /BASE_URL from the environment variable BASE_URL .* its apiKey would go to another target/,
  },
];

for (const c of CASES) {
  test(`certify: ${c.name} (exit 2, 0 requests)`, async () => {
    test.setTimeout(60_000);
    const server = await startHostile({ keyed: 'error-body' });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostile-input-'));
    const reports = path.join(dir, 'reports');
    try {
      const args = ['certify', ...c.args(server.origin)];
      if (c.config) {
        const file = path.join(dir, 'conformance.yaml');
        fs.writeFileSync(file, c.config.replaceAll('{origin}', server.origin));
        args.push('--config', file);
      }
      const env = c.env(server.origin);
      const run = await runCli(args, { ...env, REPORTS_DIR: reports }, { timeoutMs: 30_000 });
      const output = run.stdout + run.stderr;
      expect(run.code, output).toBe(EXIT.usage);
      expect(run.ms, 'wall time').toBeLessThan(20_000);
      expect(output).toMatch(c.says);
      expect(server.requests, 'requests that reached the target').toBe(0);
      expect(keyOccurrences(secretsOf({ API_KEY: KEY, RATE_LIMIT_KEY: STAGING_KEY }), output, reports)).toEqual([]);
      expect(fs.existsSync(reports), 'nothing written').toBe(false);
    } finally {
      await server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('keys never cross targets: a target given outside the file that is the config target, or a config target that gives nothing else, is no conflict', () => {
  const given = { origin: '--base-url', targetName: 'staging' };
  const rows: { config: Record<string, string>; outside: Record<string, string>; conflict: boolean }[] = [
    {
      config: { BASE_URL: 'https://s.example.com/v1', API_KEY: STAGING_KEY },
      outside: { BASE_URL: 'https://s.example.com/v1/' },
      conflict: false,
    },
    { config: {}, outside: { BASE_URL: 'https://other.example.com/v1' }, conflict: false },
    {
      config: { BASE_URL: 'https://s.example.com/v1', API_KEY: STAGING_KEY },
      outside: { BASE_URL: 'https://other.example.com/v1', API_KEY: KEY },
      conflict: false,
    },
    { config: { BASE_URL: 'https://s.example.com/v1', API_KEY: STAGING_KEY }, outside: {}, conflict: false },
    { config: { API_KEY: STAGING_KEY }, outside: { BASE_URL: 'https://other.example.com/v1' }, conflict: true },
    {
      config: { BASE_URL: 'https://s.example.com/v1', RATE_LIMIT_PLAN: 'free' },
      outside: { BASE_URL: 'https://u:p@other.example.com/v1?k=1' },
      conflict: true,
    },
  ];
  for (const r of rows) {
    const line = crossTargetConflict(r.config, r.outside, given);
    expect(line !== undefined, JSON.stringify(r)).toBe(r.conflict);
    if (line) expect(line).not.toMatch(/u:p@|k=1|sk_live/);
  }
});
