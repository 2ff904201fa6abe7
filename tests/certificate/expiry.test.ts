/**
 * Certificates that expire: the certificate records when it was issued and when it stops being
 * valid (CONFORMANCE_VALID_DAYS, 90 days by default), both covered by its digest and signature;
 * `verify` refuses it afterwards unless given --accept-expired. Every clock here is fixed.
 */
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { test, expect } from './scratch.ts';
import { checkExpiry } from '../../certify/certificate/verify.ts';
import { verifyCertificate, writeCertificate } from '../../certify/certificate/index.ts';
import { digestOf } from '../../certify/certificate/digest.ts';
import { certificateDigest } from '../../certify/certificate/build.ts';
import type { Certificate } from '../../certify/certificate/types.ts';
import { main } from '../../cli/main.ts';
import { conformantReport } from './reports.ts';
import { certificateProblems } from './report-schemas.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const ISSUED = new Date('2026-11-25T12:00:00.000Z');
const DAY = 86_400_000;
const at = (days: number) => new Date(ISSUED.getTime() + days * DAY);

function written(dir: string, env: Record<string, string> = {}) {
  fs.mkdirSync(dir, { recursive: true });
  return writeCertificate({ report: conformantReport(), reportsDir: dir, env, now: () => ISSUED });
}
const expiry = (file: string, now: Date, acceptExpired = false) =>
  verifyCertificate(file, { root: ROOT, now, acceptExpired }).checks.find((c) => c.name === 'expiry')!;

test('certificate: records issuedAt and validUntil 90 days later by default, and the schema holds them', async ({ scratch }) => {
  const w = written(scratch('reports'));
  expect(w.certificate.issuedAt).toBe('2026-11-25T12:00:00.000Z');
  expect(w.certificate.validUntil).toBe('2027-02-23T12:00:00.000Z');
  expect(certificateProblems(w.certificate)).toEqual([]);
  const { issuedAt: _i, validUntil: _v, ...without } = w.certificate;
  expect(certificateProblems(without).join('\n')).toMatch(/issuedAt|validUntil/);
  expect(fs.readFileSync(w.htmlFile, 'utf8')).toContain('valid until 2027-02-23T12:00:00.000Z');
});

test('certificate: CONFORMANCE_VALID_DAYS sets the validity period', async ({ scratch }) => {
  const w = written(scratch('reports'), { CONFORMANCE_VALID_DAYS: '7' });
  expect(w.certificate.validUntil).toBe('2026-12-02T12:00:00.000Z');
});

// The expiry check at fixed clocks: [what, now, acceptExpired, ok, detail].
const CLOCKS: [string, Date, boolean, boolean, RegExp][] = [
  ['the day it is issued', ISSUED, false, true, /valid until 2027-02-23T12:00:00.000Z \(90 day\(s\) left\)/],
  ['a millisecond before validUntil', new Date(at(90).getTime() - 1), false, true, /0 day\(s\) left/],
  [
    'at validUntil',
    at(90),
    false,
    false,
    /^expired: valid until 2027-02-23T12:00:00.000Z \(0 day\(s\) ago\).*--accept-expired to accept it/,
  ],
  ['a year later', at(455), false, false, /^expired: .*\(365 day\(s\) ago\)/],
  ['a year later, accepted', at(455), true, true, /^expired: .*\(accepted: --accept-expired\)/],
  ['before it was issued', at(-1), false, false, /after now/],
];
for (const [what, now, accept, ok, detail] of CLOCKS) {
  test(`certificate: verify ${ok ? 'accepts' : 'refuses'} it ${what}`, async ({ scratch }) => {
    const w = written(scratch('reports'));
    const check = expiry(w.jsonFile, now, accept);
    expect(check.ok).toBe(ok);
    expect(check.detail).toMatch(detail);
    expect(verifyCertificate(w.jsonFile, { root: ROOT, now, acceptExpired: accept }).ok).toBe(ok);
  });
}

test('certificate: one recording no validity period is refused, unless accepted', () => {
  expect(checkExpiry({}, ISSUED)).toMatchObject({ ok: false, detail: expect.stringMatching(/records no valid issuedAt and validUntil/) });
  expect(checkExpiry({ issuedAt: 'soon', validUntil: '2027-01-01T00:00:00Z' }, ISSUED).ok).toBe(false);
  expect(checkExpiry({}, ISSUED, true).ok).toBe(true);
  expect(checkExpiry({ issuedAt: '2026-01-02T00:00:00Z', validUntil: '2026-01-01T00:00:00Z' }, ISSUED, true)).toMatchObject({
    ok: false,
    detail: expect.stringMatching(/not after issuedAt/),
  });
});

test('certificate: validUntil is covered by the digest and the signature (extending it is caught)', async ({ scratch }) => {
  const { privateKey } = generateKeyPairSync('ed25519');
  const keyFile = scratch('signer.pem');
  fs.writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }));
  const w = written(scratch('reports'), { CONFORMANCE_SIGNING_KEY_FILE: keyFile });
  const cert = JSON.parse(fs.readFileSync(w.jsonFile, 'utf8')) as Certificate;
  cert.validUntil = '2099-01-01T00:00:00.000Z';
  fs.writeFileSync(w.jsonFile, JSON.stringify(cert));
  const failed = (now: Date) =>
    verifyCertificate(w.jsonFile, { root: ROOT, now })
      .checks.filter((c) => !c.ok)
      .map((c) => c.name);
  expect(failed(at(1))).toEqual(['certificate', 'html', 'signature']);
  // Even with every digest recomputed, the signature breaks.
  cert.digests.results = digestOf(cert.results);
  cert.digests.certificate = certificateDigest(cert);
  fs.writeFileSync(w.jsonFile, JSON.stringify(cert));
  expect(failed(at(1))).toEqual(['html', 'signature']);
});

function cli(argv: string[], cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  return main(argv, { stdout: (t) => out.push(t), stderr: (t) => err.push(t), env: {}, cwd }).then((code) => ({
    code,
    out: out.join(''),
    err: err.join(''),
  }));
}

test('certificate: `verify` exits 1 on an expired certificate saying so, and 0 with --accept-expired', async ({ scratch }) => {
  const dir = scratch('reports');
  fs.mkdirSync(dir, { recursive: true });
  // Issued 100 days ago, valid 90 days: expired 10 days ago, whatever day the test runs.
  const issued = new Date(Date.now() - 100 * DAY);
  writeCertificate({ report: conformantReport(), reportsDir: dir, env: {}, now: () => issued });
  const refused = await cli(['verify', 'certificate.json'], dir);
  expect(refused.code).toBe(1);
  expect(refused.out).toMatch(/✗ expiry: expired: valid until .* \(10 day\(s\) ago\)/);
  expect(refused.out).toMatch(/FAILED: expiry$/m);
  const accepted = await cli(['verify', 'certificate.json', '--accept-expired'], dir);
  expect(accepted.code, accepted.out).toBe(0);
  expect(accepted.out).toMatch(/✓ expiry: expired: .*accepted: --accept-expired/);
  expect((await cli(['certify', '--valid-days', '0', '--dry-run'], dir)).err).toMatch(
    /CONFORMANCE_VALID_DAYS="0" must be an integer in \[1, 3650\]/,
  );
});
