/**
 * Writes `certificate.json` and `certificate.html` beside the run's reports, after the verdict and
 * the secret scan: the gate (strict mode, baseline), the requirement matrix with the ledger's
 * words, the load charts, the digests and, with a key, an Ed25519 signature. Called from certify's
 * step list (the one writer: the CLI gates on what the step returns, through the outcome of runCertify); the options come from the environment (settings/cli.ts).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { ConformanceReport } from '../verdict.ts';
import { buildCertificate, readLedgerDetails, validityPeriod, type ParsedLedger } from './build.ts';
import { tableHeaderOf } from './quotes.ts';
import { sha256, sha256File, suiteManifest, SUITE_SOURCE } from './digest.ts';
import { renderCertificateHtml } from './html.ts';
import { loadPrivateKey, signCertificate } from './sign.ts';
import type { Certificate, GateResult } from './types.ts';
import { projectRootOf, REPO_ROOT } from '../../core/paths.ts';
import { readSettings } from '../../settings/index.ts';

export { REPO_ROOT };
export const CERTIFICATE_JSON = 'certificate.json';
export const CERTIFICATE_HTML = 'certificate.html';
/** Report files whose digests the certificate records (when the run wrote them). */
export const ARTIFACTS = [
  'conformance.json',
  'conformance.md',
  'results.json',
  'junit.xml',
  'load.json',
  'pacing.json',
  'evidence.har',
] as const;

export interface WriteCertificateOptions {
  /** The judged report: its `gate` (and `baseline`) is the certificate's gate. */
  report: ConformanceReport;
  reportsDir: string;
  /** Reads CONFORMANCE_SIGNING_KEY_FILE (a path; the key never travels in a variable). */
  env?: Record<string, string | undefined>;
  signingKeyFile?: string;
  /** The certificate the run was gated on (`--no-regression-from`). */
  previous?: Certificate;
  root?: string;
  ledgerFile?: string;
  /** The run's key redactor: a certificate it would change holds a key, and is not written. */
  redact?: (text: string) => string;
  /** The clock that dates the certificate (`issuedAt`; `validUntil` adds CONFORMANCE_VALID_DAYS from `env`). */
  now?: () => Date;
}

export interface WrittenCertificate {
  certificate: Certificate;
  gate: GateResult;
  jsonFile: string;
  htmlFile: string;
}

function suiteInfo(root: string): Certificate['suite'] {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { name?: string; version?: string };
  const suite: Certificate['suite'] = { name: pkg.name ?? 'inventory-conformance', version: pkg.version ?? '0.0.0' };
  try {
    const opts = {
      cwd: root,
      stdio: ['ignore', 'pipe', 'ignore'] as ['ignore', 'pipe', 'ignore'],
      encoding: 'utf8' as const,
      timeout: 5000,
    };
    suite.commit = execFileSync('git', ['rev-parse', 'HEAD'], opts).trim();
    suite.modified = execFileSync('git', ['status', '--porcelain', '--', ...SUITE_SOURCE], opts).trim() !== '';
  } catch {
    // Not a git checkout (a tarball): the source manifest still pins every file.
  }
  return suite;
}

/** Each quote that is a row of a table of `spec/*.md` gets that table's header, so it renders as a row, not a fragment. */
function withQuoteHeaders(ledger: ParsedLedger, root: string): ParsedLedger {
  const dir = path.join(root, 'spec');
  const docs = fs.existsSync(dir)
    ? fs
        .readdirSync(dir)
        .filter((f) => f.endsWith('.md'))
        .sort()
        .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'))
    : [];
  for (const details of ledger.byId.values()) {
    const header = details.quote ? tableHeaderOf(details.quote, docs) : undefined;
    if (header) details.quoteHeader = header;
  }
  return ledger;
}

/** Builds, signs (optionally) and writes the certificate; returns it with the gate (the report's). */
export function writeCertificate(options: WriteCertificateOptions): WrittenCertificate {
  const env = options.env ?? {};
  const root = options.root ?? REPO_ROOT;
  const ledgerFile = options.ledgerFile ?? path.join(root, 'suites', 'requirements.yaml');
  const keyFile = options.signingKeyFile ?? (env.CONFORMANCE_SIGNING_KEY_FILE?.trim() || undefined);
  const gate = options.report.gate;
  const b = options.report.baseline;
  const baseline = b ? { outcome: b, file: b.file, digest: b.digest } : undefined;

  const loadFile = path.join(options.reportsDir, 'load.json');
  const loadDocument = fs.existsSync(loadFile) ? (JSON.parse(fs.readFileSync(loadFile, 'utf8')) as unknown) : undefined;
  const artifacts: Record<string, string> = {};
  for (const a of ARTIFACTS) {
    const f = path.join(options.reportsDir, a);
    if (fs.existsSync(f)) artifacts[a] = sha256File(f);
  }
  const ledgerText = fs.readFileSync(ledgerFile, 'utf8');
  let certificate = buildCertificate({
    report: options.report,
    ledger: withQuoteHeaders(readLedgerDetails(ledgerText), root),
    gate,
    ...(baseline ? { baseline } : {}),
    ...(options.previous ? { previous: options.previous } : {}),
    loadDocument,
    suite: suiteInfo(projectRootOf(root)),
    ledgerDigest: sha256(ledgerText),
    interfaceDigest: sha256File(path.join(root, 'schemas', 'openapi.yaml')),
    sourceManifest: suiteManifest(root),
    artifacts,
    validity: validityPeriod(options.now?.() ?? new Date(), readSettings(env).values.CONFORMANCE_VALID_DAYS),
  });
  if (keyFile) {
    const key = loadPrivateKey(fs.readFileSync(keyFile, 'utf8'), `CONFORMANCE_SIGNING_KEY_FILE (${keyFile})`);
    certificate = { ...certificate, signature: signCertificate(certificate, key) };
  }
  const jsonFile = path.join(options.reportsDir, CERTIFICATE_JSON);
  const htmlFile = path.join(options.reportsDir, CERTIFICATE_HTML);
  const json = `${JSON.stringify(certificate, null, 2)}\n`;
  const html = renderCertificateHtml(certificate);
  // Written after the secret scan, so checked here: a key (say, pasted into a baseline's reason) never reaches the file.
  if (options.redact && (options.redact(json) !== json || options.redact(html) !== html)) {
    throw new Error('a key would be written into the certificate (from the baseline file?); it was not written');
  }
  fs.writeFileSync(jsonFile, json);
  fs.writeFileSync(htmlFile, html);
  return { certificate, gate, jsonFile, htmlFile };
}

export { decideGate } from '../gate.ts';
export { verifyCertificate } from './verify.ts';
export type { Certificate, GateResult } from './types.ts';

/**
 * certify's step: writes the certificate after the verdict and the secret scan, and says where.
 * A certificate that cannot be written (an unreadable baseline or key file) is reported, never
 * thrown: the run's other reports stay.
 */
export function certificateStep(options: WriteCertificateOptions & { write: (text: string) => void }): WrittenCertificate | undefined {
  try {
    const written = writeCertificate(options);
    options.write(
      `certify: certificate ${written.htmlFile} (gate ${written.gate.result}, exit ${written.gate.exitCode}${written.certificate.signature ? ', signed' : ''})\n`,
    );
    return written;
  } catch (error) {
    options.write(`certify: certificate not written: ${(error as Error).message.split('\n')[0]}\n`);
    return undefined;
  }
}
