import fs from 'node:fs';
import { test, expect } from '../test.ts';
import { spawnCertify, startCaseTarget, type MatrixCase } from '../../faults/harness.ts';
import { startReferenceTarget } from '../../certify/reference-target.ts';
import { CASE_WINDOW_MS } from '../../faults/reference.ts';

// The matrix runs a fault whose evidence came out not certified once more on longer windows
// (SECOND_RUN_WINDOW_MS of faults/harness.ts): the window reaches the bundled reference server, never a
// deployment the case starts itself.
const rows: Array<{ what: string; c: MatrixCase; asked?: number; window: number }> = [
  { what: "a case's reference server, no window asked", c: { id: 'fault:a' }, window: CASE_WINDOW_MS },
  { what: "a case's reference server, 20 s asked", c: { id: 'fault:a' }, asked: 20_000, window: 20_000 },
  {
    what: 'a deployment of its own, 20 s asked',
    c: { id: 'fault:b', upstream: () => startReferenceTarget({ minuteWindowMs: 7_000 }) },
    asked: 20_000,
    window: 7_000,
  },
];

for (const row of rows) {
  test(`startCaseTarget: ${row.what} → a ${row.window / 1000}-s window behind the proxy`, async () => {
    const t = await startCaseTarget(row.c, row.asked ? { minuteWindowMs: row.asked } : {});
    try {
      expect(t.target.settings.minuteWindowMs).toBe(row.window);
      const res = await fetch(`${t.proxy.url.replace(/\/$/, '')}/v1/inventory`, {
        headers: { Authorization: `Bearer ${t.target.env.RATE_LIMIT_KEY}` },
      });
      expect(res.status).toBe(200);
      // The reference server's windows are aligned to the clock: Reset ends one, within a window of the Date.
      const reset = Number(res.headers.get('x-ratelimit-reset'));
      const ahead = reset - Math.floor(Date.parse(res.headers.get('date') ?? '') / 1000);
      expect(reset % (row.window / 1000), `X-RateLimit-Reset ${reset} is a multiple of ${row.window / 1000} s`).toBe(0);
      // (+1: a Date written in the second before the window began, as a busy server may.)
      expect(ahead, 'X-RateLimit-Reset minus the response Date, in seconds').toBeLessThanOrEqual(row.window / 1000 + 1);
    } finally {
      await t.close();
    }
  });
}

test('spawnCertify: a run called off gets SIGINT, as from Ctrl-C, and its output says so', async ({}, testInfo) => {
  const stop = new AbortController();
  const ready = testInfo.outputPath('ready');
  const script = `process.on('SIGINT', () => { console.log('SIGINT: restoring'); process.exit(130); }); require('node:fs').writeFileSync(${JSON.stringify(ready)}, ''); setInterval(() => {}, 1000);`;
  const run = spawnCertify(['-e', script], { PATH: process.env.PATH }, 60_000, stop.signal);
  await expect.poll(() => fs.existsSync(ready), { timeout: 20_000 }).toBe(true);
  const t0 = Date.now();
  stop.abort();
  const { code, output } = await run;
  expect(code).toBe(130);
  expect(output).toContain('SIGINT: restoring');
  expect(output).toContain('[matrix] certify was called off: stopped');
  expect(Date.now() - t0).toBeLessThan(5_000);
});
