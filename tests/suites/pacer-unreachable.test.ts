/**
 * A run's pacer that cannot be reached is a limit of the harness, never the server's failure
 * (suites/fixtures/verdicts.ts, the `pacing` fixture): every check that needs it, to send, to read
 * a record made once per run (`oncePerRun`) or to lease a pet, ends not certified with the reason,
 * and nothing is sent. The phase runs as certify runs it, with its pacer's address pointing at a
 * port that drops every connection at once. The port stays held by this test: a port closed here
 * could be taken by another test's server meanwhile, and its answers are not "unreachable".
 */
import fs from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test, expect } from '../test.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PLAYWRIGHT = fileURLToPath(new URL('../../node_modules/@playwright/test/cli.js', import.meta.url));

interface Listed {
  title: string;
  status: string;
  /** The error of a test that failed, for the message. */
  error?: string;
  annotations: { type: string; description?: string }[];
}

/** The tests of a Playwright JSON report, with their last result's status and their annotations. */
function testsOf(report: { suites?: unknown[] }): Listed[] {
  const out: Listed[] = [];
  const walk = (s: { specs?: unknown[]; suites?: unknown[] }) => {
    for (const spec of (s.specs ?? []) as {
      title: string;
      tests: {
        results: { status: string; error?: { message?: string }; annotations?: Listed['annotations'] }[];
        annotations?: Listed['annotations'];
      }[];
    }[])
      for (const t of spec.tests) {
        const last = t.results.at(-1);
        out.push({
          title: spec.title,
          status: last?.status ?? 'none',
          ...(last?.error?.message ? { error: last.error.message.slice(0, 500) } : {}),
          annotations: [...(t.annotations ?? []), ...(last?.annotations ?? [])],
        });
      }
    for (const c of (s.suites ?? []) as (typeof s)[]) walk(c);
  };
  walk(report as { suites?: unknown[] });
  return out;
}

/** What holds the pacer's address: each time, no run's pacer answers there. */
const NOT_THE_PACER: { name: string; start: () => net.Server }[] = [
  { name: 'every connection dropped at once', start: () => net.createServer((socket) => socket.destroy()) },
  {
    name: 'another HTTP server, answering 404',
    start: () => http.createServer((_req, res) => res.writeHead(404, { 'content-type': 'application/json' }).end('{"code":"not_found"}')),
  },
  { name: 'another HTTP server, answering 200 with HTML', start: () => http.createServer((_req, res) => res.end('<html></html>')) },
];

for (const pacer of NOT_THE_PACER)
  test(`a pacer out of reach (${pacer.name}) leaves RL-04 and RL-11 (a record made once per run) not certified, never failed, and nothing is sent`, async () => {
    test.setTimeout(120_000);
    let arrivals = 0;
    const server = http.createServer((_req, res) => {
      arrivals++;
      res.writeHead(500).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const atPacerAddress = pacer.start();
    await new Promise<void>((r) => atPacerAddress.listen(0, '127.0.0.1', r));
    const pacerUrl = `http://127.0.0.1:${(atPacerAddress.address() as AddressInfo).port}`;
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const reportFile = test.info().outputPath('report.json');
    try {
      const env: Record<string, string | undefined> = {
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TEST_|PW_|PLAYWRIGHT_|CERTIFY_)/.test(k))),
        BASE_URL: `${base}/v1`,
        API_URL: `${base}/quickstart`,
        API_KEY: 'pacer-unreachable-api-key-0123456789',
        RATE_LIMIT_KEY: 'pacer-unreachable-rl-key-0123456789',
        CONFORMANCE_PACER_URL: pacerUrl,
        REPORTS_DIR: test.info().outputPath('reports'),
        PLAYWRIGHT_JSON_OUTPUT_FILE: reportFile,
      };
      const code = await new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, [PLAYWRIGHT, 'test', '--project', 'functional', '--reporter', 'json', '-g', 'RL-04|RL-11'], {
          cwd: ROOT,
          env,
          stdio: 'ignore',
        });
        child.on('exit', (c) => resolve(c));
      });
      const tests = testsOf(JSON.parse(fs.readFileSync(reportFile, 'utf8')));
      expect(tests.map((t) => t.title.split(' ')[0]).sort(), 'the checks selected').toEqual(['RL-04', 'RL-04', 'RL-11']);
      for (const t of tests) {
        const why = t.annotations.find((a) => a.type === 'not-certified')?.description ?? '';
        expect({ title: t.title, status: t.status }, `${t.title}: not certified, not failed${t.error ? ` (${t.error})` : ''}`).toEqual({
          title: t.title,
          status: 'skipped',
        });
        expect(why, `${t.title}: the reason names the pacer`).toMatch(/the run's pacer could not be reached/);
      }
      expect(code, 'the phase exits 0: nothing failed').toBe(0);
      expect(arrivals, 'requests that reached the server').toBe(0);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
      await new Promise<void>((r) => atPacerAddress.close(() => r()));
    }
  });
