/**
 * `inventory-conformance submit`: from a run's reports folder and a product.yaml, writes the
 * submission folder `<out>/<vendor>-<product>-<version>/` (product.yaml, certificate.json and
 * .html, junit.xml, evidence.har, README.md), or refuses, naming each reason. Byte-reproducible:
 * files are copied as the run wrote them, product.yaml and the README are generated with sorted
 * keys and no date. Every file written is scanned for every form of every key, and for a private
 * key: a hit removes what was written and fails.
 */
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../core/paths.ts';
import type { Secret } from '../../core/secrets.ts';
import { sha256File } from '../certificate/digest.ts';
import type { Certificate } from '../certificate/types.ts';
import { describeFinding, scanPaths } from '../secret-scan.ts';
import { claimSubmissionDir, ownerFileText, SUBMISSION_FILES, SUBMISSION_OWNER_FILE } from './folder.ts';
import { certificateIntegrity, installedHarness } from './integrity.ts';
import type { SubmissionProblem } from './problems.ts';
import { parseProduct, productYaml, submissionName, type Product } from './product.ts';
import { renderSubmissionReadme } from './readme.ts';
import { eligibilityProblems } from './rules.ts';

/** What `submit` reads, where it writes, and the keys it must keep out of what it writes. */
export interface SubmitOptions {
  productFile: string;
  /** The run's reports folder (certificate.json, certificate.html, junit.xml, evidence.har). */
  reportsDir: string;
  /** Where the submission folder is made (default `submission`). */
  outDir: string;
  /** The keys of the environment: none may reach a file. */
  secrets: readonly Secret[];
  /** The installed harness (default: this one). */
  root?: string;
  /** The clock expiry is judged by. */
  now?: Date;
}

/** The folder written, or every reason it was not (nothing written then). */
export type SubmitResult = { ok: true; dir: string; files: string[] } | { ok: false; problems: SubmissionProblem[] };

/** The files copied from the reports folder as they are. */
const COPIED = ['certificate.json', 'certificate.html', 'junit.xml', 'evidence.har'] as const;

const missing = (id: string, where: string): SubmissionProblem => ({
  kind: 'missing-file',
  id,
  expected: `${id} in ${where}`,
  observed: 'absent',
  reason: `${where} has no ${id}`,
});

/** Reads the product file; its problems name the file, never a value. */
export function readProductFile(file: string): { product?: Product; problems: SubmissionProblem[] } {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return {
      problems: [{ kind: 'product', id: 'product.yaml', expected: 'a readable file', observed: 'absent', reason: `${file}: no such file` }],
    };
  }
  const parsed = parseProduct(text);
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

/** Every reason the run in `reportsDir` may not be submitted as `product`. */
function refusals(o: SubmitOptions, product: Product | undefined, root: string): { cert?: Certificate; problems: SubmissionProblem[] } {
  const absent = COPIED.filter((f) => !fs.existsSync(path.join(o.reportsDir, f)));
  if (absent.includes('certificate.json')) return { problems: absent.map((f) => missing(f, o.reportsDir)) };
  const certFile = path.join(o.reportsDir, 'certificate.json');
  let cert: Certificate;
  try {
    cert = JSON.parse(fs.readFileSync(certFile, 'utf8')) as Certificate;
  } catch {
    return {
      problems: [
        { kind: 'digest', id: 'certificate.json', expected: 'a certificate', observed: 'not JSON', reason: `${certFile} is not JSON` },
      ],
    };
  }
  const integrity = certificateIntegrity(certFile, { root, now: o.now ?? new Date() });
  if (integrity.checks.some((c) => c.name === 'format')) return { problems: integrity.problems };
  // The suite's integrity check and the release rule say the same thing about another suite: keep the rule's words.
  const eligibility = eligibilityProblems(cert, installedHarness(root), product);
  const suiteRule = eligibility.some((p) => p.kind === 'suite-version');
  const problems = [
    ...absent.map((f) => missing(f, o.reportsDir)),
    ...integrity.problems.filter((p) => !(suiteRule && p.id === 'suite')),
    ...eligibility,
  ];
  return { cert, problems };
}

/** Scans what was written; on a hit removes it all and says where (never the key). */
function scanWritten(dir: string, files: readonly string[], secrets: readonly Secret[]): SubmissionProblem[] {
  const scan = scanPaths(
    files.map((f) => path.join(dir, f)),
    [...secrets],
    dir,
  );
  const lines = [...scan.findings, ...scan.unscannable].map(describeFinding);
  for (const f of files)
    if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(fs.readFileSync(path.join(dir, f), 'latin1'))) lines.push(`${f}: a PEM private key`);
  if (!lines.length) return [];
  for (const f of [...files, SUBMISSION_OWNER_FILE]) fs.rmSync(path.join(dir, f), { force: true });
  if (!fs.readdirSync(dir).length) fs.rmdirSync(dir);
  return lines.map((l) => ({
    kind: 'secret',
    id: l.split(':')[0],
    expected: 'no key in any encoding',
    observed: l,
    reason: `${l}: the submission was removed`,
  }));
}

/** Writes the six files and the marker into `dir` (already submit's). */
function writeFiles(dir: string, name: string, reportsDir: string, product: Product, cert: Certificate): void {
  for (const f of COPIED) fs.copyFileSync(path.join(reportsDir, f), path.join(dir, f));
  fs.writeFileSync(path.join(dir, 'product.yaml'), productYaml(product));
  const digests = Object.fromEntries(SUBMISSION_FILES.filter((f) => f !== 'README.md').map((f) => [f, sha256File(path.join(dir, f))]));
  fs.writeFileSync(path.join(dir, 'README.md'), renderSubmissionReadme(name, product, cert, digests));
  fs.writeFileSync(path.join(dir, SUBMISSION_OWNER_FILE), ownerFileText(SUBMISSION_FILES));
}

/** Writes the submission, or returns why not (nothing written then). */
export function submit(o: SubmitOptions): SubmitResult {
  const root = o.root ?? REPO_ROOT;
  const read = readProductFile(o.productFile);
  const { cert, problems } = refusals(o, read.product, root);
  problems.unshift(...read.problems);
  if (problems.length || !read.product || !cert) return { ok: false, problems };
  const name = submissionName(read.product);
  const dir = path.resolve(o.outDir, name);
  const folderProblem = (why: string): SubmitResult => ({
    ok: false,
    problems: [{ kind: 'output-folder', id: name, expected: 'a fresh folder, or one submit wrote', observed: why, reason: why }],
  });
  let claimed: string | undefined;
  try {
    claimed = claimSubmissionDir(dir);
  } catch (error) {
    claimed = `${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`;
  }
  if (claimed) return folderProblem(claimed);
  try {
    writeFiles(dir, name, o.reportsDir, read.product, cert);
  } catch (error) {
    // A disk full or a permission refused half-way: what was written goes, nothing else.
    for (const f of [...SUBMISSION_FILES, SUBMISSION_OWNER_FILE]) fs.rmSync(path.join(dir, f), { force: true });
    return folderProblem(
      `${dir}: could not be written (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); what was written was removed`,
    );
  }
  const leaks = scanWritten(dir, SUBMISSION_FILES, o.secrets);
  if (leaks.length) return { ok: false, problems: leaks };
  return { ok: true, dir, files: [...SUBMISSION_FILES] };
}
