/**
 * A front door's own 429 inside the overload check's bursts (suites/load/outside-plan.ts): a 429
 * without any X-RateLimit-* header is another limit than the key's, so LOAD-02 is not certified,
 * never failed, and what that 429 breaks by itself (RL-06, RL-01, RL-09) is named with a curl line.
 * The key's own 429 (any X-RateLimit-* present) stays LOAD-02's to judge.
 */
import { test, expect } from '../test.ts';
import { startReferenceServer } from '../../reference-server/app.ts';
import { formatFinding } from '../../core/finding.ts';
import { runOverloadCheck } from '../../suites/load/overload-check.ts';
import { outsidePlan } from '../../suites/load/outside-plan.ts';
import { pacerPerTest, RecordingStore } from './helpers.ts';
import { startFaultProxy, type FaultHooks } from '../../faults/proxy.ts';
import { tokenOf } from '../../faults/lib.ts';

const pacer = pacerPerTest();
const PAGE = Buffer.from('<html><body><h1>429 Too Many Requests</h1></body></html>');

async function throughGate(hooks: (key: string) => FaultHooks, timeoutS = 10) {
  const server = await startReferenceServer({
    port: 0,
    minuteWindowMs: 3000,
    banMs: 600_000,
    banThreshold: 1000,
    store: new RecordingStore(),
  });
  const proxy = await startFaultProxy({ upstream: server.baseUrl.replace(/\/v1\/?$/, ''), fault: hooks(server.keys.free) });
  try {
    return await runOverloadCheck({
      baseUrl: `${proxy.url.replace(/\/$/, '')}/v1`,
      rateLimitKey: server.keys.free,
      windows: 1,
      burstMax: 1001,
      burstConnections: 500,
      maxRetryAfterS: 20,
      timeoutS,
      loopbackOnly: true,
      pacer: pacer(),
      progress: () => undefined,
    });
  } finally {
    await proxy.close();
    await server.close();
  }
}

test('outsidePlan: a 429 with none of the three X-RateLimit-* headers; a 429 with any of them is the key limiter’s', () => {
  expect(outsidePlan({ status: 429, headers: { 'content-type': 'text/html' } })).toBe(true);
  expect(outsidePlan({ status: 429, headers: { 'x-ratelimit-remaining': '0' } })).toBe(false);
  expect(outsidePlan({ status: 200, headers: {} })).toBe(false);
});

test("a gateway's own 429 (HTML, no Retry-After, no X-RateLimit-*) inside a burst leaves LOAD-02 not certified and names RL-06, RL-01 and RL-09 with a curl line", async () => {
  const outcome = await throughGate((key) => {
    // Past the probe, every third request of the key is the gate's.
    let n = 0;
    return {
      request: (req) => {
        if (tokenOf(req) !== key || ++n < 3 || n % 3) return req;
        return { status: 429, headers: [['content-type', 'text/html']], body: PAGE };
      },
    };
  });
  const text = outcome.findings.map(formatFinding).join('\n');
  const load = outcome.findings.filter((f) => f.id === 'LOAD-02');
  expect(
    load.filter((f) => f.level === 'fail'),
    text,
  ).toEqual([]);
  expect(load.find((f) => f.level === 'not-certified')?.message, text).toMatch(
    /carried none of the X-RateLimit-\* headers \(an answerer without a Server header, an HTML body\)/,
  );
  const broken = outcome.findings.filter((f) => f.id !== 'LOAD-02' && f.id !== 'LOAD-03');
  expect(broken.map((f) => f.id).sort(), text).toEqual(['RL-01', 'RL-06', 'RL-09']);
  for (const f of broken) {
    expect(f.level).toBe('fail');
    expect(f.message).toMatch(/GET \/v1\/inventory → 429/);
    expect(f.curl).toMatch(/^curl -sS -i -H 'Authorization: Bearer \$RATE_LIMIT_KEY' 'http:\/\/127\.0\.0\.1:\d+\/v1\/inventory'$/);
  }
});
