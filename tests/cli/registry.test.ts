/**
 * The registry example (ci/registry/verify-submissions.yml): a workflow for a repository of
 * submissions that runs `npx inventory-conformance verify <folder> --public-key …` on every pull
 * request that adds one. Its script runs here as the runner would, in a git repository made in a
 * temporary folder (a base branch holding the vendor's key, a pull request adding a submission
 * written by the real `submit`), with npm stubbed and npx running this harness's real CLI: a good
 * submission passes, broken ones fail and the job summary names each problem.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { test, expect } from '../certificate/scratch.ts';
import { main } from '../../cli/main.ts';
import { newSigner, PRODUCT_YAML, writeRun, type Signer } from '../certificate/submission-fixture.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const WORKFLOW = 'ci/registry/verify-submissions.yml';
const NAME = 'acme-corp-acme-inventory-2.4.1';

interface Step {
  name?: string;
  run?: string;
  uses?: string;
  env?: Record<string, string>;
  with?: Record<string, unknown>;
}
interface Workflow {
  on: Record<string, { paths?: string[] }>;
  permissions: Record<string, string>;
  env: Record<string, string>;
  jobs: { verify: { steps: Step[] } };
}
const workflow = () => YAML.parse(fs.readFileSync(path.join(ROOT, WORKFLOW), 'utf8')) as Workflow;
const script = () => workflow().jobs.verify.steps.find((s) => s.run?.includes('inventory-conformance verify'))!.run!;

function git(cwd: string, ...args: string[]): string {
  const r = spawnSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@example.com',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@example.com',
    },
  });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** A registry: `main` holds keys/acme-corp.pub.pem (of `registered`); the branch `pr` adds a submission signed by `signer`. */
async function registry(scratch: (name: string) => string, registered: Signer, signer: Signer = registered): Promise<string> {
  const repo = scratch('registry');
  fs.mkdirSync(path.join(repo, 'keys'), { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(repo, 'keys', 'acme-corp.pub.pem'), registered.publicKeyPem);
  git(repo, 'add', '.');
  git(repo, 'commit', '-qm', 'keys');
  git(repo, 'update-ref', 'refs/remotes/origin/main', 'HEAD');
  git(repo, 'checkout', '-qb', 'pr');
  const work = scratch('vendor');
  writeRun(path.join(work, 'reports'), { signer, now: new Date() });
  fs.writeFileSync(path.join(work, 'product.yaml'), PRODUCT_YAML);
  const out: string[] = [];
  const code = await main(['submit', '--product', 'product.yaml', '--out', path.join(repo, 'submissions')], {
    stdout: (t) => out.push(t),
    stderr: (t) => out.push(t),
    env: {},
    cwd: work,
  });
  expect(code, out.join('')).toBe(0);
  git(repo, 'add', '.');
  git(repo, 'commit', '-qm', 'submission');
  return repo;
}

/** Runs the workflow's verify step in `repo` as the runner would; npm is a stub, npx runs this harness's CLI. */
function runStep(
  repo: string,
  scratch: (name: string) => string,
): { code: number; summary: string; log: string; json: Record<string, unknown> } {
  const temp = scratch('runner');
  const bin = path.join(temp, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(
    path.join(bin, 'npm'),
    '#!/bin/sh\n# npm install --prefix DIR …: the harness "installed"\nmkdir -p "$3/node_modules/inventory-conformance"\necho "npm $*"\n',
    { mode: 0o755 },
  );
  fs.writeFileSync(
    path.join(bin, 'npx'),
    `#!/bin/sh\n[ "$1" = --no ] && [ "$2" = inventory-conformance ] || exit 127\nshift 2\nexec "${process.execPath}" "${path.join(ROOT, 'cli', 'bin.mjs')}" "$@"\n`,
    { mode: 0o755 },
  );
  const summary = path.join(temp, 'summary.md');
  fs.writeFileSync(summary, '');
  const r = spawnSync('bash', ['--noprofile', '--norc', '-e', '-o', 'pipefail', '-c', script()], {
    cwd: repo,
    encoding: 'utf8',
    env: {
      PATH: `${bin}:${process.env.PATH}`,
      HOME: temp,
      RUNNER_TEMP: temp,
      GITHUB_STEP_SUMMARY: summary,
      BASE_REF: 'main',
      HARNESS: workflow().env.HARNESS,
    },
    timeout: 60_000,
  });
  const jsonFile = path.join(temp, 'verify-submissions', `${NAME}.json`);
  return {
    code: r.status ?? -1,
    summary: fs.readFileSync(summary, 'utf8'),
    log: `${r.stdout}${r.stderr}`,
    json: fs.existsSync(jsonFile) ? (JSON.parse(fs.readFileSync(jsonFile, 'utf8')) as Record<string, unknown>) : {},
  };
}

test('registry: the workflow runs on pull requests that touch submissions, with a read-only token and no secret, and verifies with the vendor key', () => {
  const wf = workflow();
  expect(Object.keys(wf.on)).toEqual(['pull_request']);
  expect(wf.on.pull_request!.paths).toEqual(['submissions/**']);
  expect(wf.permissions).toEqual({ contents: 'read' });
  const text = fs.readFileSync(path.join(ROOT, WORKFLOW), 'utf8');
  expect(text).not.toMatch(/secrets\.|pull_request_target/);
  expect(script()).toMatch(/npx --no inventory-conformance verify "\$dir" --public-key "\$out\/\$vendor\.pub\.pem" --json/);
  // The key comes from the base branch, never from the pull request.
  expect(script()).toContain('git show "$base:keys/$vendor.pub.pem"');
  expect(wf.env.HARNESS).toMatch(/^git\+https:\/\/.+\.git$/);
});

test('registry: a good submission passes the workflow; the summary says PASS', async ({ scratch }) => {
  const repo = await registry(scratch, newSigner());
  const r = runStep(repo, scratch);
  expect(r.code, r.log + r.summary).toBe(0);
  expect(r.summary).toContain(`### ${NAME}: PASS (verify exit 0)`);
  expect(r.json).toMatchObject({ ok: true, problems: [] });
  expect(r.log).toContain('npm install --prefix');
});

test('registry: a broken submission fails the workflow; the summary names each problem', async ({ scratch }) => {
  const repo = await registry(scratch, newSigner());
  fs.appendFileSync(path.join(repo, 'submissions', NAME, 'junit.xml'), '<!-- edited -->\n');
  git(repo, 'commit', '-qam', 'edited');
  const r = runStep(repo, scratch);
  expect(r.code, r.log).toBe(1);
  expect(r.summary).toContain(`### ${NAME}: FAIL (verify exit 1)`);
  expect(r.summary).toMatch(/^\| digest \| artifact junit\.xml \| junit\.xml differs: recorded [0-9a-f]{16}…, now [0-9a-f]{16}… \|$/m);
  expect(r.summary).toMatch(/^\| digest \| README\.md \| /m);
});

test('registry: a submission signed by another key fails, even when its pull request replaces the vendor key', async ({ scratch }) => {
  const intruder = newSigner();
  const repo = await registry(scratch, newSigner(), intruder);
  fs.writeFileSync(path.join(repo, 'keys', 'acme-corp.pub.pem'), intruder.publicKeyPem);
  git(repo, 'commit', '-qam', 'my key');
  const r = runStep(repo, scratch);
  expect(r.code, r.log).toBe(1);
  expect(r.summary).toMatch(/^\| signature \| signature \| signed by key [0-9a-f]{16}…, expected [0-9a-f]{16}… \|$/m);
});
