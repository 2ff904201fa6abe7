/**
 * Whether a certificate may stand in a submission: strict, full profile, a deployment, no known failures, every
 * must-level requirement certified and passing, signed, by a released suite (docs/submission.md).
 */
import type { Level } from '../../core/ledger.ts';
import type { Certificate } from '../certificate/types.ts';
import { sameUrl, type Product } from './product.ts';
import type { SubmissionProblem } from './problems.ts';

/** The installed harness a certificate is judged against. */
export interface InstalledHarness {
  version: string;
  /** `manifestDigest(suiteManifest(root))`. */
  suiteDigest: string;
  /** The ledger's requirements (id, level, excluded). */
  requirements: readonly { id: string; level: Level; excluded?: string }[];
}

const RELEASE = /^\d+\.\d+\.\d+$/;
const PASSED = new Set(['pass', 'warn']);

/** The suite-version problems: a prerelease, another version or digest than installed, a modified checkout. */
export function suiteProblems(suite: Certificate['suite'], suiteDigest: string, installed: InstalledHarness): SubmissionProblem[] {
  const out: SubmissionProblem[] = [];
  const p = (expected: string, observed: string, reason: string) => out.push({ kind: 'suite-version', expected, observed, reason });
  if (!RELEASE.test(suite.version))
    p('a release version MAJOR.MINOR.PATCH', suite.version, `suite version ${suite.version} is not a released version`);
  if (suite.version !== installed.version)
    p(
      installed.version,
      suite.version,
      `certified with suite ${suite.version}, but the installed harness is ${installed.version}: check it with that version`,
    );
  else if (suiteDigest !== installed.suiteDigest)
    p(
      installed.suiteDigest,
      suiteDigest,
      `the suite source that ran (${suiteDigest.slice(0, 16)}…) is not the released ${installed.version} (${installed.suiteDigest.slice(0, 16)}…)`,
    );
  if (suite.modified === true)
    p('an unmodified checkout', 'modified', 'the suite ran from a checkout with uncommitted changes to its source');
  return out;
}

/** The gate's own problems: strict, full profile, passing, no known failures. */
function gateProblems(cert: Certificate): SubmissionProblem[] {
  const out: SubmissionProblem[] = [];
  const { gate } = cert.results;
  if (!gate.strict)
    out.push({
      kind: 'not-strict',
      expected: 'a --strict run',
      observed: 'not strict',
      reason: 'the run was not --strict: run certify --strict',
    });
  if (cert.profile !== 'full')
    out.push({ kind: 'profile', expected: 'full', observed: cert.profile, reason: `the run's profile is ${cert.profile}, not full` });
  // A strict gate that is only not-certified: each requirement is listed as not certified instead.
  if (gate.result !== 'pass' && gate.result !== 'not-certified')
    out.push({
      kind: 'verdict',
      expected: 'pass',
      observed: gate.result,
      reason: `the gate is ${gate.result}${gate.reasons.length ? `: ${gate.reasons[0]}` : ''}`,
    });
  if (gate.baseline || cert.results.baseline) {
    const file = gate.baseline?.file ?? cert.results.baseline?.file ?? '';
    out.push({
      kind: 'known-failures',
      expected: 'no baseline',
      observed: file,
      reason: `the run was gated with a baseline of known failures (${file}): certify without --baseline`,
    });
  }
  for (const k of gate.knownFailures) {
    out.push({
      kind: 'known-failures',
      id: k.id,
      expected: 'pass',
      observed: `fail (known, from the ${k.from})`,
      reason: `${k.id} failed and was accepted as a known failure (${k.from})`,
    });
  }
  return out;
}

/** Each must-level requirement of the installed ledger the certificate does not show certified and passing. */
function requirementProblems(cert: Certificate, installed: InstalledHarness): SubmissionProblem[] {
  const out: SubmissionProblem[] = [];
  const byId = new Map(cert.results.requirements.map((r) => [r.id, r]));
  const notCertified = new Map(cert.results.notCertified.map((n) => [n.id, n]));
  for (const req of installed.requirements) {
    const r = byId.get(req.id);
    const nc = notCertified.get(req.id);
    if (nc) {
      out.push({
        kind: 'not-certified',
        id: req.id,
        level: req.level,
        expected: 'certified',
        observed: 'not certified',
        reason: `${req.id} not certified: ${nc.reason.split('\n')[0]}`,
      });
      continue;
    }
    if (req.level !== 'must' || req.excluded) continue;
    if (!r)
      out.push({
        kind: 'not-certified',
        id: req.id,
        level: req.level,
        expected: 'certified',
        observed: 'absent',
        reason: `${req.id} is not in the certificate`,
      });
    else if (r.status === 'fail')
      out.push({ kind: 'verdict', id: req.id, level: req.level, expected: 'pass', observed: 'fail', reason: `${req.id} failed` });
    else if (!PASSED.has(r.status))
      out.push({
        kind: 'not-certified',
        id: req.id,
        level: req.level,
        expected: 'pass',
        observed: r.status,
        reason: `${req.id} is ${r.status}${r.reason ? `: ${r.reason.split('\n')[0]}` : ''}`,
      });
  }
  return out;
}

/** The target: an external deployment, TLS verified (or plain http), the one product.yaml names. */
function targetProblems(cert: Certificate, product?: Product): SubmissionProblem[] {
  const t = (cert.target ?? {}) as { kind?: string; baseUrl?: string; tls?: string };
  const out: SubmissionProblem[] = [];
  if (t.kind !== 'external')
    out.push({
      kind: 'target',
      expected: 'external',
      observed: String(t.kind),
      reason: 'the run certified the bundled reference server, not a deployment: certify with --base-url',
    });
  if (t.tls?.startsWith('not verified'))
    out.push({
      kind: 'target',
      expected: 'TLS verified',
      observed: t.tls,
      reason: `the target's TLS certificate was not verified (${t.tls})`,
    });
  if (product && !sameUrl(product.url, t.baseUrl)) {
    out.push({
      kind: 'product',
      id: 'url',
      expected: String(t.baseUrl),
      observed: product.url,
      reason: `product.yaml url is not the deployment the certificate certifies (${String(t.baseUrl)})`,
    });
  }
  return out;
}

/**
 * Every reason the certificate may not stand in a submission, beside its integrity (digests,
 * signature, expiry: verifyCertificate). Empty: it may.
 */
export function eligibilityProblems(cert: Certificate, installed: InstalledHarness, product?: Product): SubmissionProblem[] {
  const out = [...gateProblems(cert), ...requirementProblems(cert, installed), ...targetProblems(cert, product)];
  if (!cert.signature)
    out.push({
      kind: 'signature',
      expected: 'an Ed25519 signature',
      observed: 'unsigned',
      reason: 'the certificate is not signed: certify with --sign-key (CONFORMANCE_SIGNING_KEY_FILE)',
    });
  out.push(...suiteProblems(cert.suite, cert.digests.suite, installed));
  return out;
}
