/**
 * A gateway's 429 met on RL-08's retry (spec, Errors, 429 row): a proxy answers the first request
 * on a key after the service's 429 with its own (HTML, no Retry-After, no X-RateLimit-*). RL-08
 * cannot tell the service's Retry-After from the gate: not certified; the gate's 429 fails what it
 * breaks (RL-01, RL-06, RL-09). A service whose retry meets its own 429 again still fails RL-08.
 */
import { test, expect } from '../test.ts';
import { cleanup, runCase, type MatrixCase } from '../../faults/harness.ts';
import { MATRIX_ENV, phasesFor, testsOption } from '../../faults/matrix.ts';
import { headers, type FaultHooks } from '../../faults/proxy.ts';
import { tokenOf } from '../../faults/lib.ts';
import { total } from '../../faults/retry-watch.ts';

/** RL-08's test alone, found by its id as the matrix finds a fault's tests (no line number to keep in step). */
const RL_08 = { phases: phasesFor(['RL-08']), ...testsOption(['RL-08']) };

/** The first request on a key after the service's 429 (one with X-RateLimit-*) answered by `answer`. */
function onRetry(answer: (res429: { headers: [string, string][] }) => { status: number; headers: [string, string][]; body: Buffer }) {
  return (): FaultHooks => {
    const refused = new Map<string, [string, string][]>();
    return {
      request(req) {
        const token = tokenOf(req);
        const hs = token ? refused.get(token) : undefined;
        if (!token || !hs) return req;
        refused.delete(token);
        return answer({ headers: hs });
      },
      response(res, req) {
        const token = tokenOf(req);
        if (token && res.status === 429 && headers.get(res.headers, 'x-ratelimit-limit') !== undefined) refused.set(token, res.headers);
        return res;
      },
    };
  };
}

const gatePage = () => ({
  status: 429,
  headers: [
    ['Content-Type', 'text/html'],
    ['Date', new Date().toUTCString()],
  ] as [string, string][],
  body: Buffer.from('<html><body><h1>429 Too Many Requests</h1></body></html>\n'),
});

test('RL-08 is not certified when its retry meets a gateway 429 without X-RateLimit-*, and that 429 fails RL-01, RL-06 and RL-09', async () => {
  test.setTimeout(150_000);
  const c = {
    kind: 'fault',
    name: 'gate-on-retry',
    id: 'gate-on-retry',
    ...RL_08,
    proxy: onRetry(gatePage),
  } as MatrixCase;
  const out = await runCase(c, { env: MATRIX_ENV, timeoutMs: 120_000 });
  try {
    const summary = `${out.verdict}; failing ${out.failing.join(', ')}; not certified ${JSON.stringify(out.notCertified)}\n${out.tail}`;
    expect([...out.failing].sort(), summary).toEqual(['RL-01', 'RL-06', 'RL-09']);
    expect(JSON.stringify(out.notCertified['RL-08'] ?? ''), summary).toMatch(/without any X-RateLimit-\* header/);
    expect(total(out.retry.early), summary).toBe(0);
  } finally {
    cleanup(out);
  }
});

test('RL-08 fails when its retry meets the service’s own 429 again (Retry-After too short)', async () => {
  test.setTimeout(150_000);
  const again = (res429: { headers: [string, string][] }) => ({
    ...gatePage(),
    headers: res429.headers,
    body: Buffer.from('{"code":"rate_limited","message":"Too many requests","status":429}'),
  });
  const c = {
    kind: 'fault',
    name: 'own-429-on-retry',
    id: 'own-429-on-retry',
    ...RL_08,
    proxy: onRetry(again),
    misleadsRetryAfter: true,
  } as MatrixCase;
  const out = await runCase(c, { env: MATRIX_ENV, timeoutMs: 120_000 });
  try {
    expect(out.failing, `${out.verdict}; failing ${out.failing.join(', ')}\n${out.tail}`).toEqual(['RL-08']);
  } finally {
    cleanup(out);
  }
});
