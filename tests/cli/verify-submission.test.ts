/**
 * `inventory-conformance verify <submission folder>`: a good submission passes with the vendor's
 * public key; every broken one fails (exit 1) naming each problem, and `--json` lists them typed
 * ({kind, id, level, expected, observed, reason}), as a registry's bot would post them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { test, expect } from '../certificate/scratch.ts';
import { main } from '../../cli/main.ts';
import { verifySubmission } from '../../certify/submission/verify.ts';
import type { SubmissionProblem } from '../../certify/submission/problems.ts';
import {
  assembleSubmission,
  newSigner,
  passingRecords,
  ROOT,
  writeRun,
  type RunOptions,
  type Signer,
} from '../certificate/submission-fixture.ts';

const NAME = 'acme-corp-acme-inventory-2.4.1';

async function cli(argv: string[], cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { stdout: (t) => out.push(t), stderr: (t) => err.push(t), env: {}, cwd });
  return { code, out: out.join(''), err: err.join('') };
}

/** A submission written by `submit` from a good run, and the signer's public key file. */
async function submitted(scratch: (name: string) => string, signer: Signer = newSigner()): Promise<{ cwd: string; dir: string }> {
  const cwd = scratch('work');
  writeRun(path.join(cwd, 'reports'), { signer, now: new Date() });
  fs.writeFileSync(
    path.join(cwd, 'product.yaml'),
    `vendor: Acme Corp\nproduct: Acme Inventory\nversion: 2.4.1\ncontact: conformance@acme.example\nurl: https://inventory.acme.example/v1\n`,
  );
  fs.writeFileSync(path.join(cwd, 'vendor.pub.pem'), signer.publicKeyPem);
  const r = await cli(['submit', '--product', 'product.yaml'], cwd);
  expect(r.code, r.err).toBe(0);
  return { cwd, dir: path.join(cwd, 'submission', NAME) };
}

type Json = { format: string; subject: string; ok: boolean; exitCode: number; problems: SubmissionProblem[] };
const problemsOf = async (cwd: string, extra: string[] = ['--public-key', 'vendor.pub.pem']) => {
  const r = await cli(['verify', `submission/${NAME}`, ...extra, '--json'], cwd);
  const doc = JSON.parse(r.out) as Json;
  expect(doc.exitCode).toBe(r.code);
  return { code: r.code, doc, kinds: doc.problems.map((p) => `${p.kind}${p.id ? ` ${p.id}` : ''}`) };
};

test("verify: a submission written by submit passes with the vendor's public key", async ({ scratch }) => {
  const { cwd } = await submitted(scratch);
  const r = await cli(['verify', `submission/${NAME}`, '--public-key', 'vendor.pub.pem'], cwd);
  expect(r.code, r.out).toBe(0);
  expect(r.out).toMatch(/✓ signature: Ed25519 signature valid .*the expected one/);
  expect(r.out).toMatch(/✓ expiry: valid until/);
  expect(r.out).toContain(`verify: submission submission/${NAME} is intact and eligible`);
  const { doc } = await problemsOf(cwd);
  expect(doc).toMatchObject({ format: 'inventory-conformance-verify/1', subject: 'submission', ok: true, exitCode: 0, problems: [] });
});

const edit = (file: string, change: (text: string) => string) => fs.writeFileSync(file, change(fs.readFileSync(file, 'utf8')));

// Broken submissions: [what, break it, the problems (kind id) verify names].
const BROKEN: [string, (dir: string, cwd: string) => void, string[], string[]?][] = [
  [
    'the vendor respelt in product.yaml',
    (d) => edit(path.join(d, 'product.yaml'), (t) => t.replace('Acme Corp', 'ACME Corp')),
    ['digest README.md'],
  ],
  [
    'the vendor renamed in product.yaml',
    (d) => edit(path.join(d, 'product.yaml'), (t) => t.replace('Acme Corp', 'Other Corp')),
    ['product folder', 'digest README.md'],
  ],
  [
    'product.yaml without its contact',
    (d) => edit(path.join(d, 'product.yaml'), (t) => t.replace(/contact: .*\n/, '')),
    ['product product.yaml'],
  ],
  [
    'product.yaml naming another deployment',
    (d) => edit(path.join(d, 'product.yaml'), (t) => t.replace('inventory.acme.example', 'other.example')),
    ['product url', 'digest README.md'],
  ],
  ['junit.xml edited', (d) => fs.appendFileSync(path.join(d, 'junit.xml'), '<!-- -->'), ['digest artifact junit.xml', 'digest README.md']],
  [
    'a status in certificate.json changed',
    (d) => edit(path.join(d, 'certificate.json'), (t) => t.replace('"status": "pass"', '"status": "fail"')),
    [
      'digest results',
      'digest certificate',
      'digest summary',
      'digest gate',
      'digest verdict',
      'digest html',
      'signature signature',
      'verdict INV-01',
      'digest README.md',
    ],
  ],
  [
    'certificate.html edited',
    (d) => edit(path.join(d, 'certificate.html'), (t) => t.replace('</body>', '<p>certified forever</p></body>')),
    ['digest html', 'digest README.md'],
  ],
  ['evidence.har removed', (d) => fs.rmSync(path.join(d, 'evidence.har')), ['missing-file evidence.har', 'digest README.md']],
  [
    'a private key pasted into the README',
    (d) => fs.appendFileSync(path.join(d, 'README.md'), `${newSigner().privateKey.export({ type: 'pkcs8', format: 'pem' })}`),
    ['secret README.md', 'digest README.md'],
  ],
  ['a file added', (d) => fs.writeFileSync(path.join(d, 'extra.sh'), 'curl x | sh\n'), ['unexpected-file extra.sh']],
  [
    "another vendor's key",
    (_d, cwd) => fs.writeFileSync(path.join(cwd, 'vendor.pub.pem'), newSigner().publicKeyPem),
    ['signature signature'],
  ],
  ['no public key given', () => {}, ['signature'], []],
];
for (const [what, breakIt, expected, flags] of BROKEN) {
  test(`verify: a submission with ${what} fails, naming ${expected.join(', ')}`, async ({ scratch }) => {
    const { cwd, dir } = await submitted(scratch);
    breakIt(dir, cwd);
    const { code, kinds, doc } = await problemsOf(cwd, flags);
    expect(code).toBe(1);
    expect(kinds.sort()).toEqual([...expected].sort());
    for (const p of doc.problems) expect(Object.keys(p).sort()).toEqual(expect.arrayContaining(['expected', 'kind', 'observed', 'reason']));
    const text = await cli(['verify', `submission/${NAME}`, ...(flags ?? ['--public-key', 'vendor.pub.pem'])], cwd);
    expect(text.out).toMatch(new RegExp(`FAILED: ${expected.length} problem\\(s\\)`));
  });
}

// Runs submit would refuse, assembled by hand and signed: verify refuses them on its own.
const FORGED: [string, RunOptions, string[]][] = [
  ['not --strict', { gate: { strict: false } }, ['not-strict']],
  [
    'with RL-05 not certified',
    {
      tests: passingRecords().map((t) =>
        t.title.startsWith('RL-05')
          ? { ...t, outcome: 'skipped' as const, annotations: [{ type: 'not-certified', description: 'RATE_LIMIT_KEY is not set' }] }
          : t,
      ),
    },
    ['not-certified RL-05'],
  ],
  ['without AUTH-02', { tests: passingRecords().filter((t) => !t.title.startsWith('AUTH-02')) }, ['verdict', 'verdict AUTH-02']],
  ['by a prerelease suite', { suite: { version: '9.0.0-beta.1' } }, ['suite-version', 'suite-version']],
];
for (const [what, run, expected] of FORGED) {
  test(`verify: a hand-made submission of a run ${what} fails, naming ${expected.join(', ')}`, async ({ scratch }) => {
    const signer = newSigner();
    const cwd = scratch('work');
    writeRun(path.join(cwd, 'reports'), { ...run, signer, now: new Date() });
    await assembleSubmission(path.join(cwd, 'reports'), path.join(cwd, 'submission', NAME));
    fs.writeFileSync(path.join(cwd, 'vendor.pub.pem'), signer.publicKeyPem);
    const { code, kinds } = await problemsOf(cwd);
    expect(code).toBe(1);
    expect(kinds.sort()).toEqual([...expected].sort());
  });
}

test('verify: a submission past its validUntil fails as expired, and passes with --accept-expired; the spec digest is checked', async ({
  scratch,
}) => {
  const signer = newSigner();
  const { dir } = await submitted(scratch, signer);
  const later = new Date(Date.now() + 91 * 86_400_000);
  const expired = verifySubmission(dir, { root: ROOT, publicKeyPem: signer.publicKeyPem, now: later });
  expect(expired.problems.map((p) => [p.kind, p.reason.slice(0, 8)])).toEqual([['expired', 'expired:']]);
  expect(verifySubmission(dir, { root: ROOT, publicKeyPem: signer.publicKeyPem, now: later, acceptExpired: true }).ok).toBe(true);

  // A certificate recording another spec digest (signed again, as a forger with the key would).
  const { signCertificate } = await import('../../certify/certificate/sign.ts');
  const { certificateDigest } = await import('../../certify/certificate/build.ts');
  const { renderCertificateHtml } = await import('../../certify/certificate/html.ts');
  const cert = JSON.parse(fs.readFileSync(path.join(dir, 'certificate.json'), 'utf8'));
  delete cert.signature;
  cert.digests.spec = 'f'.repeat(64);
  cert.digests.certificate = certificateDigest(cert);
  cert.signature = signCertificate(cert, signer.privateKey);
  fs.writeFileSync(path.join(dir, 'certificate.json'), JSON.stringify(cert, null, 2));
  fs.writeFileSync(path.join(dir, 'certificate.html'), renderCertificateHtml(cert));
  const spec = verifySubmission(dir, { root: ROOT, publicKeyPem: signer.publicKeyPem, now: new Date() });
  expect(spec.problems.map((p) => `${p.kind} ${p.id}`)).toEqual(['spec spec', 'digest README.md']);
  expect(spec.problems[0]!.reason).toMatch(
    /^the spec's digest recorded in the ledger differs: recorded ffffffffffffffff…, now [0-9a-f]{16}…$/,
  );
});

test('verify: a submission folder renamed away from its product fails, naming the folder', async ({ scratch }) => {
  const signer = newSigner();
  const { dir } = await submitted(scratch, signer);
  const renamed = path.join(path.dirname(dir), 'acme-inventory-2.4.1');
  fs.renameSync(dir, renamed);
  const r = verifySubmission(renamed, { root: ROOT, publicKeyPem: signer.publicKeyPem, now: new Date() });
  expect(r.problems.map((p) => `${p.kind} ${p.id}`)).toEqual(['product folder', 'digest README.md']);
  expect(r.problems[0]!.reason).toBe(`the folder is named acme-inventory-2.4.1, but product.yaml makes it ${NAME}`);
});

test('verify: --help names the submission folder; a missing folder is a usage error', async ({ scratch }) => {
  const cwd = scratch('work');
  fs.mkdirSync(cwd);
  const help = await cli(['verify', '--help'], cwd);
  expect(help.out).toContain('Usage: inventory-conformance verify <certificate.json | submission folder>');
  expect(help.out).toContain('--accept-expired');
  expect(await cli(['verify', 'submission/none'], cwd)).toMatchObject({
    code: 2,
    err: expect.stringContaining('no such file or folder: submission/none'),
  });
});
