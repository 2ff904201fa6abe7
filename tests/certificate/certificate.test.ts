import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, expect } from './scratch.ts';
import { loadCharts } from '../../certify/certificate/build.ts';
import { digestOf, sourceManifest, suiteManifest, SUITE_SOURCE_FILE } from '../../certify/certificate/digest.ts';
import { verifyCertificate, writeCertificate } from '../../certify/certificate/index.ts';
import type { Certificate } from '../../certify/certificate/types.ts';
import { baselineOf, conformantReport, failingReport } from './reports.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

function written(dir: string, report = failingReport(), extra: Parameters<typeof writeCertificate>[0]['env'] = {}) {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'conformance.json'), JSON.stringify(report));
  return writeCertificate({ report, reportsDir: dir, env: extra });
}

const read = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8')) as Certificate;
const failed = (file: string, publicKeyPem?: string) =>
  verifyCertificate(file, { root: ROOT, ...(publicKeyPem ? { publicKeyPem } : {}) })
    .checks.filter((c) => !c.ok)
    .map((c) => c.name);

test('certificate: carries each requirement quote, source and decision from the ledger, and verifies', async ({ scratch }) => {
  const w = written(scratch('reports'));
  const upd = w.certificate.results.requirements.find((r) => r.id === 'UPD-06')!;
  expect(upd.quote).not.toBe('negative quantity'); // the ledger's verbatim quote, not the report's short title
  expect(upd.source).toMatch(/^(spec|rfc|rules)$/);
  expect(upd.decision).toBeTruthy();
  expect(w.certificate.digests).toMatchObject({
    ledger: expect.stringMatching(/^[0-9a-f]{64}$/),
    suite: expect.stringMatching(/^[0-9a-f]{64}$/),
    spec: expect.stringMatching(/^[0-9a-f]{64}$/),
  });
  expect(Object.keys(w.certificate.sourceManifest)).toContain('certify/verdict.ts');
  expect(failed(w.jsonFile)).toEqual([]);
});

// Every recorded result, changed by hand, is caught.
const TAMPER: [string, (c: Certificate) => void, string[]][] = [
  [
    'a status',
    (c) => void (c.results.requirements.find((r) => r.id === 'AUTH-02')!.status = 'pass'),
    ['results', 'certificate', 'summary', 'html'],
  ],
  ['an evidence line', (c) => void (c.results.requirements[0]!.evidence[0]!.outcome = 'passed'), ['results', 'certificate', 'html']],
  [
    'the verdict and gate, digests recomputed',
    (c) => {
      c.results.verdict = 'pass';
      c.results.gate = { ...c.results.gate, result: 'pass', exitCode: 0 };
      c.digests.results = digestOf(c.results);
    },
    ['certificate', 'gate', 'verdict', 'html'],
  ],
  ['the target', (c) => void ((c.target as Record<string, unknown>).baseUrl = 'https://prod.example.com/v1'), ['certificate', 'html']],
  ['the suite manifest', (c) => void (c.sourceManifest['certify/verdict.ts'] = '0'.repeat(64)), ['certificate', 'suite']],
];
for (const [what, change, expected] of TAMPER) {
  test(`certificate: verify fails after ${what} is changed`, async ({ scratch }) => {
    const w = written(scratch('reports'));
    const cert = read(w.jsonFile);
    change(cert);
    fs.writeFileSync(w.jsonFile, JSON.stringify(cert, null, 2));
    expect(failed(w.jsonFile)).toEqual(expect.arrayContaining(expected));
  });
}

test('certificate: verify fails when a report file beside it changes', async ({ scratch }) => {
  const w = written(scratch('reports'));
  fs.appendFileSync(path.join(path.dirname(w.jsonFile), 'conformance.json'), ' ');
  expect(failed(w.jsonFile)).toEqual(['artifact conformance.json']);
});

test('certificate: an Ed25519 signature verifies, pins the signer, and breaks on any change', async ({ scratch }) => {
  const dir = scratch('reports');
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const other = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const keyFile = scratch('signer.pem');
  fs.writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }));
  const pub = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const w = written(dir, conformantReport(), { CONFORMANCE_SIGNING_KEY_FILE: keyFile });
  expect(w.certificate.signature?.algorithm).toBe('Ed25519');
  expect(fs.readFileSync(w.jsonFile, 'utf8')).not.toContain('PRIVATE KEY');
  expect(failed(w.jsonFile, pub)).toEqual([]);
  expect(failed(w.jsonFile, other)).toEqual(['signature']);

  // Changing a result and recomputing every digest still breaks the signature.
  const cert = read(w.jsonFile);
  cert.generatedAt = '2027-01-01T00:00:00.000Z';
  fs.writeFileSync(w.jsonFile, JSON.stringify(cert));
  expect(failed(w.jsonFile, pub)).toContain('signature');
});

test('certificate: with --public-key an unsigned certificate fails', async ({ scratch }) => {
  const w = written(scratch('reports'), conformantReport());
  const pub = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
  expect(failed(w.jsonFile)).toEqual([]);
  expect(failed(w.jsonFile, pub)).toEqual(['signature']);
});

test('certificate: a baseline turns the known failures into a passing gate that lists them', async ({ scratch }) => {
  const w = written(
    scratch('reports'),
    failingReport({ baseline: baselineOf('knownFailures:\n  - { id: AUTH-02, reason: ticket 1 }\n  - UPD-06\n') }),
  );
  expect(w.gate).toMatchObject({ result: 'pass', exitCode: 0 });
  expect(w.certificate.results.baseline?.known.map((k) => k.id)).toEqual(['AUTH-02', 'UPD-06']);
  const html = fs.readFileSync(w.htmlFile, 'utf8');
  expect(html).toContain('PASS (with known failures)');
  expect(html).toContain('Known failures (do not fail the gate)');
  expect(failed(w.jsonFile)).toEqual([]);
});

test('certificate: the HTML page is self-contained (no script, nothing fetched)', async ({ scratch }) => {
  const w = written(scratch('reports'));
  const html = fs.readFileSync(w.htmlFile, 'utf8');
  expect(html).not.toMatch(/<script|<link|src=|url\(|@import/i);
  expect(html).toContain('AUTH-02');
});

test('certificate: load charts come from every latency and window figure of load.json, bursts included', () => {
  const charts = loadCharts({
    checks: {
      capacity: {
        status: 'pass',
        evidence: ['GET /v1/inventory: 6745 requests'],
        figures: { load: { label: 'capacity (list)', latencyMs: { p50: 4, p90: 16, p99: 47, max: 121, mean: 7 } } },
      },
      overload: {
        status: 'pass',
        figures: {
          bursts: [{ label: 'burst', latencyMs: { p50: 900, p90: 1500, p99: 1598, max: 1599, mean: 1000 } }],
          windows: [
            { reset: '1', successes: 60, limit: 60 },
            { reset: '2', successes: 61, limit: 60 },
          ],
        },
      },
    },
  });
  expect(
    charts.map((c) => [c.check, c.latency.map((l) => `${l.label} p99 ${l.p99}`), c.windows.map((w) => `${w.successes}/${w.limit}`)]),
  ).toEqual([
    ['capacity', ['capacity (list) p99 47'], []],
    ['overload', ['burst p99 1598'], ['60/60', '61/60']],
  ]);
});

test('certificate: one that would hold a key is not written', async ({ scratch }) => {
  const key = 'sk_live_0123456789abcdef';
  const dir = scratch('reports');
  fs.mkdirSync(dir);
  const redact = (t: string) => t.split(key).join('<API_KEY>');
  const report = failingReport({ baseline: baselineOf(`knownFailures:\n  - { id: AUTH-02, reason: "fails with ${key}" }\n`) });
  expect(() => writeCertificate({ report, reportsDir: dir, env: {}, redact })).toThrow('a key would be written into the certificate');
  expect(fs.readdirSync(dir)).toEqual([]);
});

test('certificate: the installed package names the suite by the sources it was compiled from, only while its compiled files are the ones built', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'suite-'));
  try {
    fs.mkdirSync(path.join(root, 'suites'));
    fs.writeFileSync(path.join(root, 'suites', 'a.js'), 'export const a = 1;\n');
    const source = { 'suites/a.ts': 'f'.repeat(64) };
    fs.writeFileSync(path.join(root, SUITE_SOURCE_FILE), JSON.stringify({ source, compiled: sourceManifest(root) }));
    expect(suiteManifest(root)).toEqual(source);
    fs.writeFileSync(path.join(root, 'suites', 'a.js'), 'export const a = 2;\n');
    expect(suiteManifest(root), 'a changed compiled file is not the built suite').toEqual(sourceManifest(root));
    expect(suiteManifest(root)).not.toEqual(source);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
