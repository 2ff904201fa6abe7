/**
 * One linter decides: `biome lint` with the rules of `biome.json` (the recommended set, less the
 * idioms this code relies on, each named there) finds nothing in any source folder. A planted
 * finding shows the check can fail.
 */
import { test, expect } from '@playwright/test';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { REPO_ROOT } from '../../core/paths.ts';

const BIOME = path.join(path.dirname(createRequire(import.meta.url).resolve('@biomejs/biome/package.json')), 'bin', 'biome');

/** `biome lint` in `cwd` (warnings count as findings); its exit status and output. */
function lint(cwd: string, ...targets: string[]): { status: number | null; output: string } {
  const r = spawnSync(process.execPath, [BIOME, 'lint', '--error-on-warnings', '--max-diagnostics=50', ...targets], { cwd, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

test('biome lint finds nothing in the repository', () => {
  const r = lint(REPO_ROOT, '.');
  expect(r.status, r.output).toBe(0);
});

test('a planted unused import and a let never reassigned are found, naming the file and the rule', () => {
  // A folder of its own with the repository's rules (outside a git checkout: no ignore file applies).
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lint-'));
  try {
    const { vcs: _vcs, $schema: _schema, ...config } = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'biome.json'), 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(path.join(dir, 'biome.json'), JSON.stringify(config));
    fs.writeFileSync(path.join(dir, 'planted.ts'), "import fs from 'node:fs';\nexport function f(): number {\n  let n = 1;\n  return n;\n}\n");
    const r = lint(dir, 'planted.ts');
    expect(r.status).not.toBe(0);
    expect(r.output).toContain('planted.ts');
    expect(r.output).toMatch(/noUnusedImports|useConst/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
