/**
 * A gateway's own limit before a conformant server (tests/frontdoor/haproxy.ts): Debian's HAProxy
 * answers 429 itself past 120 requests in 10 s from one address, with an HTML page, no
 * Retry-After and no X-RateLimit-*. certify through it (every phase, as a user runs it) fails on
 * the requirements that 429 breaks only, within 3 minutes, sends nothing on a key while a 429 is
 * pending (the fault proxy in front counts it, faults/retry-watch.ts), claims no ban and leaves
 * the store as it was. Without /usr/sbin/haproxy the test fails naming it.
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

test("behind HAProxy's per-source gate (429, HTML, no Retry-After, no X-RateLimit-*): certify fails on RL-06 and RL-01 only, within 3 minutes, nothing early, no ban claimed, the store restored", async ({}, testInfo) => {
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
      const report = JSON.parse(fs.readFileSync(path.join(out.reportsDir, 'conformance.json'), 'utf8')) as {
        pacing?: { key: string; suspectedBan?: boolean }[];
      };
      const summary = `verdict ${out.verdict} in ${Math.round(out.durationMs / 1000)} s; failing ${out.failing.join(', ')}; early ${JSON.stringify(out.retry.early)}; bans ${JSON.stringify(out.retry.bans)}\n${out.failing.map((id) => `  ${id}: ${out.reasons[id]}`).join('\n')}\n${out.tail}`;
      testInfo.annotations.push({ type: 'outcome', description: summary.slice(0, 4000) });
      console.log(summary.slice(0, 3000));
      expect(out.verdict, summary).toBe('fail');
      expect(out.durationMs, summary).toBeLessThan(RUN_LIMIT_MS);
      expect(
        out.failing.filter((id) => !BROKEN.includes(id)),
        summary,
      ).toEqual([]);
      expect(out.failing, summary).toEqual(expect.arrayContaining(['RL-06', 'RL-01']));
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
