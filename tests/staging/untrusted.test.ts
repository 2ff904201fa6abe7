/**
 * Against a certificate nothing trusts (the simulator's https without its private CA), certify
 * fails within seconds, before any key reaches the peer: the simulator sees no request at all.
 */
import { test, expect } from '../test.ts';
import { runStaging } from '../../faults/staging/run.ts';
import { conditionsOf } from '../../faults/staging/simulator.ts';
import { STAGING_ENV } from '../../faults/staging/settings.ts';

test('an untrusted certificate: certify fails fast and no request, with or without a key, reaches the peer', async () => {
  const started = Date.now();
  const o = await runStaging(conditionsOf(['tls']), { env: STAGING_ENV, untrusted: true, timeoutMs: 60_000 });
  expect(o.exitCode, `certify's exit status against an untrusted certificate\n${o.tail}`).not.toBe(0);
  expect(o.verdict, 'no passing verdict').not.toBe('pass');
  expect(o.retry.requests, 'requests that reached the peer, per key').toEqual({});
  expect(Date.now() - started, 'it fails within seconds').toBeLessThan(30_000);
  expect(o.tail).toMatch(/certificate|TLS|self[- ]signed|unable to verify/i);
});
