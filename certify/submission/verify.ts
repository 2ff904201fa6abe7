/**
 * `inventory-conformance verify <submission folder>`: what a registry's bot runs on a pull request
 * that adds a submission. Checks product.yaml against the schema (and that it names the deployment
 * certified), every digest (the certificate's own, its results, junit.xml, evidence.har, the HTML
 * page, the README), the signature against the given public key, the spec and ledger digests and
 * the suite against the installed harness (a released version), that every must-level requirement
 * was certified and passed, and the validity period. Each problem is typed (problems.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { filesUnder } from '../steps/reports-dir.ts';
import { sha256File } from '../certificate/digest.ts';
import type { Certificate } from '../certificate/types.ts';
import type { VerifyCheck } from '../certificate/verify.ts';
import { SUBMISSION_FILES, SUBMISSION_OWNER_FILE } from './folder.ts';
import { certificateIntegrity, installedHarness } from './integrity.ts';
import type { SubmissionProblem } from './problems.ts';
import { parseProduct, submissionName, type Product } from './product.ts';
import { renderSubmissionReadme } from './readme.ts';
import { eligibilityProblems } from './rules.ts';

/** What a submission is judged against: the installed harness, the vendor's key, the clock. */
export interface VerifySubmissionOptions {
  /** The installed harness the submission is judged against. */
  root: string;
  /** PEM of the vendor's public key; without it the signer is not checked, which is a problem. */
  publicKeyPem?: string;
  now: Date;
  acceptExpired?: boolean;
}

/** `ok` iff there is no problem. */
export interface SubmissionVerdict {
  ok: boolean;
  /** The certificate's checks (verifyCertificate), when it could be read. */
  checks: VerifyCheck[];
  problems: SubmissionProblem[];
}

const PRIVATE_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----/;

/** Missing and unexpected files of the folder, and a private key in one of its files. */
function fileProblems(dir: string): SubmissionProblem[] {
  const present = filesUnder(dir).map((f) => f.split(path.sep).join('/'));
  const allowed = new Set<string>([...SUBMISSION_FILES, SUBMISSION_OWNER_FILE]);
  const out: SubmissionProblem[] = SUBMISSION_FILES.filter((f) => !present.includes(f)).map((f) => ({
    kind: 'missing-file',
    id: f,
    expected: f,
    observed: 'absent',
    reason: `the submission has no ${f}`,
  }));
  for (const f of present.filter((x) => !allowed.has(x)).sort())
    out.push({
      kind: 'unexpected-file',
      id: f,
      expected: SUBMISSION_FILES.join(', '),
      observed: f,
      reason: `${f} is not a file of a submission`,
    });
  // The signer's private key must never travel with what it signed (the public key is in the certificate).
  for (const f of SUBMISSION_FILES.filter((x) => present.includes(x))) {
    if (PRIVATE_KEY.test(fs.readFileSync(path.join(dir, f), 'latin1')))
      out.push({
        kind: 'secret',
        id: f,
        expected: 'no private key',
        observed: 'a PEM private key',
        reason: `${f} holds a PEM private key: remove it, and replace the key (it is public now)`,
      });
  }
  return out;
}

function readProduct(dir: string): { product?: Product; problems: SubmissionProblem[] } {
  const file = path.join(dir, 'product.yaml');
  if (!fs.existsSync(file)) return { problems: [] };
  const parsed = parseProduct(fs.readFileSync(file, 'utf8'));
  if (parsed.ok) return { product: parsed.product, problems: [] };
  return {
    problems: parsed.problems.map((p) => ({
      kind: 'product' as const,
      id: 'product.yaml',
      expected: 'schemas/product.schema.json',
      observed: p,
      reason: p,
    })),
  };
}

/** The certificate must record the digest of the JUnit and HAR it travels with; the README must be the one submit writes. */
function coverageProblems(dir: string, cert: Certificate, product: Product | undefined): SubmissionProblem[] {
  const out: SubmissionProblem[] = [];
  for (const f of ['junit.xml', 'evidence.har']) {
    if (fs.existsSync(path.join(dir, f)) && !cert.artifacts?.[f])
      out.push({
        kind: 'digest',
        id: f,
        expected: `the certificate records the digest of ${f}`,
        observed: 'not recorded',
        reason: `the certificate records no digest of ${f}, so it does not vouch for it`,
      });
  }
  const readme = path.join(dir, 'README.md');
  if (product && fs.existsSync(readme)) {
    const digests = Object.fromEntries(
      SUBMISSION_FILES.filter((f) => f !== 'README.md' && fs.existsSync(path.join(dir, f))).map((f) => [f, sha256File(path.join(dir, f))]),
    );
    const expected = renderSubmissionReadme(path.basename(dir), product, cert, digests);
    if (fs.readFileSync(readme, 'utf8') !== expected)
      out.push({
        kind: 'digest',
        id: 'README.md',
        expected: 'the README submit writes for these files',
        observed: 'different',
        reason: 'README.md is not the one submit writes for this product, certificate and files (edited, or a file it lists changed)',
      });
  }
  return out;
}

/** Verifies a submission folder; every problem is listed, none stops the others. */
export function verifySubmission(dir: string, o: VerifySubmissionOptions): SubmissionVerdict {
  const problems = fileProblems(dir);
  const { product, problems: productProblems } = readProduct(dir);
  problems.push(...productProblems);
  if (product && path.basename(dir) !== submissionName(product)) {
    problems.push({
      kind: 'product',
      id: 'folder',
      expected: submissionName(product),
      observed: path.basename(dir),
      reason: `the folder is named ${path.basename(dir)}, but product.yaml makes it ${submissionName(product)}`,
    });
  }
  const certFile = path.join(dir, 'certificate.json');
  if (!fs.existsSync(certFile)) return { ok: false, checks: [], problems };
  const integrity = certificateIntegrity(certFile, {
    root: o.root,
    now: o.now,
    ...(o.acceptExpired ? { acceptExpired: true } : {}),
    ...(o.publicKeyPem ? { publicKeyPem: o.publicKeyPem } : {}),
  });
  if (integrity.checks.some((c) => c.name === 'read' || c.name === 'format'))
    return { ok: false, checks: integrity.checks, problems: [...problems, ...integrity.problems] };
  const cert = JSON.parse(fs.readFileSync(certFile, 'utf8')) as Certificate;
  const eligibility = eligibilityProblems(cert, installedHarness(o.root), product);
  const suiteRule = eligibility.some((p) => p.kind === 'suite-version');
  problems.push(
    ...integrity.problems.filter((p) => !(suiteRule && p.id === 'suite')),
    ...eligibility.filter((p) => p.kind !== 'signature' || !integrity.problems.some((q) => q.kind === 'signature')),
  );
  problems.push(...coverageProblems(dir, cert, product));
  if (!o.publicKeyPem)
    problems.push({
      kind: 'signature',
      expected: "the vendor's public key (--public-key)",
      observed: 'none given',
      reason: 'no --public-key given: who signed the submission is not checked',
    });
  return { ok: problems.length === 0, checks: integrity.checks, problems };
}
