/**
 * `inventory-conformance submit`: a strict, signed, fully certified run becomes a submission folder
 * with byte-identical files on every submit; every other run is refused, one line per reason, with
 * the exit code of core/exit-codes.ts, and nothing is written. The runs are made by
 * tests/certificate/submission-fixture.ts (the real verdict, builder and signer, no target).
 */
import fs from 'node:fs';
import path from 'node:path';
import { test, expect } from '../certificate/scratch.ts';
import { main } from '../../cli/main.ts';
import { SUBMISSION_OWNER_FILE } from '../../certify/submission/folder.ts';
import { parseBaseline } from '../../certify/baseline.ts';
import { BASE_URL, passingRecords, PRODUCT_YAML, writeRun, type RunOptions } from '../certificate/submission-fixture.ts';

const NAME = 'acme-corp-acme-inventory-2.4.1';
const FILES = ['README.md', 'certificate.html', 'certificate.json', 'evidence.har', 'junit.xml', 'product.yaml'];

async function cli(argv: string[], cwd: string, env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { stdout: (t) => out.push(t), stderr: (t) => err.push(t), env, cwd });
  return { code, out: out.join(''), err: err.join('') };
}

/** A work folder with `reports/` (a run made with `o`) and `product.yaml`. */
function workspace(scratch: (name: string) => string, o: RunOptions = {}, product = PRODUCT_YAML): string {
  const cwd = scratch('work');
  writeRun(path.join(cwd, 'reports'), o);
  fs.writeFileSync(path.join(cwd, 'product.yaml'), product);
  return cwd;
}

const bytes = (dir: string) =>
  Object.fromEntries(
    fs
      .readdirSync(dir)
      .sort()
      .map((f) => [f, fs.readFileSync(path.join(dir, f)).toString('base64')]),
  );

test('submit: a strict, signed, fully certified run becomes submission/<vendor>-<product>-<version>/ with the six files', async ({
  scratch,
}) => {
  const cwd = workspace(scratch);
  const r = await cli(['submit', '--product', 'product.yaml'], cwd);
  expect(r.code, r.err).toBe(0);
  expect(r.out).toBe(`submit: wrote submission/${NAME}/ (${FILES.join(', ')})\n`);
  const dir = path.join(cwd, 'submission', NAME);
  expect(fs.readdirSync(dir).sort()).toEqual([SUBMISSION_OWNER_FILE, ...FILES]);
  for (const f of ['certificate.json', 'certificate.html', 'junit.xml', 'evidence.har'])
    expect(fs.readFileSync(path.join(dir, f)).equals(fs.readFileSync(path.join(cwd, 'reports', f))), f).toBe(true);
  // product.yaml: the schema's keys, sorted.
  expect(fs.readFileSync(path.join(dir, 'product.yaml'), 'utf8')).toBe(
    `contact: conformance@acme.example\nproduct: Acme Inventory\nurl: ${BASE_URL}\nvendor: Acme Corp\nversion: 2.4.1\n`,
  );
  const readme = fs.readFileSync(path.join(dir, 'README.md'), 'utf8');
  expect(readme).toContain('# Acme Corp Acme Inventory 2.4.1');
  expect(readme).toMatch(/\| verdict \| PASS \(profile full, strict\)/);
  expect(readme).toContain('| valid until | 2027-02-23T12:00:00.000Z |');
  expect(readme).toMatch(new RegExp(`npx inventory-conformance@\\d+\\.\\d+\\.\\d+ verify ${NAME} --public-key`));
  expect(readme).not.toMatch(/PRIVATE KEY/);
});

test('submit: the same run gives byte-identical files, submitted again into its own folder or into another', async ({ scratch }) => {
  const cwd = workspace(scratch);
  expect((await cli(['submit', '--product', 'product.yaml'], cwd)).code).toBe(0);
  const first = bytes(path.join(cwd, 'submission', NAME));
  // Some time later, again into the folder it wrote (it owns it), and into another.
  await new Promise((r) => setTimeout(r, 1100));
  expect((await cli(['submit', '--product', 'product.yaml'], cwd)).code).toBe(0);
  expect((await cli(['submit', '--product', 'product.yaml', '--out', 'elsewhere', '--reports', 'reports'], cwd)).code).toBe(0);
  expect(bytes(path.join(cwd, 'submission', NAME))).toEqual(first);
  expect(bytes(path.join(cwd, 'elsewhere', NAME))).toEqual(first);
});

const notCertified = () =>
  passingRecords().map((t) =>
    t.title.startsWith('RL-05')
      ? { ...t, outcome: 'skipped' as const, annotations: [{ type: 'not-certified', description: 'RATE_LIMIT_KEY is not set' }] }
      : t,
  );
const failing = () =>
  passingRecords().map((t) =>
    t.title.startsWith('AUTH-02') ? { ...t, outcome: 'failed' as const, errors: ['AUTH-02: expected 401, observed 200'] } : t,
  );
const baseline = {
  baseline: parseBaseline('knownFailures:\n  - { id: AUTH-02, reason: migrating }\n'),
  file: 'baseline.yaml',
  digest: '0'.repeat(64),
};
const TODAY_MINUS_100 = new Date(Date.now() - 100 * 86_400_000);

// Runs submit refuses: [what, run, product.yaml, the problem line expected, exit code].
const REFUSED: [string, RunOptions, string, RegExp, number][] = [
  ['a run that was not --strict', { gate: { strict: false } }, PRODUCT_YAML, /^submit: refused: not-strict: the run was not --strict/m, 2],
  [
    'a run with something not certified',
    { tests: notCertified() },
    PRODUCT_YAML,
    /^submit: refused: not-certified RL-05 \(must\): RL-05 not certified: RATE_LIMIT_KEY is not set$/m,
    4,
  ],
  [
    'a run with a failed requirement',
    { tests: failing() },
    PRODUCT_YAML,
    /^submit: refused: verdict AUTH-02 \(must\): AUTH-02 failed$/m,
    1,
  ],
  [
    'a run gated with a baseline of known failures',
    { tests: failing(), gate: { baseline } },
    PRODUCT_YAML,
    /^submit: refused: known-failures: the run was gated with a baseline of known failures \(baseline\.yaml\)/m,
    1,
  ],
  ['a readonly run', { profile: 'readonly' }, PRODUCT_YAML, /^submit: refused: profile: the run's profile is readonly, not full$/m, 2],
  [
    'an unsigned certificate',
    { signer: null },
    PRODUCT_YAML,
    /^submit: refused: signature: the certificate is not signed: certify with --sign-key/m,
    2,
  ],
  [
    'a prerelease suite',
    { suite: { version: '0.2.0-rc.1' } },
    PRODUCT_YAML,
    /^submit: refused: suite-version: suite version 0\.2\.0-rc\.1 is not a released version$/m,
    2,
  ],
  [
    'a suite run from a modified checkout',
    { suite: { modified: true } },
    PRODUCT_YAML,
    /^submit: refused: suite-version: the suite ran from a checkout with uncommitted changes/m,
    2,
  ],
  [
    'the bundled reference server',
    { target: { kind: 'reference', baseUrl: 'http://127.0.0.1:8080/v1', profile: 'full' } },
    PRODUCT_YAML,
    /^submit: refused: target: the run certified the bundled reference server/m,
    2,
  ],
  ['an expired certificate', { now: TODAY_MINUS_100 }, PRODUCT_YAML, /^submit: refused: expired expiry: expired: valid until/m, 2],
  [
    'a product.yaml naming another deployment',
    {},
    PRODUCT_YAML.replace(BASE_URL, 'https://other.example/v1'),
    /^submit: refused: product url: product\.yaml url is not the deployment the certificate certifies/m,
    2,
  ],
  [
    'a product.yaml without contact, with an unknown key',
    {},
    PRODUCT_YAML.replace(/contact: .*\n/, 'apiKey: x\n'),
    /^submit: refused: product product\.yaml: missing key contact\n^submit: refused: product product\.yaml: unknown key apiKey \(allowed: vendor, product, version, contact, url\)$/m,
    2,
  ],
];
for (const [what, run, product, line, code] of REFUSED) {
  test(`submit: refuses ${what}, saying why, exit ${code}, writing nothing`, async ({ scratch }) => {
    const cwd = workspace(scratch, run, product);
    const r = await cli(['submit', '--product', 'product.yaml'], cwd);
    expect(r.err).toMatch(line);
    expect(r.err).toMatch(new RegExp(`submit: nothing was submitted \\(exit ${code}\\)\\n$`));
    expect(r.code).toBe(code);
    expect(fs.existsSync(path.join(cwd, 'submission'))).toBe(false);
  });
}

test('submit: refuses a certificate whose report files changed after it was signed', async ({ scratch }) => {
  const cwd = workspace(scratch);
  fs.appendFileSync(path.join(cwd, 'reports', 'junit.xml'), '<!-- edited -->\n');
  const r = await cli(['submit', '--product', 'product.yaml'], cwd);
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/^submit: refused: digest artifact junit\.xml: junit\.xml differs/m);
});

test('submit: never writes into a folder it did not write, and leaves its files as they are', async ({ scratch }) => {
  const cwd = workspace(scratch);
  const dir = path.join(cwd, 'submission', NAME);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'notes.txt'), 'mine\n');
  const r = await cli(['submit', '--product', 'product.yaml'], cwd);
  expect(r.code).toBe(2);
  expect(r.err).toMatch(
    /^submit: refused: output-folder acme-corp-acme-inventory-2\.4\.1: .* holds files submit did not write \(notes\.txt\)/m,
  );
  expect(fs.readdirSync(dir)).toEqual(['notes.txt']);
  // A file added beside what submit wrote is refused the same way.
  fs.rmSync(dir, { recursive: true });
  expect((await cli(['submit', '--product', 'product.yaml'], cwd)).code).toBe(0);
  fs.writeFileSync(path.join(dir, 'extra.md'), 'mine\n');
  expect((await cli(['submit', '--product', 'product.yaml'], cwd)).err).toMatch(/holds files submit did not write \(extra\.md\)/);
  expect(fs.readFileSync(path.join(dir, 'extra.md'), 'utf8')).toBe('mine\n');
});

test('submit: an output folder it cannot create is refused in one line, not a crash', async ({ scratch }) => {
  const cwd = workspace(scratch);
  fs.writeFileSync(path.join(cwd, 'occupied'), 'a file, not a folder\n');
  const r = await cli(['submit', '--product', 'product.yaml', '--out', 'occupied'], cwd);
  expect(r.code).toBe(2);
  expect(r.err).toMatch(
    /^submit: refused: output-folder acme-corp-acme-inventory-2\.4\.1: .*occupied\/acme-corp-acme-inventory-2\.4\.1: ENOTDIR$/m,
  );
  expect(fs.readFileSync(path.join(cwd, 'occupied'), 'utf8')).toBe('a file, not a folder\n');
});

test('submit: a key of the environment found in what it wrote removes the submission and exits 5, never printing the key', async ({
  scratch,
}) => {
  const key = 'sk_live_submission_0123456789';
  const cwd = workspace(scratch, { evidence: `leaked ${Buffer.from(`Bearer ${key}`).toString('base64')}` });
  const r = await cli(['submit', '--product', 'product.yaml', '--json'], cwd, { API_KEY: key });
  expect(r.code).toBe(5);
  const doc = JSON.parse(r.out) as { result: string; problems: { kind: string; id: string }[] };
  expect(doc.result).toBe('refused');
  expect(doc.problems).toEqual([expect.objectContaining({ kind: 'secret', id: 'evidence.har' })]);
  expect(r.out + r.err).not.toContain(key);
  expect(fs.existsSync(path.join(cwd, 'submission', NAME))).toBe(false);
});

test('submit: usage errors name the flag; --help lists the product keys and the exit codes', async ({ scratch }) => {
  const cwd = workspace(scratch);
  expect(await cli(['submit'], cwd)).toMatchObject({ code: 2, err: expect.stringContaining('submit needs --product <product.yaml>') });
  expect(await cli(['submit', '--product', 'product.yaml', '--bogus'], cwd)).toMatchObject({
    code: 2,
    err: expect.stringContaining("Unknown option '--bogus'"),
  });
  expect(await cli(['submit', '--product', 'missing.yaml'], cwd)).toMatchObject({
    code: 2,
    err: expect.stringContaining('missing.yaml: no such file'),
  });
  const help = await cli(['submit', '--help'], cwd);
  expect(help.code).toBe(0);
  for (const word of ['vendor:', 'product:', 'version:', 'contact:', 'url:', '--reports', '--out', 'released version'])
    expect(help.out).toContain(word);
  expect((await cli(['--help'], cwd)).out).toMatch(/^ {2}submit {3}write a submission folder/m);
  expect((await cli(['help', 'submit'], cwd)).out).toBe(help.out);
  expect((await cli(['help', 'diff'], cwd)).out).toMatch(/^Usage: inventory-conformance diff/);
  expect(await cli(['help', 'bogus'], cwd)).toMatchObject({
    code: 0,
    out: expect.stringMatching(/^Usage: inventory-conformance <command> \[flags\]/),
  });
});
