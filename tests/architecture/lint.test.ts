/**
 * One linter decides: `biome lint` with the rules of `biome.json` (the recommended set, less the
 * idioms this code relies on, each named there) finds nothing in any source folder. One formatter
 * decides too: `biome format` (the formatter of `biome.json`: code and JSON; Markdown, YAML and the
 * generated `schemas/json/` are left as written, since the spec is pinned by its digest and the
 * generators' tables and schemas are compared byte for byte) would change no file. Planted
 * findings show each check can fail.
 */
import { test, expect } from '../test.ts';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { REPO_ROOT } from '../../core/paths.ts';

const BIOME = path.join(path.dirname(createRequire(import.meta.url).resolve('@biomejs/biome/package.json')), 'bin', 'biome');

/** `biome lint` in `cwd` (warnings count as findings); its exit status and output. */
function lint(cwd: string, ...targets: string[]): { status: number | null; output: string } {
  const r = spawnSync(process.execPath, [BIOME, 'lint', '--error-on-warnings', '--max-diagnostics=50', ...targets], {
    cwd,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/** What `biome format` (check only, nothing written) reports in `cwd`: the files it would change, sorted, and any other error it met. */
function unformatted(cwd: string, ...targets: string[]): { files: string[]; errors: string[] } {
  const r = spawnSync(process.execPath, [BIOME, 'format', '--reporter=json', '--max-diagnostics=none', ...targets], {
    cwd,
    encoding: 'utf8',
    timeout: 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  let report: { diagnostics?: { category?: string; message?: string; location?: { path?: string } }[] };
  try {
    report = JSON.parse(r.stdout) as typeof report;
  } catch {
    return {
      files: [],
      errors: [`biome format gave no JSON report (exit ${r.status}${r.error ? `, ${r.error.message}` : ''}): ${r.stderr.slice(0, 2000)}`],
    };
  }
  const diagnostics = report.diagnostics ?? [];
  const files = diagnostics.filter((d) => d.category === 'format').map((d) => d.location?.path ?? '(no path)');
  const errors = diagnostics.filter((d) => d.category !== 'format').map((d) => `${d.location?.path ?? ''} ${d.category}: ${d.message}`);
  if (r.status !== 0 && !files.length && !errors.length) errors.push(`biome format exited ${r.status}: ${r.stderr.slice(0, 2000)}`);
  return { files: [...new Set(files)].sort(), errors };
}

/** The repository's biome.json in `dir` (outside a git checkout: no ignore file applies). */
function copyConfig(dir: string): void {
  const {
    vcs: _vcs,
    $schema: _schema,
    ...config
  } = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'biome.json'), 'utf8')) as Record<string, unknown>;
  fs.writeFileSync(path.join(dir, 'biome.json'), JSON.stringify(config));
}

test('biome lint finds nothing in the repository', () => {
  const r = lint(REPO_ROOT, '.');
  expect(r.status, r.output).toBe(0);
});

test('a planted unused import and a let never reassigned are found, naming the file and the rule', () => {
  // A folder of its own with the repository's rules (outside a git checkout: no ignore file applies).
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lint-'));
  try {
    copyConfig(dir);
    fs.writeFileSync(
      path.join(dir, 'planted.ts'),
      "import fs from 'node:fs';\nexport function f(): number {\n  let n = 1;\n  return n;\n}\n",
    );
    const r = lint(dir, 'planted.ts');
    expect(r.status).not.toBe(0);
    expect(r.output).toContain('planted.ts');
    expect(r.output).toMatch(/noUnusedImports|useConst/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('biome format would change no file of the repository (npm run format)', () => {
  const r = unformatted(REPO_ROOT, '.');
  expect(r.errors, 'biome format met errors').toEqual([]);
  expect(r.files, 'files not formatted: run npm run format').toEqual([]);
});

test('a planted badly formatted file is named; a formatted one, Markdown, YAML and the generated schemas/json are not', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'format-'));
  try {
    copyConfig(dir);
    fs.mkdirSync(path.join(dir, 'schemas', 'json'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'planted.ts'), 'export function f( a:number ){return a+1}\n');
    fs.writeFileSync(path.join(dir, 'formatted.ts'), 'export function f(a: number) {\n  return a + 1;\n}\n');
    fs.writeFileSync(path.join(dir, 'planted.json'), '{"a":[1,2],\n"b":{}}\n');
    fs.writeFileSync(path.join(dir, 'table.md'), '| a | b |\n|---|---|\n| long value | x |\n');
    fs.writeFileSync(path.join(dir, 'doc.yaml'), 'a:   1\nb:\n    - x\n');
    fs.writeFileSync(path.join(dir, 'schemas', 'json', 'X.schema.json'), '{"type":"object",\n"properties":{}}\n');
    const r = unformatted(dir, 'planted.ts', 'formatted.ts', 'planted.json', 'table.md', 'doc.yaml', 'schemas');
    expect(r.errors).toEqual([]);
    expect(r.files).toEqual(['planted.json', 'planted.ts']);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
