import fs from 'node:fs';
import path from 'node:path';
import { test, expect } from '@playwright/test';
import YAML from 'yaml';
import { parseArgs } from '../../cli/args.ts';
import { SETTINGS } from '../../settings/index.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string>; scripts: Record<string, string> };
const GITHUB = '.github/workflows/certify-staging.example.yml';
const GITLAB = 'ci/gitlab-ci.example.yml';

/** Problems of one shell command line the examples run (empty: it exists and parses). */
function commandProblems(line: string): string[] {
  const words = line.trim().split(/\s+/);
  if (words[0] === 'npm' && words[1] === 'ci') return [];
  if (words[0] === 'npm' && words[1] === 'run') return words[2]! in pkg.scripts ? [] : [`npm script ${words[2]} does not exist`];
  if (words[0] === 'npx' && words[1] === 'inventory-conformance') {
    if (!fs.existsSync(path.join(ROOT, pkg.bin['inventory-conformance'] ?? '-'))) return ['package.json has no inventory-conformance bin'];
    const parsed = parseArgs(words.slice(2), SETTINGS);
    return parsed.errors.length ? parsed.errors : parsed.command === 'help' ? ['no subcommand'] : [];
  }
  return [`unknown command: ${line}`];
}

test('ci: the GitHub Actions example certifies staging on pull requests and releases, with keys from secrets, and uploads JUnit and the certificate', () => {
  const wf = YAML.parse(fs.readFileSync(path.join(ROOT, GITHUB), 'utf8')) as {
    on: Record<string, unknown>;
    jobs: Record<string, { if?: string; steps: { run?: string; uses?: string; env?: Record<string, string>; with?: Record<string, string> }[] }>;
  };
  expect(Object.keys(wf.on)).toEqual(expect.arrayContaining(['pull_request', 'release']));
  const job = wf.jobs.certify!;
  // Skipped where STAGING_BASE_URL is not configured, this repository included.
  expect(job.if).toContain('vars.STAGING_BASE_URL');
  const runs = job.steps.filter((s) => s.run).flatMap((s) => s.run!.split('\n').filter((l) => l.trim()));
  expect(runs.some((r) => /inventory-conformance certify/.test(r))).toBe(true);
  for (const r of runs) expect(commandProblems(r), r).toEqual([]);
  const env = job.steps.find((s) => s.run?.includes('certify'))!.env!;
  for (const key of ['API_KEY', 'RATE_LIMIT_KEY', 'LOAD_KEY']) expect(env[key], key).toMatch(/^\$\{\{ secrets\.[A-Z_]+ \}\}$/);
  const upload = job.steps.find((s) => s.uses?.startsWith('actions/upload-artifact'))!;
  expect(upload.with!.path).toContain('reports/junit.xml');
  expect(upload.with!.path).toContain('reports/certificate.html');
  expect(upload.with!.path).toContain('reports/certificate.json');
});

test('ci: the GitLab CI example runs only commands that exist and keeps JUnit and the certificate', () => {
  const doc = YAML.parse(fs.readFileSync(path.join(ROOT, GITLAB), 'utf8')) as Record<string, { script: string[]; after_script?: string[]; variables: Record<string, string>; artifacts: { paths: string[]; reports: { junit: string } } }>;
  const job = doc['certify-staging']!;
  const lines = [...job.script, ...(job.after_script ?? [])];
  expect(lines.some((l) => /inventory-conformance certify/.test(l))).toBe(true);
  for (const l of lines) expect(commandProblems(l), l).toEqual([]);
  for (const key of ['API_KEY', 'RATE_LIMIT_KEY', 'LOAD_KEY']) expect(job.variables[key], key).toMatch(/^\$STAGING_[A-Z_]+$/);
  expect(job.artifacts.reports.junit).toBe('reports/junit.xml');
  expect(job.artifacts.paths).toEqual(expect.arrayContaining(['reports/certificate.html', 'reports/certificate.json']));
});

test('ci: the command check itself refuses what does not exist', () => {
  expect(commandProblems('npm run no-such-script')).toEqual(['npm script no-such-script does not exist']);
  expect(commandProblems('npx inventory-conformance certify --no-such-flag')).toEqual(['unknown option --no-such-flag']);
  expect(commandProblems('npx inventory-conformance certfy')[0]).toMatch(/unknown command/);
  expect(commandProblems('npm run certify')).toEqual([]);
});
