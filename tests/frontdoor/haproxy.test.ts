/**
 * A gateway's own limit before a conformant server (tests/frontdoor/haproxy.ts): Debian's HAProxy
 * answers 429 itself past 120 requests in 10 s from one address, with an HTML page, no
 * Retry-After and no X-RateLimit-*. certify through it (every phase, as a user runs it) fails on
 * exactly the requirements that 429 breaks (spec, Limits rules 1 and 3: RL-01, RL-06, RL-09; its
 * body is not shown by the spec), each named with the response and a curl line; every check it
 * interrupted is not certified, never failed; within 3 minutes; nothing sent on a key while a 429
 * is pending (the fault proxy in front counts it, faults/retry-watch.ts); no ban claimed; the
 * store as it was and no pet named left changed. Without /usr/sbin/haproxy the test fails naming it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { test, expect } from '../test.ts';
import { cleanup, runCase, type MatrixCase } from '../../faults/harness.ts';
import { MATRIX_ENV } from '../../faults/matrix.ts';
import { total } from '../../faults/retry-watch.ts';
import { runInBackground } from '../background.ts';
import { HAPROXY, startGateway, type Gateway } from './haproxy.ts';

test.beforeAll(runInBackground);

/** What the gateway's 429 breaks by itself: Retry-After on a 429, the three headers on every response and on the 429. */
const BROKEN = ['RL-06', 'RL-01', 'RL-09'];
const RUN_LIMIT_MS = 180_000;

test("behind HAProxy's per-source gate (429, HTML, no Retry-After, no X-RateLimit-*): certify fails on RL-01, RL-06 and RL-09 only, within 3 minutes, nothing early, no ban claimed, the store restored", async ({}, testInfo) => {
  test.setTimeout(RUN_LIMIT_MS + 90_000);
  expect(fs.existsSync(HAPROXY), `Debian's haproxy at ${HAPROXY} (installed by .ci/run)`).toBe(true);
  let gateway: Gateway | undefined;
  try {
    gateway = await startGateway();
    const g = gateway;
    const before = await g.inventory();
    const c = { id: 'frontdoor:haproxy-gate', upstream: async () => g.target } as MatrixCase;
    // The matrix's short settings, without the user's own gate (LOAD_P99_MS, LOAD_MAX_ERROR_RATE): the spec sets no threshold.
    const { LOAD_P99_MS: _p99, LOAD_MAX_ERROR_RATE: _rate, ...env } = MATRIX_ENV;
    const out = await runCase(c, { env, timeoutMs: RUN_LIMIT_MS });
    try {
      const reportFile = path.join(out.reportsDir, 'conformance.json');
      const report = (fs.existsSync(reportFile) ? JSON.parse(fs.readFileSync(reportFile, 'utf8')) : {}) as {
        pacing?: { key: string; suspectedBan?: boolean }[];
        requirements?: { id: string }[];
      };
      const summary = `verdict ${out.verdict} in ${Math.round(out.durationMs / 1000)} s; failing ${out.failing.join(', ')}; early ${JSON.stringify(out.retry.early)}; bans ${JSON.stringify(out.retry.bans)}; problems ${out.problems.join(' | ') || 'none'}\n${out.failing.map((id) => `  ${id}: ${out.reasons[id]}`).join('\n')}\n${out.tail}`;
      testInfo.annotations.push({ type: 'outcome', description: summary.slice(0, 4000) });
      console.log(summary.slice(0, 3000));
      expect(fs.existsSync(reportFile), `certify wrote conformance.json\n${summary}`).toBe(true);
      expect(out.verdict, summary).toBe('fail');
      expect(out.durationMs, summary).toBeLessThan(RUN_LIMIT_MS);
      expect([...out.failing].sort(), summary).toEqual([...BROKEN].sort());
      // Each named with the gate's response and a line to reproduce it.
      for (const id of BROKEN)
        expect(JSON.stringify(report.requirements?.find((r) => r.id === id)), `${id} in conformance.json`).toMatch(
          /→ 429.*reproduce: curl -sS /,
        );
      // The checks the gate's 429s interrupted (LOAD-02 among them when its bursts met one) are not certified.
      expect(Object.keys(out.notCertified).length, summary).toBeGreaterThan(0);
      expect(
        out.problems.filter((p) => p.startsWith('target-left-changed')),
        'pets named left changed',
      ).toEqual([]);
      expect(total(out.retry.early), 'requests sent while a 429 was pending').toBe(0);
      expect(total(out.retry.bans), 'bans').toBe(0);
      expect(
        (report.pacing ?? []).filter((k) => k.suspectedBan).map((k) => k.key),
        'keys claimed banned',
      ).toEqual([]);
      expect(await g.inventory(), 'the store after the run').toBe(before);
    } finally {
      cleanup(out);
    }
  } finally {
    await gateway?.close();
  }
  expect(gateway?.process.exitCode !== null || gateway?.process.signalCode !== null, 'haproxy ended').toBe(true);
});
