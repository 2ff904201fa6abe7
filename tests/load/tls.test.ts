/**
 * TLS on every load request (Transport: verify TLS on every request): the load engine and the
 * checks' single requests refuse a certificate nothing trusts before any request carrying the key
 * is written; a certificate signed by a private CA works when the CA is given (the `ca` option, or
 * `NODE_EXTRA_CA_CERTS` in a fresh process); `INSECURE_TLS` is the user's explicit opt-in and the
 * figures then say the certificate was not verified.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test, expect } from '../test.ts';
import { runLoad, sendOne, type LoadRunOptions } from '../../suites/load/engine.ts';
import { runCapacityCheck } from '../../suites/load/capacity-check.ts';
import { runOverloadCheck } from '../../suites/load/overload-check.ts';
import { fakeApi, inventoryHandler, pacerPerTest, TLS } from './helpers.ts';

const KEY = 'tls-secret-key-8d1e2f';
const pacer = pacerPerTest();
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function burst(url: string, extra: Partial<LoadRunOptions> = {}): LoadRunOptions {
  return {
    label: 'tls',
    url,
    steps: [{ name: 'GET /v1/inventory', path: '/v1/inventory' }],
    authorization: `Bearer ${KEY}`,
    model: { kind: 'burst', count: 20 },
    connections: 4,
    maxRequests: 20,
    maxDurationS: 10,
    progress: () => undefined,
    ...extra,
  };
}

test('an untrusted certificate is refused: the load stops at once and no request carrying the key reaches the server', async () => {
  const api = await fakeApi(inventoryHandler(), TLS.untrusted());
  try {
    const r = await runLoad(burst(api.baseUrl));
    expect(r.figures.stoppedBy).toBe('tls');
    expect(r.tlsError).toMatch(/self-signed|SELF_SIGNED|certificate/i);
    expect(r.figures.requests).toBe(0);
    expect(r.figures.sent).toBeLessThanOrEqual(4);
    // A certificate signed by the private CA, without that CA given, is refused the same way.
    const signed = await fakeApi(inventoryHandler(), TLS.server());
    try {
      const s = await runLoad(burst(signed.baseUrl));
      expect(s.figures.stoppedBy).toBe('tls');
      expect(s.tlsError).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|unable to verify|certificate/i);
      expect(signed.authorizations).toEqual([]);
      expect(signed.counts).toEqual({});
    } finally {
      await signed.close();
    }
    expect(api.authorizations).toEqual([]);
    expect(api.counts).toEqual({});
    expect(api.tlsFailures).toBeGreaterThan(0);
  } finally {
    await api.close();
  }
});

test('NODE_TLS_REJECT_UNAUTHORIZED=0 changes nothing: the engine still refuses an untrusted certificate before the key leaves', async () => {
  const api = await fakeApi(inventoryHandler(), TLS.untrusted());
  const before = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
  try {
    const r = await runLoad(burst(api.baseUrl));
    expect(r.figures.stoppedBy).toBe('tls');
    expect(r.figures.requests).toBe(0);
    expect(api.authorizations).toEqual([]);
    expect(api.counts).toEqual({});
  } finally {
    if (before === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    else process.env.NODE_TLS_REJECT_UNAUTHORIZED = before;
    await api.close();
  }
});

test('both load checks fail against an untrusted certificate before any key leaves the machine', async () => {
  const api = await fakeApi(inventoryHandler(), TLS.untrusted());
  try {
    const capacity = await runCapacityCheck({
      baseUrl: api.baseUrl,
      loadKey: KEY,
      mode: 'mix',
      durationS: 1,
      ratePerS: 50,
      connections: 4,
      maxRequests: 100,
      timeoutS: 5,
      loopbackOnly: true,
      maxRetryAfterS: 5,
      pacer: pacer(),
      progress: () => undefined,
    });
    expect(capacity.findings).toEqual([
      expect.objectContaining({ id: 'LOAD-01', level: 'fail', message: expect.stringContaining('TLS certificate was refused') }),
    ]);
    expect(capacity.figures.requests.load).toBe(0);
    const overload = await runOverloadCheck({
      baseUrl: api.baseUrl,
      rateLimitKey: KEY,
      windows: 1,
      burstMax: 100,
      burstConnections: 10,
      maxRetryAfterS: 5,
      timeoutS: 5,
      loopbackOnly: true,
      pacer: pacer(),
      progress: () => undefined,
    });
    expect(overload.findings.filter((f) => f.level === 'fail')).toEqual([
      expect.objectContaining({ id: 'LOAD-02', part: 'refusals', message: expect.stringContaining('TLS certificate was refused') }),
    ]);
    expect(overload.figures.bursts).toEqual([]);
    expect(api.authorizations).toEqual([]);
    expect(api.counts).toEqual({});
  } finally {
    await api.close();
  }
});

test('a private CA given as the ca option is trusted: the load runs verified', async () => {
  const api = await fakeApi(inventoryHandler(), TLS.server());
  try {
    const r = await runLoad(burst(api.baseUrl, { tls: { ca: TLS.ca() } }));
    expect(r.figures.statusCodes).toEqual({ 200: 20 });
    expect(r.figures.tls).toBe('verified');
    const one = await sendOne({ url: `${api.baseUrl}/inventory`, authorization: `Bearer ${KEY}`, timeoutS: 5, tls: { ca: TLS.ca() } });
    expect(one.ok && one.status).toBe(200);
  } finally {
    await api.close();
  }
});

test('NODE_EXTRA_CA_CERTS makes a private CA trusted in a fresh process', async () => {
  const api = await fakeApi(inventoryHandler(), TLS.server());
  try {
    const script = `
      import { runLoad } from './suites/load/engine.ts';
      const r = await runLoad({ label: 'ca', url: process.argv[1], steps: [{ name: 'GET', path: '/v1/inventory' }], authorization: 'Bearer ${KEY}',
        model: { kind: 'burst', count: 5 }, connections: 5, maxRequests: 5, maxDurationS: 10, progress: () => undefined });
      console.log(JSON.stringify({ codes: r.figures.statusCodes, tls: r.figures.tls, error: r.tlsError ?? null }));`;
    // The server runs in this process: the child must be waited for without blocking it.
    const run = async (env: Record<string, string>) => {
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, api.baseUrl], {
        cwd: ROOT,
        env: { ...process.env, ...env },
      });
      let out = '';
      child.stdout.on('data', (c) => (out += c));
      await new Promise((resolve) => child.on('exit', resolve));
      return JSON.parse(out.trim().split('\n').at(-1) ?? 'null') as { codes: Record<string, number>; tls: string; error: string | null };
    };
    expect(await run({ NODE_EXTRA_CA_CERTS: TLS.caFile })).toEqual({ codes: { 200: 5 }, tls: 'verified', error: null });
    expect((await run({ NODE_EXTRA_CA_CERTS: '' })).error).toMatch(/certificate|UNABLE_TO_VERIFY/i);
  } finally {
    await api.close();
  }
});

test('INSECURE_TLS (the explicit opt-in) runs against an untrusted certificate, and the figures and findings say so', async () => {
  const api = await fakeApi(inventoryHandler(), TLS.untrusted());
  try {
    const r = await runLoad(burst(api.baseUrl, { tls: { insecure: true } }));
    expect(r.figures.statusCodes).toEqual({ 200: 20 });
    expect(r.figures.tls).toBe('not verified');
    const capacity = await runCapacityCheck({
      baseUrl: api.baseUrl,
      loadKey: KEY,
      mode: 'list',
      durationS: 0.5,
      ratePerS: 40,
      connections: 4,
      maxRequests: 100,
      timeoutS: 5,
      loopbackOnly: true,
      tls: { insecure: true },
      maxRetryAfterS: 5,
      pacer: pacer(),
      progress: () => undefined,
    });
    expect(capacity.findings).toEqual([
      expect.objectContaining({
        level: 'note',
        message: "the target's TLS certificate was not verified",
        observed: expect.stringContaining('INSECURE_TLS=1'),
      }),
    ]);
    expect(capacity.figures.load?.tls).toBe('not verified');
  } finally {
    await api.close();
  }
});
