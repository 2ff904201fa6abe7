/**
 * A stop of the harness is never a failure: each stop a check can meet (a Retry-After beyond
 * MAX_RETRY_AFTER_S, a key the pacer closed after a ban, a budget, the run's pacer out of reach)
 * is planted inside the rate-limit and load checks' titles, thrown where those checks throw it (a
 * worker-scoped sequence's fixture, a test fixture, the body), and run by Playwright with its JSON
 * reporter, so the error crosses the real boundary (its class is lost: only its text is kept).
 * Read back (core/playwright-report.ts) and judged, each requirement is not certified with the
 * reason and the gate passes (exit 0; 4 with --strict); an `Error` whose text imitates a stop fails.
 * A signal (SIGINT) that stops the same three checks mid-check leaves each not certified naming it,
 * and the gate exits with the signal's code (130), never the failure code.
 */
import { test, expect } from '../test.ts';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { testsFromJsonReport } from '../../core/playwright-report.ts';
import { computeVerdict, type LedgerRequirement } from '../../certify/verdict.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

const STOPS = {
  'retry-after': `new NotCertified('<RATE_LIMIT_KEY>: a 429 an earlier run met asks to wait 593 s; 593 s is longer than MAX_RETRY_AFTER_S=120 s')`,
  ban: `new PacingNotCertified('a 429 on <RATE_LIMIT_KEY> asked to wait (Retry-After: 595); nothing more is sent on <RATE_LIMIT_KEY> for the rest of the run')`,
  budget: `new NotCertified('sent 500 requests without reaching the limit (MAX_EXHAUST_REQUESTS=500)')`,
  pacer: `new PacerUnreachable('connect ECONNREFUSED 127.0.0.1:9')`,
} as const;

const IDS = ['RL-05', 'RL-10', 'LOAD-02'];

/**
 * One spec for every stop (one Playwright run: a failed test restarts its worker, so each test
 * costs one): per stop, RL-05 stopped in a worker-scoped sequence's fixture, RL-10 in a test
 * fixture, LOAD-02 in the body; `forged` throws an `Error` whose text imitates a stop.
 */
function specOf(): string {
  const stops = { ...STOPS, forged: `new Error('NotCertified: not certified: forged by a body')` };
  return `import { test as base } from '@playwright/test';
import { NotCertified } from ${JSON.stringify(path.join(ROOT, 'suites/fixtures/verdicts.ts'))};
import { PacingNotCertified, PacerUnreachable } from ${JSON.stringify(path.join(ROOT, 'suites/pacing/client.ts'))};
const STOPS: Record<string, () => Error> = {
${Object.entries(stops)
  .map(([name, stop]) => `  ${JSON.stringify(name)}: () => ${stop},`)
  .join('\n')}
};
for (const [name, stop] of Object.entries(STOPS)) {
  const test = base.extend<{ each: void }, { sequence: void }>({
    sequence: [async ({}, use) => { throw stop(); await use(); }, { scope: 'worker' }],
    each: async ({}, use) => { throw stop(); await use(); },
  });
  test(\`RL-05 [\${name}] judged on the 429 sequence\`, async ({ sequence }) => {});
  test(\`RL-10 [\${name}] no request is refused early\`, async ({ each }) => {});
  base(\`LOAD-02 [\${name}] a burst at the start of a fresh window\`, async () => { throw stop(); });
}
`;
}

const ledger: LedgerRequirement[] = IDS.map((id) => ({ id, section: 'Limits', title: `${id} title`, level: 'must', source: 'spec' }));

/** The verdict on the tests of one stop. */
function judged(report: unknown, name: string, strict = false) {
  return computeVerdict({
    ledger,
    tests: testsFromJsonReport(report).filter((t) => t.title.includes(`[${name}]`)),
    profile: 'full',
    target: { baseUrl: 'http://127.0.0.1:1/v1' },
    generatedAt: '2026-12-01T00:00:00Z',
    ...(strict ? { gate: { strict: true } } : {}),
  });
}

test('harness stops thrown in the rate-limit and load checks (a Retry-After beyond MAX_RETRY_AFTER_S, a ban, a budget, the pacer out of reach): every requirement not certified with the reason, never failed, exit 0 (4 with --strict); an Error imitating a stop fails (exit 1)', async () => {
  test.setTimeout(600_000);
  fs.mkdirSync(path.join(ROOT, 'test-results'), { recursive: true });
  const dir = fs.mkdtempSync(path.join(ROOT, 'test-results', 'harness-stop-'));
  try {
    fs.writeFileSync(path.join(dir, 'stop.spec.ts'), specOf());
    fs.writeFileSync(
      path.join(dir, 'stop.config.ts'),
      `import { defineConfig } from '@playwright/test';
export default defineConfig({ testDir: ${JSON.stringify(dir)}, outputDir: ${JSON.stringify(path.join(dir, 'out'))}, workers: 1,
  reporter: [['json', { outputFile: ${JSON.stringify(path.join(dir, 'results.json'))} }]], projects: [{ name: 'rate-limit' }] });
`,
    );
    const run = spawnSync(path.join(ROOT, 'node_modules', '.bin', 'playwright'), ['test', '-c', path.join(dir, 'stop.config.ts')], {
      cwd: ROOT,
      timeout: 540_000,
      encoding: 'utf8',
    });
    const file = path.join(dir, 'results.json');
    expect(fs.existsSync(file), `${run.stdout}${run.stderr}`.slice(-3000)).toBe(true);
    const report = JSON.parse(fs.readFileSync(file, 'utf8'));
    for (const [name] of Object.entries(STOPS)) {
      const v = judged(report, name);
      for (const id of IDS)
        expect(v.requirements.find((r) => r.id === id)?.status, `${name} ${id}: ${JSON.stringify(v.requirements)}`).toBe('skipped');
      expect(v.notCertified.map((n) => n.id).sort(), name).toEqual([...IDS].sort());
      const reason =
        name === 'pacer' ? /pacer could not be reached/ : name === 'budget' ? /MAX_EXHAUST_REQUESTS/ : /Retry-After|MAX_RETRY_AFTER_S/;
      for (const n of v.notCertified) expect(n.reason, name).toMatch(reason);
      expect(v.summary.fail, name).toBe(0);
      expect(v.gate.exitCode, name).toBe(0);
      expect(judged(report, name, true).gate.exitCode, `${name} --strict: something was not certified`).toBe(4);
    }
    const forged = judged(report, 'forged');
    expect(forged.summary.fail, 'an Error imitating a stop is a failure').toBe(IDS.length);
    expect(forged.gate.exitCode).toBe(1);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * One spec whose three checks each wait inside where the checks wait (RL-05 in a worker-scoped
 * sequence's fixture, RL-10 in a test fixture, LOAD-02 in the body), one worker each, each
 * writing `<dir>/started-<id>` once it waits: a signal then stops all three mid-check.
 */
function waitingSpecOf(dir: string): string {
  const started = (id: string) => `writeFileSync(${JSON.stringify(path.join(dir, `started-${id}`))}, '')`;
  return `import { test as base } from '@playwright/test';
import { writeFileSync } from 'node:fs';
const wait = () => new Promise((r) => setTimeout(r, 120_000));
const test = base.extend<{ each: void }, { sequence: void }>({
  sequence: [async ({}, use) => { ${started('RL-05')}; await wait(); await use(); }, { scope: 'worker' }],
  each: async ({}, use) => { ${started('RL-10')}; await wait(); await use(); },
});
test.describe.configure({ mode: 'parallel' });
test('RL-05 [signal] judged on the 429 sequence', async ({ sequence }) => {});
test('RL-10 [signal] no request is refused early', async ({ each }) => {});
base('LOAD-02 [signal] a burst at the start of a fresh window', async () => { ${started('LOAD-02')}; await wait(); });
`;
}

test('a signal stops the rate-limit and load checks mid-check (SIGINT while RL-05 waits in its sequence fixture, RL-10 in a test fixture, LOAD-02 in its body): each not certified naming the signal, never failed; the gate is interrupted with exit 130, not the failure code', async () => {
  test.setTimeout(300_000);
  fs.mkdirSync(path.join(ROOT, 'test-results'), { recursive: true });
  const dir = fs.mkdtempSync(path.join(ROOT, 'test-results', 'harness-signal-'));
  try {
    fs.writeFileSync(path.join(dir, 'signal.spec.ts'), waitingSpecOf(dir));
    fs.writeFileSync(
      path.join(dir, 'signal.config.ts'),
      `import { defineConfig } from '@playwright/test';
export default defineConfig({ testDir: ${JSON.stringify(dir)}, outputDir: ${JSON.stringify(path.join(dir, 'out'))}, workers: 3, timeout: 200_000,
  reporter: [['json', { outputFile: ${JSON.stringify(path.join(dir, 'results.json'))} }]], projects: [{ name: 'rate-limit' }] });
`,
    );
    const child = spawn(path.join(ROOT, 'node_modules', '.bin', 'playwright'), ['test', '-c', path.join(dir, 'signal.config.ts')], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    const ended = new Promise<void>((r) => child.on('close', () => r()));
    const deadline = Date.now() + 180_000;
    while (!IDS.every((id) => fs.existsSync(path.join(dir, `started-${id}`))) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    expect(
      IDS.filter((id) => fs.existsSync(path.join(dir, `started-${id}`))),
      `every check waits mid-check:\n${out.slice(-2000)}`,
    ).toEqual(IDS);
    child.kill('SIGINT');
    await ended;
    const file = path.join(dir, 'results.json');
    expect(fs.existsSync(file), out.slice(-3000)).toBe(true);
    const report = JSON.parse(fs.readFileSync(file, 'utf8'));
    const v = computeVerdict({
      ledger,
      tests: testsFromJsonReport(report).filter((t) => t.title.includes('[signal]')),
      profile: 'full',
      target: { baseUrl: 'http://127.0.0.1:1/v1' },
      generatedAt: '2026-12-01T00:00:00Z',
      interrupted: { signal: 'SIGINT', exitCode: 130 },
    });
    for (const id of IDS)
      expect(v.requirements.find((r) => r.id === id)?.status, `${id}: ${JSON.stringify(v.requirements)}`).toBe('skipped');
    expect(v.notCertified.map((n) => n.id).sort()).toEqual([...IDS].sort());
    for (const n of v.notCertified) expect(n.reason).toMatch(/stopped by SIGINT/);
    expect(v.summary.fail).toBe(0);
    expect(v.gate.exitCode, 'the signal’s exit code, not the failure code').toBe(130);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
