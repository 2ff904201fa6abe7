import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, expect } from '../test.ts';
import { preflight } from '../../certify/steps/preflight.ts';
import { runCertify } from '../../certify/run.ts';
import { EXIT } from '../../core/exit-codes.ts';
import { secretsOf } from '../../core/secrets.ts';
import { transport } from '../../suites/fixtures/transport.ts';
import { keyOccurrences, ROOT, runCli, startHostile, type HostileOptions } from './servers.ts';

/**
 * Hostile targets on loopback, certified as a user would certify them: each case asserts the exit
 * code, a wall-time bound, no key in any encoding on stdout or in any file the run wrote, and no
 * request carrying a key to a peer whose certificate was not verified.
 */

const KEY = 'sk_live_h0stile_7Q2w9E4r6T8y';
const RL_KEY = 'sk_live_h0stile_rl_3X5c7V9b1N';
const SECRETS = secretsOf({ API_KEY: KEY, RATE_LIMIT_KEY: RL_KEY });

function scratch(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

test.describe('TLS is verified whatever NODE_TLS_REJECT_UNAUTHORIZED says', () => {
  const clients: { name: string; send: (origin: string) => Promise<unknown> }[] = [
    {
      name: "the suites' transport",
      send: (origin) =>
        transport(new URL(`${origin}/v1/inventory`), 'GET', { authorization: `Bearer ${KEY}` }, undefined, { timeoutMs: 2000 }),
    },
    {
      name: 'the preflight',
      send: async (origin) => {
        const r = await preflight({ baseUrl: `${origin}/v1` }, { timeoutMs: 2000 });
        if (!r.ok) throw new Error(r.line);
      },
    },
  ];
  for (const c of clients) {
    test(`${c.name} refuses a self-signed certificate with NODE_TLS_REJECT_UNAUTHORIZED=0 in its own environment, and sends nothing`, async () => {
      const server = await startHostile({ keyed: 'error-body', selfSigned: true });
      const before = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
      try {
        await expect(c.send(server.origin)).rejects.toThrow(/self[- ]signed|certificate/i);
        expect(server.requests, 'requests that reached the unverified peer').toBe(0);
      } finally {
        if (before === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
        else process.env.NODE_TLS_REJECT_UNAUTHORIZED = before;
        await server.close();
      }
    });
  }
});

test('INSECURE_TLS is the one opt-out: the transport then reaches a self-signed peer', async () => {
  const server = await startHostile({ keyed: 'error-body', selfSigned: true });
  try {
    const r = await transport(new URL(`${server.origin}/v1/inventory`), 'GET', { authorization: `Bearer ${KEY}` }, undefined, {
      timeoutMs: 2000,
      insecureTls: true,
    });
    expect(r.status).toBe(401);
    expect(server.keyed).toBe(1);
    expect((await preflight({ baseUrl: `${server.origin}/v1` }, { timeoutMs: 2000, insecure: true })).ok).toBe(true);
  } finally {
    await server.close();
  }
});

interface CliCase {
  name: string;
  server: HostileOptions;
  env: Record<string, string>;
  /** Milliseconds after the first request (or the first carrying a key) arrives at which the run gets SIGTERM. */
  sigtermAfterMs?: number;
  sigtermOnKeyed?: boolean;
  /** Bound from SIGTERM to the run's exit (default 3 s). */
  sigtermWithinMs?: number;
  code: number;
  /** Wall-time bound of the whole run, start-up included. */
  withinMs: number;
  /** Text the output must hold. */
  says: RegExp[];
  /** Requests the target may receive at all (a case that stops before the phases sends no key). */
  maxRequests: number;
}

const CLI_CASES: CliCase[] = [
  {
    name: 'a self-signed target with NODE_TLS_REJECT_UNAUTHORIZED=0 in the environment is refused (exit 2) before anything is sent, naming the variable and INSECURE_TLS',
    server: { keyed: 'error-body', selfSigned: true },
    env: { NODE_TLS_REJECT_UNAUTHORIZED: '0' },
    code: EXIT.usage,
    withinMs: 20_000,
    says: [/NODE_TLS_REJECT_UNAUTHORIZED=0/, /INSECURE_TLS/],
    maxRequests: 0,
  },
  {
    name: 'a self-signed target is refused by the preflight (exit 3), with no key sent',
    server: { keyed: 'error-body', selfSigned: true },
    env: {},
    code: EXIT.unreachable,
    withinMs: 20_000,
    says: [/TLS certificate of 127\.0\.0\.1:\d+ not verified/],
    maxRequests: 0,
  },
  {
    name: 'a target trickling its headers one byte a second fails the preflight at its deadline (exit 3)',
    server: { keyed: 'trickle-headers', unkeyed: 'trickle-headers' },
    env: { REQUEST_TIMEOUT_MS: '1500' },
    code: EXIT.unreachable,
    withinMs: 20_000,
    says: [/no complete answer in time/],
    maxRequests: 1,
  },
  {
    name: 'a target answering the preflight with an endless body fails it at its deadline (exit 3)',
    server: { keyed: 'endless-body', unkeyed: 'endless-body' },
    env: { REQUEST_TIMEOUT_MS: '1500' },
    code: EXIT.unreachable,
    withinMs: 20_000,
    says: [/no complete answer in time/],
    maxRequests: 1,
  },
  {
    name: 'SIGTERM during a trickling preflight stops the run at once (exit 143), leaving no child',
    server: { keyed: 'trickle-headers', unkeyed: 'trickle-headers' },
    env: { REQUEST_TIMEOUT_MS: '10000' },
    sigtermAfterMs: 500,
    code: 143,
    withinMs: 20_000,
    says: [/SIGTERM/, /stopped by a signal during the preflight; no key was sent/],
    maxRequests: 1,
  },
  {
    name: 'SIGTERM while a keyed request hangs in a phase stops the run (exit 143), writes the reports of what ran, what did not end not certified, and leaves no child',
    server: { keyed: 'trickle-headers' },
    env: { REQUEST_TIMEOUT_MS: '60000', WORKERS: '1' },
    sigtermAfterMs: 200,
    sigtermOnKeyed: true,
    sigtermWithinMs: 20_000,
    code: 143,
    withinMs: 50_000,
    says: [/SIGTERM/, /verdict INTERRUPTED, exit 143/, /the run was stopped by SIGTERM before/],
    maxRequests: 100,
  },
];

for (const c of CLI_CASES) {
  test(`certify: ${c.name}`, async () => {
    test.setTimeout(60_000);
    const server = await startHostile(c.server);
    const dir = scratch('hostile-cli-');
    const reports = path.join(dir, 'reports');
    let signalled = 0;
    let poll: NodeJS.Timeout | undefined;
    try {
      const run = await runCli(
        ['certify', '--base-url', `${server.origin}/v1`, '--profile', 'readonly'],
        { API_KEY: `${KEY}\n`, RATE_LIMIT_KEY: RL_KEY, REPORTS_DIR: reports, ...c.env },
        {
          timeoutMs: c.withinMs + 10_000,
          onStart: (pid) => {
            if (c.sigtermAfterMs === undefined) return;
            poll = setInterval(() => {
              if ((c.sigtermOnKeyed ? server.keyed : server.requests) === 0 || signalled) return;
              signalled = Date.now() + c.sigtermAfterMs!;
              setTimeout(() => process.kill(pid, 'SIGTERM'), c.sigtermAfterMs);
            }, 50);
          },
        },
      );
      const output = run.stdout + run.stderr;
      expect(run.code, output).toBe(c.code);
      expect(run.ms, 'wall time').toBeLessThan(c.withinMs);
      if (signalled) expect(Date.now() - signalled, 'from SIGTERM to exit').toBeLessThan(c.sigtermWithinMs ?? 3000);
      for (const s of c.says) expect(output).toMatch(s);
      if (!c.sigtermOnKeyed) expect(server.keyed, 'requests carrying a key').toBe(0);
      else expect(fs.existsSync(path.join(reports, 'conformance.json')), 'the report of what ran').toBe(true);
      expect(server.requests).toBeLessThanOrEqual(c.maxRequests);
      expect(await run.groupEnds(), 'every process of the run has ended').toBe(true);
      expect(keyOccurrences(SECRETS, output, reports)).toEqual([]);
    } finally {
      clearInterval(poll);
      await server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

/** A phase of one spec through the suites' own fixtures, certified in-process (a real run: pacer, phases, merge, judge, scan). */
function workspace(spec: string): { dir: string; config: string; ledger: string; reports: string } {
  // Inside the repository (test-results/ is ignored) so that the config resolves @playwright/test.
  fs.mkdirSync(path.join(ROOT, 'test-results'), { recursive: true });
  const dir = fs.mkdtempSync(path.join(ROOT, 'test-results', 'hostile-'));
  fs.writeFileSync(path.join(dir, 'hostile.spec.ts'), spec);
  const config = path.join(dir, 'playwright.config.ts');
  // A test timeout far beyond the request deadline: only the deadline can end a hung request in time.
  fs.writeFileSync(
    config,
    `import { defineConfig } from '@playwright/test';
export default defineConfig({ testDir: '.', timeout: 120_000, reporter: [['list']], use: { trace: 'off' }, projects: [{ name: 'functional', testMatch: '*.spec.ts' }] });
`,
  );
  const ledger = path.join(dir, 'requirements.yaml');
  fs.writeFileSync(ledger, 'requirements:\n  - { id: INV-01, section: Inventory, quote: "List inventory", level: must }\n');
  return { dir, config, ledger, reports: path.join(dir, 'reports') };
}

const FIXTURES = JSON.stringify(path.join(ROOT, 'suites', 'fixtures.ts'));

const PHASE_CASES: { name: string; server: HostileOptions; code: number; status: 'fail' | 'skipped'; says: RegExp }[] = [
  {
    name: "an endless body to one keyed request, the list right after it answered at once, fails the requirement at REQUEST_TIMEOUT_MS (exit 1, the target's failure, not harness trouble)",
    server: { firstKeyed: 'endless-body', keyed: 'error-body' },
    code: EXIT.fail,
    status: 'fail',
    says: /no complete response within 1000 ms \(REQUEST_TIMEOUT_MS\); the list, asked for right after it with the same key, came back at once/,
  },
  {
    name: 'headers trickled to one keyed request, the list right after it answered at once, fail the requirement at REQUEST_TIMEOUT_MS (exit 1)',
    server: { firstKeyed: 'trickle-headers', keyed: 'error-body' },
    code: EXIT.fail,
    status: 'fail',
    says: /no complete response within 1000 ms \(REQUEST_TIMEOUT_MS\); the list, asked for right after it with the same key, came back at once/,
  },
  {
    name: 'an endless body to every keyed request leaves the requirement not certified: nothing tells it from a server too slow to answer any',
    server: { keyed: 'endless-body' },
    code: EXIT.pass,
    status: 'skipped',
    says: /no complete response within 1000 ms \(REQUEST_TIMEOUT_MS\), and the list, asked for right after it with the same key, got no answer either/,
  },
  {
    name: 'a target echoing a key given with a trailing newline, \\u-escaped, leaves no key on stdout or in any file (exit 1)',
    server: { keyed: 'echo-key' },
    code: EXIT.fail,
    status: 'fail',
    says: /INV-01/,
  },
];

for (const c of PHASE_CASES) {
  test(`certify: ${c.name}`, async () => {
    test.setTimeout(90_000);
    const server = await startHostile(c.server);
    const ws = workspace(`import { test } from ${FIXTURES};
test('INV-01 the list of a hostile target', async ({ api }) => {
  await api.inventory('INV-01');
});
`);
    let output = '';
    const started = Date.now();
    try {
      const { exitCode: code } = await runCertify({
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          BASE_URL: `${server.origin}/v1`,
          API_KEY: `${KEY}\n`,
          RATE_LIMIT_KEY: RL_KEY,
          REPORTS_DIR: ws.reports,
          REQUEST_TIMEOUT_MS: '1000',
          PHASE_TIMEOUT_S: '60',
          MAX_RETRY_AFTER_S: '2',
        },
        write: (t) => (output += t),
        configFile: ws.config,
        ledgerFile: ws.ledger,
        onlyPhases: ['functional'],
      });
      expect(code, output).toBe(c.code);
      expect(Date.now() - started, 'wall time').toBeLessThan(45_000);
      const report = JSON.parse(fs.readFileSync(path.join(ws.reports, 'conformance.json'), 'utf8'));
      const inv = report.requirements.find((r: { id: string }) => r.id === 'INV-01');
      expect(inv.status, JSON.stringify(inv)).toBe(c.status);
      expect(JSON.stringify(inv)).toMatch(c.says);
      expect(server.keyed).toBeGreaterThan(0);
      expect(keyOccurrences(SECRETS, output, ws.reports)).toEqual([]);
    } finally {
      await server.close();
      fs.rmSync(ws.dir, { recursive: true, force: true });
    }
  });
}
