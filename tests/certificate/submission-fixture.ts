/**
 * A strict, signed, fully certified run's reports folder, made in milliseconds instead of a real
 * certify run: the real verdict (certify/verdict.ts) over one passing record per requirement of
 * the real ledger, the real certificate builder, signer and page (certify/certificate/), junit.xml
 * and evidence.har beside it. `change` alters the report (or the suite) before the certificate is
 * built and signed, to make a run `submit` must refuse.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { buildCertificate, readLedgerDetails, validityPeriod } from '../../certify/certificate/build.ts';
import { sha256, sha256File, suiteManifest } from '../../certify/certificate/digest.ts';
import { renderCertificateHtml } from '../../certify/certificate/html.ts';
import { signCertificate } from '../../certify/certificate/sign.ts';
import type { Certificate } from '../../certify/certificate/types.ts';
import { computeVerdict, type ConformanceReport, type TestRecord, type VerdictGateOptions } from '../../certify/verdict.ts';
import { loadLedger } from '../../core/ledger.ts';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const BASE_URL = 'https://inventory.acme.example/v1';
export const ISSUED = new Date('2026-11-25T12:00:00.000Z');
const VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

export const PRODUCT_YAML = `vendor: Acme Corp\nproduct: Acme Inventory\nversion: 2.4.1\ncontact: conformance@acme.example\nurl: ${BASE_URL}\n`;

export interface Signer {
  privateKey: KeyObject;
  publicKeyPem: string;
}

export function newSigner(): Signer {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { privateKey, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

/** One passing record per requirement of the ledger (excluded ones have none). */
export function passingRecords(): TestRecord[] {
  return loadLedger()
    .filter((r) => !r.excluded)
    .map((r) => ({
      title: `${r.id} holds`,
      project: 'functional',
      tags: [],
      outcome: 'passed' as const,
      errors: [],
      annotations: [],
      requests: 1,
    }));
}

export interface RunOptions {
  tests?: TestRecord[];
  gate?: VerdictGateOptions;
  profile?: string;
  target?: Record<string, unknown>;
  suite?: Partial<Certificate['suite']>;
  signer?: Signer | null;
  now?: Date;
  /** Extra text in evidence.har (e.g. a key that must never reach a submission). */
  evidence?: string;
}

export function fullReport(o: RunOptions = {}): ConformanceReport {
  return computeVerdict({
    ledger: loadLedger(),
    tests: o.tests ?? passingRecords(),
    profile: o.profile ?? 'full',
    target: o.target ?? {
      kind: 'external',
      baseUrl: BASE_URL,
      apiUrl: 'https://inventory.acme.example/quickstart',
      profile: o.profile ?? 'full',
      tls: 'verified',
    },
    generatedAt: '2026-11-25T11:58:00.000Z',
    gate: { strict: true, ...o.gate },
  });
}

/** Writes a run's reports folder at `dir` (conformance.json, junit.xml, evidence.har, certificate.json and .html). */
export function writeRun(dir: string, o: RunOptions = {}): Certificate {
  fs.mkdirSync(dir, { recursive: true });
  const report = fullReport(o);
  fs.writeFileSync(path.join(dir, 'conformance.json'), `${JSON.stringify(report, null, 2)}\n`);
  fs.writeFileSync(
    path.join(dir, 'junit.xml'),
    `<?xml version="1.0"?>\n<testsuites tests="${report.requirements.length}" failures="0"/>\n`,
  );
  fs.writeFileSync(
    path.join(dir, 'evidence.har'),
    `${JSON.stringify({ log: { version: '1.2', entries: [], comment: o.evidence ?? '' } })}\n`,
  );
  const artifacts = Object.fromEntries(['conformance.json', 'junit.xml', 'evidence.har'].map((f) => [f, sha256File(path.join(dir, f))]));
  const ledgerText = fs.readFileSync(path.join(ROOT, 'suites', 'requirements.yaml'), 'utf8');
  let cert = buildCertificate({
    report,
    ledger: readLedgerDetails(ledgerText),
    gate: report.gate,
    ...(report.baseline ? { baseline: { outcome: report.baseline, file: report.baseline.file, digest: report.baseline.digest } } : {}),
    suite: { name: 'inventory-conformance', version: VERSION, commit: '0'.repeat(40), modified: false, ...o.suite },
    ledgerDigest: sha256(ledgerText),
    interfaceDigest: sha256File(path.join(ROOT, 'schemas', 'openapi.yaml')),
    sourceManifest: suiteManifest(ROOT),
    artifacts,
    validity: validityPeriod(o.now ?? ISSUED, 90),
  });
  const signer = o.signer === undefined ? newSigner() : o.signer;
  if (signer) cert = { ...cert, signature: signCertificate(cert, signer.privateKey) };
  fs.writeFileSync(path.join(dir, 'certificate.json'), `${JSON.stringify(cert, null, 2)}\n`);
  fs.writeFileSync(path.join(dir, 'certificate.html'), renderCertificateHtml(cert));
  return cert;
}

/**
 * A submission folder assembled by hand from any run (as someone bypassing `submit` would):
 * the files copied, product.yaml as given, the README as submit renders it. `verify` must judge
 * it on its own.
 */
export async function assembleSubmission(reportsDir: string, dir: string, productYaml = PRODUCT_YAML): Promise<void> {
  const { parseProduct } = await import('../../certify/submission/product.ts');
  const { renderSubmissionReadme } = await import('../../certify/submission/readme.ts');
  fs.mkdirSync(dir, { recursive: true });
  for (const f of ['certificate.json', 'certificate.html', 'junit.xml', 'evidence.har'])
    fs.copyFileSync(path.join(reportsDir, f), path.join(dir, f));
  fs.writeFileSync(path.join(dir, 'product.yaml'), productYaml);
  const parsed = parseProduct(productYaml);
  if (!parsed.ok) throw new Error(parsed.problems.join('; '));
  const digests = Object.fromEntries(
    ['certificate.html', 'certificate.json', 'evidence.har', 'junit.xml', 'product.yaml'].map((f) => [f, sha256File(path.join(dir, f))]),
  );
  const cert = JSON.parse(fs.readFileSync(path.join(dir, 'certificate.json'), 'utf8')) as Certificate;
  fs.writeFileSync(path.join(dir, 'README.md'), renderSubmissionReadme(path.basename(dir), parsed.product, cert, digests));
}
