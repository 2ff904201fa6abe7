/**
 * The pipeline examples and the GitHub Action: parsed, every command and flag they run checked
 * against the CLI's own flag table, their gating structure checked, and their jobs run in a shell
 * the way the CI runs them (the harness replaced by a stub whose verify can fail) to show that a
 * failing verify fails the job.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, expect } from '../test.ts';
import YAML from 'yaml';
import { parseArgs } from '../../cli/args.ts';
import { SETTINGS } from '../../settings/index.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  bin: Record<string, string>;
  scripts: Record<string, string>;
};
const GITHUB = '.github/workflows/certify-staging.example.yml';
const GITLAB = 'ci/gitlab-ci.example.yml';
const ACTION = 'action.yml';

interface Step {
  id?: string;
  name?: string;
  if?: string;
  run?: string;
  uses?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
  'continue-on-error'?: boolean;
  'working-directory'?: string;
}
interface GithubJob {
  if?: string;
  needs?: string | string[];
  environment?: string;
  steps: Step[];
}
interface Workflow {
  on: Record<string, unknown>;
  env?: Record<string, string>;
  jobs: Record<string, GithubJob>;
}
interface GitlabJob {
  script: string[];
  after_script?: string[];
  rules?: { if?: string; when?: string }[];
  needs?: (string | { job: string })[];
  variables?: Record<string, string>;
  artifacts?: { paths: string[]; reports: { junit: string } };
}
interface Action {
  inputs: Record<string, { default?: string }>;
  outputs: Record<string, { value: string }>;
  runs: { using: string; steps: (Step & { shell?: string })[] };
}

const read = <T>(file: string): T => YAML.parse(fs.readFileSync(path.join(ROOT, file), 'utf8')) as T;

/** Shell words of one statement (quotes removed; `"${args[@]}"` stays one word). */
function words(statement: string): string[] {
  return [...statement.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

/** Commands other than the harness's that the examples may run. */
const OTHER_COMMANDS = new Set(['echo', 'export', 'set', 'mkdir', 'cd', 'exit', 'node', 'gh', 'if', 'fi', 'then', '[']);

/** Problems of one shell statement the examples run (empty: the command exists and parses). */
function statementProblems(statement: string): string[] {
  const w = words(statement.trim());
  if (!w.length) return [];
  if (w[0] === 'npm') {
    if (['ci', 'install', 'i', 'pack'].includes(w[1]!)) return [];
    if (w[1] === 'run') return w[2]! in pkg.scripts ? [] : [`npm script ${w[2]} does not exist`];
    return [`npm ${w[1]} is not used by the examples`];
  }
  const harness =
    w[0] === 'npx' && w[1] === 'inventory-conformance' ? w.slice(2) : w[0] === 'inventory-conformance' ? w.slice(1) : undefined;
  if (harness) {
    if (!fs.existsSync(path.join(ROOT, pkg.bin['inventory-conformance'] ?? '-'))) return ['package.json has no inventory-conformance bin'];
    if (harness[0] === '${args[@]}') return []; // the action's assembled arguments: checked in their own test
    const parsed = parseArgs(harness, SETTINGS);
    return parsed.errors.length ? parsed.errors : parsed.command === 'help' ? ['no subcommand'] : [];
  }
  if (/^[a-z_]+\+?=/i.test(w[0]!) || OTHER_COMMANDS.has(w[0]!)) return [];
  return [`unknown command: ${statement.trim()}`];
}

/** The statements of a script: lines split at `;`, `&&` and `||` outside quotes, without a leading `then`/`else`. */
function statements(script: string): string[] {
  const out: string[] = [];
  for (const line of script.split('\n')) {
    let quote = '';
    let current = '';
    for (let i = 0; i < line.length; i++) {
      const c = line[i]!;
      if (quote) {
        if (c === quote) quote = '';
      } else if (c === '"' || c === "'") quote = c;
      else if (c === ';' || ((c === '&' || c === '|') && line[i + 1] === c)) {
        out.push(current);
        current = '';
        if (c !== ';') i++;
        continue;
      }
      current += c;
    }
    out.push(current);
  }
  return out.map((s) => s.trim().replace(/^(then|else|do)\s+/, '')).filter(Boolean);
}

/** Problems of a script's statements (empty: every command exists and parses). */
function commandProblems(script: string): string[] {
  return statements(script).flatMap(statementProblems);
}

/**
 * A stub of the installed harness: `certify` writes a certificate and exits with STUB_CERTIFY_EXIT
 * (default 0); `verify` exits with STUB_VERIFY_EXIT. And a stub npm (the install needs no network here).
 */
function stubs(dir: string): string {
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(
    path.join(bin, 'inventory-conformance'),
    [
      '#!/bin/sh',
      'case "$1" in',
      '  certify) mkdir -p reports && echo \'{"results":{"verdict":"pass","gate":{"result":"pass"}}}\' > reports/certificate.json; echo "certify $*"; exit "${STUB_CERTIFY_EXIT:-0}";;',
      '  verify) echo "verify $*"; exit "$STUB_VERIFY_EXIT";;',
      'esac',
      'exit 2',
    ].join('\n'),
    { mode: 0o755 },
  );
  fs.writeFileSync(path.join(bin, 'npm'), '#!/bin/sh\necho "npm $*"\n', { mode: 0o755 });
  return bin;
}

/** `${{ … }}` as the runner would substitute it: inputs, step outputs, vars and secrets (dummies). */
function expand(text: string, inputs: Record<string, string>, outputs: Record<string, Record<string, string>>): string {
  return text.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_, expr: string) => {
    const input = /^inputs\.([\w-]+)$/.exec(expr);
    if (input) return inputs[input[1]!] ?? '';
    const out = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(expr);
    if (out) return outputs[out[1]!]?.[out[2]!] ?? '';
    if (/^(vars|secrets)\./.test(expr)) return 'x';
    return '';
  });
}

/**
 * Runs a job's `run` steps as GitHub runs them (each in `bash -e -o pipefail`, `if: always()` steps
 * after a failure, GITHUB_OUTPUT and GITHUB_PATH honoured, `uses:` steps skipped). Returns whether
 * the job failed and the log.
 */
function runGithubSteps(
  steps: Step[],
  verifyExit: number,
  inputs: Record<string, string> = {},
  certifyExit = 0,
): { failed: boolean; log: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ci-job-'));
  const bin = stubs(dir);
  const outputs: Record<string, Record<string, string>> = {};
  let failed = false;
  let log = '';
  let extraPath = '';
  for (const step of steps) {
    if (!step.run) continue;
    if (failed && !/always\(\)|failure\(\)/.test(step.if ?? '')) continue;
    const outputFile = path.join(dir, 'output');
    const pathFile = path.join(dir, 'path');
    fs.writeFileSync(outputFile, '');
    fs.writeFileSync(pathFile, '');
    const env = Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, expand(String(v), inputs, outputs)]));
    const cwd = path.join(dir, 'work');
    fs.mkdirSync(cwd, { recursive: true });
    const r = spawnSync('bash', ['--noprofile', '--norc', '-e', '-o', 'pipefail', '-c', expand(step.run, inputs, outputs)], {
      cwd,
      encoding: 'utf8',
      env: {
        PATH: `${extraPath}${bin}:${process.env.PATH}`,
        HOME: dir,
        RUNNER_TEMP: dir,
        GITHUB_ACTION_PATH: ROOT,
        GITHUB_OUTPUT: outputFile,
        GITHUB_PATH: pathFile,
        GITHUB_STEP_SUMMARY: path.join(dir, 'summary'),
        STUB_VERIFY_EXIT: String(verifyExit),
        STUB_CERTIFY_EXIT: String(certifyExit),
        ...env,
      },
      timeout: 30_000,
    });
    log += `## ${step.name ?? step.run.split('\n')[0]} → exit ${r.status}\n${r.stdout}${r.stderr}`;
    if (step.id)
      outputs[step.id] = Object.fromEntries(
        fs
          .readFileSync(outputFile, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => l.split(/=(.*)/s).slice(0, 2) as [string, string]),
      );
    for (const p of fs.readFileSync(pathFile, 'utf8').split('\n').filter(Boolean)) extraPath = `${p}:${extraPath}`;
    if (r.status !== 0 && !step['continue-on-error']) failed = true;
  }
  fs.rmSync(dir, { recursive: true, force: true });
  return { failed, log };
}

/** Runs a GitLab job's `script` as the runner does: the lines in one shell that stops at the first failure. */
function runGitlabScript(script: string[], verifyExit: number): { failed: boolean; log: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ci-job-'));
  const bin = stubs(dir);
  const r = spawnSync('bash', ['-e', '-o', 'pipefail', '-c', script.join('\n')], {
    cwd: dir,
    encoding: 'utf8',
    env: { PATH: `${bin}:${process.env.PATH}`, HOME: dir, STUB_VERIFY_EXIT: String(verifyExit) },
    timeout: 30_000,
  });
  fs.rmSync(dir, { recursive: true, force: true });
  return { failed: r.status !== 0, log: `${r.stdout}${r.stderr}` };
}

test('ci: the GitHub example certifies staging as a job the release needs, skips fork pull requests saying why, and runs only commands that exist', () => {
  const wf = read<Workflow>(GITHUB);
  expect(Object.keys(wf.on)).toEqual(expect.arrayContaining(['push', 'pull_request']));
  // Nothing triggers after publication: a release event would run once the release is out.
  expect(Object.keys(wf.on)).not.toContain('release');
  const certify = wf.jobs.certify!;
  expect(certify.if).toContain('vars.STAGING_BASE_URL');
  expect(certify.if).toContain('github.event.pull_request.head.repo.full_name == github.repository');
  const release = wf.jobs.release!;
  expect([release.needs].flat()).toContain('certify');
  expect(release.steps.some((s) => s.run?.includes('gh release create'))).toBe(true);
  const fork = wf.jobs['fork-pull-request']!;
  expect(fork.if).toContain('github.event.pull_request.head.repo.full_name != github.repository');
  expect(fork.steps.map((s) => s.run).join('\n')).toMatch(/forks get no secrets/);

  // The installed package, not a clone of the harness: no checkout, an npm install of the pinned harness.
  expect(certify.steps.some((s) => s.uses?.startsWith('actions/checkout'))).toBe(false);
  expect(certify.steps.some((s) => /npm install .*--omit=dev .*"\$INVENTORY_CONFORMANCE"/.test(s.run ?? ''))).toBe(true);
  expect(wf.env!.INVENTORY_CONFORMANCE).toMatch(/^git\+https:\/\/.+#v\d+\.\d+\.\d+$/);
  for (const job of Object.values(wf.jobs)) for (const s of job.steps) if (s.run) expect(commandProblems(s.run), s.run).toEqual([]);
  const certifyStep = certify.steps.find((s) => /inventory-conformance certify/.test(s.run ?? ''))!;
  for (const key of ['API_KEY', 'RATE_LIMIT_KEY', 'LOAD_KEY']) expect(certifyStep.env![key], key).toMatch(/^\$\{\{ secrets\.[A-Z_]+ \}\}$/);
  const upload = certify.steps.find((s) => s.uses?.startsWith('actions/upload-artifact'))!;
  for (const f of ['reports/junit.xml', 'reports/certificate.html', 'reports/certificate.json']) expect(upload.with!.path).toContain(f);
});

test('ci: the GitHub example job fails when verify fails, and passes when certify and verify pass', () => {
  const steps = read<Workflow>(GITHUB).jobs.certify!.steps;
  expect(steps.find((s) => s.run?.includes('verify'))!['continue-on-error']).toBeUndefined();
  const bad = runGithubSteps(steps, 1);
  expect(bad.failed, bad.log).toBe(true);
  expect(bad.log).toContain('verify verify reports/certificate.json');
  const good = runGithubSteps(steps, 0);
  expect(good.failed, good.log).toBe(false);
});

test('ci: the GitLab example runs certify and verify in script, only where the protected keys are, and release needs it', () => {
  const doc = read<Record<string, GitlabJob>>(GITLAB);
  const job = doc['certify-staging']!;
  expect(job.script.some((l) => /inventory-conformance certify/.test(l))).toBe(true);
  expect(job.script.some((l) => /inventory-conformance verify reports\/certificate\.json/.test(l))).toBe(true);
  expect(job.after_script ?? [], 'after_script failures never fail a GitLab job').toEqual([]);
  for (const l of job.script) expect(commandProblems(l), l).toEqual([]);
  expect(job.script.some((l) => /npm install .*--omit=dev .*"\$INVENTORY_CONFORMANCE"/.test(l))).toBe(true);
  for (const key of ['API_KEY', 'RATE_LIMIT_KEY', 'LOAD_KEY']) expect(job.variables![key], key).toMatch(/^\$STAGING_[A-Z_]+$/);
  // Protected variables reach only protected refs: the job runs only there, never on merge requests.
  const runsOn = job.rules!.filter((r) => r.when !== 'never').map((r) => r.if);
  expect(runsOn).toEqual(['$CI_COMMIT_REF_PROTECTED == "true"']);
  expect(JSON.stringify(job.rules)).not.toContain('merge_request_event');
  expect(job.artifacts!.reports.junit).toBe('reports/junit.xml');
  expect(job.artifacts!.paths).toEqual(expect.arrayContaining(['reports/certificate.html', 'reports/certificate.json']));
  expect(doc.release!.needs!.map((n) => (typeof n === 'string' ? n : n.job))).toContain('certify-staging');
});

test('ci: the GitLab example job fails when verify fails, and passes when certify and verify pass', () => {
  const script = read<Record<string, GitlabJob>>(GITLAB)['certify-staging']!.script;
  const bad = runGitlabScript(script, 1);
  expect(bad.failed, bad.log).toBe(true);
  expect(bad.log).toContain('verify verify reports/certificate.json');
  const good = runGitlabScript(script, 0);
  expect(good.failed, good.log).toBe(false);
});

test('ci: action.yml is a composite action whose inputs are flags of certify, keys come only through env, and it reports verdict, gate, exit code and certificate', () => {
  const action = read<Action>(ACTION);
  expect(action.runs.using).toBe('composite');
  for (const input of ['base-url', 'api-url', 'api-plan', 'rate-limit-plan', 'profile', 'strict', 'baseline', 'config', 'target'])
    expect(Object.keys(action.inputs)).toContain(input);
  // Inputs are written to the log: no key is one.
  expect(Object.keys(action.inputs).filter((i) => /key|token|secret/i.test(i))).toEqual([]);
  expect(Object.keys(action.outputs).sort()).toEqual(['certificate', 'exit-code', 'gate', 'verdict']);
  const steps = action.runs.steps;
  for (const s of steps) if (s.run) expect(commandProblems(s.run), s.run).toEqual([]);
  // Inputs reach the shell only as variables, never spliced into a script.
  for (const s of steps) if (s.run) expect(s.run, s.name).not.toMatch(/\$\{\{\s*inputs\./);
  // Every flag the certify step may add exists, with a value.
  const certify = steps.find((s) => s.id === 'certify')!;
  const flags = [...certify.run!.matchAll(/args\+=\((--[a-z-]+)( "\$\w+")?\)/g)].map((m) => (m[2] ? [m[1]!, 'value'] : [m[1]!]));
  expect(flags.length).toBeGreaterThanOrEqual(9);
  for (const f of flags) expect(parseArgs(['certify', ...f], SETTINGS).errors, f.join(' ')).toEqual([]);
  expect(certify.run).toContain('args=(certify)');
  // The harness at the action's own version, from its own checkout, installed without dev dependencies.
  const install = steps.find((s) => s.run?.includes('npm pack'))!.run!;
  expect(install).toContain('cd "$GITHUB_ACTION_PATH"');
  expect(install).toMatch(/npm i .*--omit=dev/);
  expect(
    steps.some(
      (s) =>
        s.uses?.startsWith('actions/upload-artifact') &&
        s.with!.path!.includes('reports/certificate.json') &&
        s.with!.path!.includes('reports/junit.xml'),
    ),
  ).toBe(true);
});

test('ci: the action fails when verify fails or certify fails, passes and reports its outputs when both pass', () => {
  const action = read<Action>(ACTION);
  const defaults = Object.fromEntries(Object.entries(action.inputs).map(([k, v]) => [k, v.default ?? '']));
  const bad = runGithubSteps(action.runs.steps, 1, defaults);
  expect(bad.failed, bad.log).toBe(true);
  const good = runGithubSteps(action.runs.steps, 0, { ...defaults, 'base-url': 'https://staging.example.com/v1', 'api-plan': 'pro' });
  expect(good.failed, good.log).toBe(false);
  expect(good.log).toContain('certify certify --base-url https://staging.example.com/v1 --api-plan pro --strict');
  expect(good.log).toMatch(/## read the outcome → exit 0/);
  // A failing gate (exit 4 under --strict) fails the action with that code, after the upload.
  const gateFails = runGithubSteps(action.runs.steps, 0, defaults, 4);
  expect(gateFails.failed, gateFails.log).toBe(true);
  expect(gateFails.log).toMatch(/## gate → exit 4/);
});

test('ci: the command check itself refuses what does not exist', () => {
  expect(commandProblems('npm run no-such-script')).toEqual(['npm script no-such-script does not exist']);
  expect(commandProblems('npx inventory-conformance certify --no-such-flag')).toEqual(['unknown option --no-such-flag']);
  expect(commandProblems('inventory-conformance certfy')[0]).toMatch(/unknown command/);
  expect(commandProblems('curl https://example.com | sh')[0]).toMatch(/unknown command/);
  expect(commandProblems('npm run certify')).toEqual([]);
});
