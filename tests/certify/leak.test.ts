import { test, expect } from '../test.ts';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { runCertify } from '../../certify/run.ts';
import { describeFinding, listFiles, scanPaths } from '../../certify/secret-scan.ts';

/**
 * Deliberately failing requests made with the key must leave no key in any artifact.
 * A hostile server answers 401 and echoes the Authorization header back (body and a header).
 * - through the suites' fixtures (`suites/fixtures.ts`): no key anywhere, and no leak recorded;
 * - through Playwright's own `request` + `toBeOK()` (whose call log lists request headers): the
 *   reports stay clean (certify's redacting reporter), and the key the worker itself wrote to
 *   `error-context.md` is caught and fails the run, naming the file.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const KEY = 'ik_leaktest_7d2e9b41c0a85f36e1';
const RL_KEY = 'ik_leaktest_rl_0a9b8c7d6e5f4a3b';
const LOAD_KEY = 'ik_leaktest_load_1122334455667788';

function startHostileServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    const auth = req.headers.authorization ?? '';
    res.setHeader('content-type', 'application/json');
    res.setHeader('x-echo-authorization', auth);
    res.statusCode = 401;
    res.end(JSON.stringify({ code: 'unauthorized', message: `you sent ${auth} (${Buffer.from(auth).toString('base64')})`, status: 401 }));
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) });
    });
  });
}

function workspace(specs: Record<string, string>): { dir: string; config: string; ledger: string; reports: string } {
  // Inside the repository (test-results/ is ignored) so that the config resolves @playwright/test.
  fs.mkdirSync(path.join(ROOT, 'test-results'), { recursive: true });
  const dir = fs.mkdtempSync(path.join(ROOT, 'test-results', 'certify-leak-'));
  for (const [name, content] of Object.entries(specs)) fs.writeFileSync(path.join(dir, name), content);
  const config = path.join(dir, 'playwright.config.ts');
  fs.writeFileSync(
    config,
    `import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: '.',
  reporter: [['list']],
  use: { trace: 'off' },
  projects: [
    { name: 'functional', testMatch: '*.spec.ts' },
  ],
});
`,
  );
  const ledger = path.join(dir, 'requirements.yaml');
  fs.writeFileSync(
    ledger,
    `requirements:
  - { id: AUTH-01, section: Authentication, quote: "Bearer scheme", level: must }
  - { id: MSG-01, section: Messages, quote: "Send message", level: must }
`,
  );
  return { dir, config, ledger, reports: path.join(dir, 'reports') };
}

async function certify(ws: ReturnType<typeof workspace>, baseUrl: string) {
  let output = '';
  const { exitCode: code } = await runCertify({
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      BASE_URL: `${baseUrl}/v1`,
      API_URL: 'http://127.0.0.1:1/quickstart',
      API_KEY: KEY,
      RATE_LIMIT_KEY: RL_KEY,
      LOAD_KEY,
      REPORTS_DIR: ws.reports,
      MAX_RETRY_AFTER_S: '2',
    },
    write: (t) => (output += t),
    configFile: ws.config,
    ledgerFile: ws.ledger,
    onlyPhases: ['functional'],
  });
  const report = JSON.parse(fs.readFileSync(path.join(ws.reports, 'conformance.json'), 'utf8'));
  return { code, output, report };
}

function assertNoKeyAnywhere(reports: string, output: string) {
  const secrets = [
    { name: 'API_KEY', value: KEY },
    { name: 'RATE_LIMIT_KEY', value: RL_KEY },
    { name: 'LOAD_KEY', value: LOAD_KEY },
  ];
  const scan = scanPaths([reports], secrets, reports);
  expect(scan.filesScanned).toBeGreaterThan(3);
  expect(scan.findings.map(describeFinding), 'no key in any file the run wrote').toEqual([]);
  expect(scan.unscannable).toEqual([]);
  expect(output.includes(KEY), 'no key in the console output').toBe(false);
}

test("a deliberately failing request through the suites' fixtures leaves no key in any artifact", async () => {
  test.setTimeout(240_000);
  const server = await startHostileServer();
  const fixtures = path.join(ROOT, 'suites', 'fixtures.ts');
  const ws = workspace({
    'fixture-fail.spec.ts': `import { test, expectStatus, expectErrorBody } from ${JSON.stringify(fixtures)};
test('AUTH-01 a valid key is refused (deliberate failure)', async ({ api }) => {
  const res = await api.listInventory();
  expectStatus(res, 200);
});
test('AUTH-01 the echoed key is judged (deliberate failure)', async ({ api }) => {
  const res = await api.listInventory();
  throw new Error('AUTH-01: body was ' + res.text + ' header ' + res.header('x-echo-authorization'));
});
test('MSG-01 an unreachable server (deliberate failure)', async ({ api }) => {
  await api.sendMessage({ message: 'hello' });
});
`,
  });
  try {
    const { code, output, report } = await certify(ws, server.url);
    expect(code).toBe(1);
    expect(report.verdict).toBe('fail');
    const auth = report.requirements.find((r: { id: string }) => r.id === 'AUTH-01');
    expect(auth.status).toBe('fail');
    expect(JSON.stringify(auth.evidence)).toContain('observed status 401');
    const msg = report.requirements.find((r: { id: string }) => r.id === 'MSG-01');
    expect(msg.status).toBe('fail');
    expect(JSON.stringify(msg.evidence)).toContain('request failed');
    // The fixtures redact at the source: certify had nothing to scrub from a file.
    expect(report.problems.filter((p: { reason: string }) => p.reason.includes('written there by the Playwright worker'))).toEqual([]);
    expect(listFiles(path.join(ws.reports, 'html')).length).toBeGreaterThan(0);
    // The exchanges the hostile server echoed the key in are in evidence.har, redacted like every report.
    const har = JSON.parse(fs.readFileSync(path.join(ws.reports, 'evidence.har'), 'utf8')) as {
      log: { entries: { _requirements: string[]; request: { headers: { name: string; value: string }[] } }[] };
    };
    expect(har.log.entries.filter((e) => e._requirements.includes('AUTH-01')).length).toBeGreaterThan(0);
    expect(har.log.entries.flatMap((e) => e.request.headers).find((h) => h.name === 'authorization')?.value).toBe('Bearer <API_KEY>');
    assertNoKeyAnywhere(ws.reports, output);
  } finally {
    await server.close();
    fs.rmSync(ws.dir, { recursive: true, force: true });
  }
});

test("Playwright's own request call log (request headers) is kept out of every report, and the worker's own write is caught", async () => {
  test.setTimeout(240_000);
  const server = await startHostileServer();
  const ws = workspace({
    'raw-request.spec.ts': `import { test, expect } from '@playwright/test';
test('AUTH-01 toBeOK with the key in the call log (deliberate failure)', async ({ request }) => {
  const res = await request.get(process.env.BASE_URL + '/inventory', { headers: { Authorization: 'Bearer ' + process.env.API_KEY } });
  await expect(res).toBeOK();
});
test('MSG-01 a refused connection with the key in the call log (deliberate failure)', async ({ request }) => {
  await request.post(process.env.API_URL + '/messages', { headers: { Authorization: 'Bearer ' + process.env.API_KEY }, data: { message: 'x' } });
});
`,
  });
  try {
    const { code, output, report } = await certify(ws, server.url);
    expect(code).toBe(5); // a key found in a file the run wrote is harness trouble (core/exit-codes.ts)
    const leaks = report.problems.filter((p: { reason: string }) => p.reason.includes('written there by the Playwright worker'));
    expect(leaks.length, JSON.stringify(report.problems)).toBe(2);
    expect(leaks[0].reason).toContain('error-context.md');
    for (const p of report.problems) expect(JSON.stringify(p).includes(KEY), 'a problem shows no key').toBe(false);
    // The failure messages still say what failed, without the key.
    const auth = report.requirements.find((r: { id: string }) => r.id === 'AUTH-01');
    expect(JSON.stringify(auth.evidence)).toContain('toBeOK');
    expect(JSON.stringify(auth.evidence)).toContain('<API_KEY>');
    assertNoKeyAnywhere(ws.reports, output);
  } finally {
    await server.close();
    fs.rmSync(ws.dir, { recursive: true, force: true });
  }
});

test('a key that reaches a file anyway (a test writing it, a test printing it) is found by the scan and fails the run, named by file', async () => {
  test.setTimeout(240_000);
  const server = await startHostileServer();
  const ws = workspace({
    'careless.spec.ts': `import fs from 'node:fs';
import { test } from '@playwright/test';
test('AUTH-01 a careless test (passes, but leaks)', async ({}, testInfo) => {
  fs.writeFileSync(testInfo.outputPath('debug.txt'), 'Authorization: Bearer ' + process.env.API_KEY);
  console.log('debug: ' + Buffer.from('Bearer ' + process.env.RATE_LIMIT_KEY).toString('base64'));
});
test('MSG-01 passes', async () => {});
`,
  });
  try {
    const { code, output, report } = await certify(ws, server.url);
    // Harness trouble (exit 5): the run's own files held a key, whatever the requirements say.
    expect(code).toBe(5);
    expect(report.verdict).toBe('harness');
    expect(report.requirements.map((r: { status: string }) => r.status)).toEqual(['pass', 'pass']);
    const found = report.problems.filter((p: { kind: string }) => p.kind === 'secret-in-artifact').map((p: { reason: string }) => p.reason);
    expect(
      found.some((p: string) => /test-results\/.*debug\.txt: API_KEY \(raw\)/.test(p)),
      found.join('\n'),
    ).toBe(true);
    expect(
      found.some((p: string) => p.includes('RATE_LIMIT_KEY (base64')),
      found.join('\n'),
    ).toBe(true);
    expect(output).toMatch(/secret scan of \d+ files: \d+ finding\(s\)/);
    for (const p of report.problems) expect(JSON.stringify(p).includes(KEY), 'a problem shows no key').toBe(false);
    expect(
      output.includes(KEY) || output.includes(RL_KEY) || output.includes(Buffer.from(`Bearer ${RL_KEY}`).toString('base64')),
      'the console shows no key',
    ).toBe(false);
    const md = fs.readFileSync(path.join(ws.reports, 'conformance.md'), 'utf8');
    expect(md).toContain('## Run problems');
    expect(md).toContain('debug.txt: API_KEY (raw)');
    // Nothing is left on disk for CI to upload: a text file is scrubbed, an archive removed.
    expect(
      found.some((p: string) => /debug\.txt: API_KEY \(raw\) — scrubbed in place$/.test(p)),
      found.join('\n'),
    ).toBe(true);
    expect(
      found.some((p: string) => / — file removed$/.test(p)),
      found.join('\n'),
    ).toBe(true);
    assertNoKeyAnywhere(ws.reports, output);
  } finally {
    await server.close();
    fs.rmSync(ws.dir, { recursive: true, force: true });
  }
});
