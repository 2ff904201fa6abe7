import { test, expect } from '../test.ts';
import { startCaseTarget, type MatrixCase } from '../../faults/harness.ts';
import { startReferenceTarget, DEFAULT_REFERENCE_TARGET } from '../../certify/reference-target.ts';

// The matrix runs a fault whose evidence came out not certified once more on longer windows
// (faults/matrix.ts SECOND_RUN_WINDOW_MS): the window reaches the bundled reference server, never a
// deployment the case starts itself.
const rows: Array<{ what: string; c: MatrixCase; asked?: number; window: number }> = [
  { what: 'the bundled reference server, no window asked', c: { id: 'fault:a' }, window: DEFAULT_REFERENCE_TARGET.minuteWindowMs },
  { what: 'the bundled reference server, 20 s asked', c: { id: 'fault:a' }, asked: 20_000, window: 20_000 },
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
      expect(ahead, 'X-RateLimit-Reset minus the response Date, in seconds').toBeLessThanOrEqual(row.window / 1000);
    } finally {
      await t.close();
    }
  });
}
