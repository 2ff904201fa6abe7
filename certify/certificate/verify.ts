/**
 * `inventory-conformance verify certificate.json`: recomputes every digest of a certificate against
 * itself and this checkout (ledger, interface, suite source), the report files beside it and its
 * HTML page, re-derives the gate from the recorded results, and checks the signature. Any
 * difference fails.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { BaselineOutcome } from '../baseline.ts';
import type { ConformanceReport, RequirementStatus } from '../verdict.ts';
import { certificateDigest, readLedgerDetails } from './build.ts';
import { digestOf, manifestChanges, manifestDigest, sha256, sha256File, suiteManifest } from './digest.ts';
import { decideGate } from '../gate.ts';
import { renderCertificateHtml } from './html.ts';
import { checkSignature } from './sign.ts';
import { CERTIFICATE_FORMAT, type Certificate } from './types.ts';

export interface VerifyCheck {
  name: string;
  ok: boolean;
  detail: string;
}

export interface VerifyOptions {
  /** The checkout whose ledger, interface and suite source must match (default: this repository). */
  root: string;
  /** PEM of the public key that must have signed it; with it an unsigned certificate fails. */
  publicKeyPem?: string;
  /** The clock expiry is judged by (default: now). */
  now?: Date;
  /** `--accept-expired`: an expired certificate (or one recording no validity) is reported, not refused. */
  acceptExpired?: boolean;
}

/**
 * The certificate's validity at `now`: issued no later than `now` and not past `validUntil`.
 * `acceptExpired` turns a refusal into a note (the check passes, its detail still says so).
 */
export function checkExpiry(cert: { issuedAt?: unknown; validUntil?: unknown }, now: Date, acceptExpired = false): VerifyCheck {
  const issued = typeof cert.issuedAt === 'string' ? Date.parse(cert.issuedAt) : NaN;
  const until = typeof cert.validUntil === 'string' ? Date.parse(cert.validUntil) : NaN;
  const accepted = acceptExpired ? ' (accepted: --accept-expired)' : '; pass --accept-expired to accept it';
  if (!Number.isFinite(issued) || !Number.isFinite(until)) {
    return {
      name: 'expiry',
      ok: acceptExpired,
      detail: `the certificate records no valid issuedAt and validUntil, so it cannot be shown to be still valid${accepted}`,
    };
  }
  if (until <= issued) return { name: 'expiry', ok: false, detail: `validUntil ${cert.validUntil} is not after issuedAt ${cert.issuedAt}` };
  if (issued > now.getTime())
    return {
      name: 'expiry',
      ok: false,
      detail: `issued at ${cert.issuedAt}, after now (${now.toISOString()}): the issuer's clock or the certificate is wrong`,
    };
  if (until <= now.getTime()) {
    const days = Math.floor((now.getTime() - until) / 86_400_000);
    return {
      name: 'expiry',
      ok: acceptExpired,
      detail: `expired: valid until ${cert.validUntil} (${days} day(s) ago), issued ${cert.issuedAt}${accepted}`,
    };
  }
  const left = Math.floor((until - now.getTime()) / 86_400_000);
  return { name: 'expiry', ok: true, detail: `valid until ${cert.validUntil} (${left} day(s) left), issued ${cert.issuedAt}` };
}

function same(name: string, recorded: string | undefined, actual: string, what: string): VerifyCheck {
  return recorded === actual
    ? { name, ok: true, detail: `${what}: ${actual.slice(0, 16)}…` }
    : { name, ok: false, detail: `${what} differs: recorded ${String(recorded).slice(0, 16)}…, now ${actual.slice(0, 16)}…` };
}

/** The recorded results agree with themselves: the summary counts the statuses, and the gate and verdict follow from them. */
function resultChecks(cert: Certificate): VerifyCheck[] {
  const checks: VerifyCheck[] = [];
  const counts: Record<RequirementStatus, number> = { pass: 0, fail: 0, warn: 0, skipped: 0 };
  for (const r of cert.results.requirements) counts[r.status] = (counts[r.status] ?? 0) + 1;
  const summaryOk = (Object.keys(counts) as RequirementStatus[]).every((k) => counts[k] === cert.results.summary[k]);
  checks.push({
    name: 'summary',
    ok: summaryOk,
    detail: summaryOk
      ? 'summary counts match the statuses'
      : `summary ${JSON.stringify(cert.results.summary)} does not match the statuses ${JSON.stringify(counts)}`,
  });
  const asReport = {
    problems: cert.results.problems,
    notCertified: cert.results.notCertified,
    requirements: cert.results.requirements.map((r) => ({ id: r.id, status: r.status })),
  } as unknown as ConformanceReport;
  // Known failures (baseline or compared certificate) are marked on the requirements: recount the gate from them.
  const knownIds = cert.results.requirements.filter((r) => r.status === 'fail' && r.knownFailure);
  const recount: BaselineOutcome = {
    newFailures: [],
    known: knownIds.map((r) => ({ id: r.id, title: r.quote, level: r.level, failingTests: [] })),
    fixed: [],
    unjudged: [],
    passes: false,
  };
  const gate = decideGate(asReport, { strict: cert.results.gate.strict, baseline: recount });
  const gateOk = gate.result === cert.results.gate.result && gate.exitCode === cert.results.gate.exitCode;
  checks.push({
    name: 'gate',
    ok: gateOk,
    detail: gateOk
      ? `gate ${gate.result} follows from the recorded results`
      : `recorded gate ${cert.results.gate.result}, but the recorded results give ${gate.result}`,
  });
  const verdictOk = cert.results.verdict === cert.results.gate.result && cert.results.verdict === gate.result;
  checks.push({
    name: 'verdict',
    ok: verdictOk,
    detail: verdictOk
      ? `verdict ${cert.results.verdict} is the gate's result and follows from the statuses`
      : `recorded verdict ${cert.results.verdict}, but the recorded results give ${gate.result}`,
  });
  return checks;
}

/** The checkout at `root` is the one that ran: its ledger, interface, spec digest and suite source match the recorded digests. */
function checkoutChecks(cert: Certificate, root: string): VerifyCheck[] {
  const checks: VerifyCheck[] = [];
  const ledgerFile = path.join(root, 'suites', 'requirements.yaml');
  const ledgerText = fs.existsSync(ledgerFile) ? fs.readFileSync(ledgerFile, 'utf8') : '';
  checks.push(same('ledger', cert.digests.ledger, sha256(ledgerText), 'suites/requirements.yaml'));
  const interfaceFile = path.join(root, 'schemas', 'openapi.yaml');
  const interfaceDigest = fs.existsSync(interfaceFile) ? sha256File(interfaceFile) : '(missing)';
  checks.push(same('interface', cert.digests.interface, interfaceDigest, 'schemas/openapi.yaml'));
  const recordedSpec = readLedgerDetails(ledgerText).specDigest;
  checks.push(
    same(
      'spec',
      cert.digests.spec,
      recordedSpec ?? interfaceDigest,
      recordedSpec ? "the spec's digest recorded in the ledger" : "the spec's digest (the interface file's)",
    ),
  );

  const manifest = suiteManifest(root);
  const suiteOk = manifestDigest(manifest) === cert.digests.suite && manifestDigest(cert.sourceManifest ?? {}) === cert.digests.suite;
  const changes = manifestChanges(cert.sourceManifest ?? {}, manifest);
  checks.push({
    name: 'suite',
    ok: suiteOk,
    detail: suiteOk
      ? `suite source (${Object.keys(manifest).length} files): ${cert.digests.suite.slice(0, 16)}…`
      : `suite source differs from the one that ran: ${changes.slice(0, 8).join(', ')}${changes.length > 8 ? `, … ${changes.length - 8} more` : ''}${changes.length ? '' : 'the recorded manifest does not match its digest'}`,
  });
  return checks;
}

/** The report files beside the certificate `file` match their recorded digests (one absent is not checked), and its HTML page renders it. */
function besideChecks(cert: Certificate, file: string): VerifyCheck[] {
  const checks: VerifyCheck[] = [];
  const dir = path.dirname(file);
  for (const [name, digest] of Object.entries(cert.artifacts ?? {})) {
    const f = path.join(dir, name);
    if (!fs.existsSync(f))
      checks.push({ name: `artifact ${name}`, ok: true, detail: `${name} is not beside the certificate (not checked)` });
    else checks.push(same(`artifact ${name}`, digest, sha256File(f), name));
  }
  const html = path.join(dir, 'certificate.html');
  if (fs.existsSync(html)) {
    const ok = fs.readFileSync(html, 'utf8') === renderCertificateHtml(cert);
    checks.push({
      name: 'html',
      ok,
      detail: ok ? 'certificate.html renders the certificate' : 'certificate.html differs from the certificate it should render',
    });
  }
  return checks;
}

/** Every check of the certificate `file` (see the module's comment); `ok` when all pass. */
export function verifyCertificate(file: string, options: VerifyOptions): { ok: boolean; checks: VerifyCheck[] } {
  const checks: VerifyCheck[] = [];
  let cert: Certificate;
  try {
    cert = JSON.parse(fs.readFileSync(file, 'utf8')) as Certificate;
  } catch (error) {
    return { ok: false, checks: [{ name: 'read', ok: false, detail: `${file}: ${(error as Error).message}` }] };
  }
  if (cert?.format !== CERTIFICATE_FORMAT || !cert.digests || !cert.results) {
    return { ok: false, checks: [{ name: 'format', ok: false, detail: `not a ${CERTIFICATE_FORMAT} document` }] };
  }
  checks.push(same('results', cert.digests.results, digestOf(cert.results), 'digest of the recorded results'));
  checks.push(same('certificate', cert.digests.certificate, certificateDigest(cert), 'digest of the whole certificate'));
  checks.push(...resultChecks(cert));
  checks.push(...checkoutChecks(cert, options.root));
  checks.push(...besideChecks(cert, file));
  const sig = checkSignature(cert, options.publicKeyPem);
  checks.push({ name: 'signature', ok: sig.ok, detail: sig.detail });
  checks.push(checkExpiry(cert, options.now ?? new Date(), options.acceptExpired));
  return { ok: checks.every((c) => c.ok), checks };
}
