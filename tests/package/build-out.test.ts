import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, expect } from '../test.ts';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from '../../core/paths.ts';

// `cli/build.mjs --out` builds the compiled tree elsewhere than dist/ (the fault matrix certifies
// with such a tree, faults/tree.ts). The build replaces what it builds into, so a folder that holds
// anything is refused before anything is written or removed.
test('build --out refuses a folder that holds files, leaves it as it was, and exits 2 naming it', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'build-out-'));
  try {
    const mine = path.join(dir, 'notes.txt');
    fs.writeFileSync(mine, 'a user file');
    const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'cli', 'build.mjs'), '--out', dir], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain(`--out needs a folder that does not exist yet or is empty: ${dir} is not`);
    expect(fs.readdirSync(dir)).toEqual(['notes.txt']);
    expect(fs.readFileSync(mine, 'utf8')).toBe('a user file');
    const none = spawnSync(process.execPath, [path.join(REPO_ROOT, 'cli', 'build.mjs'), '--out'], { encoding: 'utf8', timeout: 60_000 });
    expect(none.status, 'no folder named').toBe(2);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * Runs `cli/build.mjs --out <a new folder's tree> …flags` and `check` on it (with the build's
 * result), then removes the folder.
 */
async function withBuild(flags: string[], check: (dir: string, build: ReturnType<typeof spawnSync>) => void | Promise<void>) {
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'build-out-')), 'tree');
  try {
    const build = spawnSync(process.execPath, [path.join(REPO_ROOT, 'cli', 'build.mjs'), '--out', dir, ...flags], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    await check(dir, build);
  } finally {
    fs.rmSync(path.dirname(dir), { recursive: true, force: true });
  }
}

// `--transpile` (the fault matrix's tree, faults/tree.ts): the same tree with its modules
// transpiled by esbuild, each alone, whose relative imports name the compiled `.js` as tsc's
// `rewriteRelativeImportExtensions` does; dist/ itself is only ever compiled by tsc.
test('build --out --transpile writes every module as .js whose relative imports name .js, and runs', async () => {
  await withBuild(['--transpile'], (dir, r) => {
    expect(r.status, String(r.stderr)).toBe(0);
    const modules = fs.readdirSync(path.join(REPO_ROOT, 'core')).filter((f) => f.endsWith('.ts'));
    for (const m of modules) expect(fs.existsSync(path.join(dir, 'core', m.replace(/\.ts$/, '.js'))), m).toBe(true);
    expect(fs.existsSync(path.join(dir, 'certify', 'bench.js')), 'excluded by tsconfig.build.json').toBe(false);
    const texts = fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.js'));
    const tsImports = texts.filter((f) =>
      /(?:from\s*|import\s*\(\s*)["']\.{1,2}\/[^"']*\.ts["']/.test(fs.readFileSync(path.join(dir, f), 'utf8')),
    );
    expect(tsImports, 'modules that still import a .ts').toEqual([]);
    // Without --source-maps: no map, and no TypeScript source in the tree.
    expect(fs.readFileSync(path.join(dir, 'suites', 'auth', 'bearer.spec.js'), 'utf8')).not.toContain('sourceMappingURL');
    expect(texts.length).toBeGreaterThan(100);
    expect(
      fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')),
      'TypeScript sources in the tree',
    ).toEqual([]);
    // Node alone runs a module (imported from TypeScript, with a tree that holds the sources,
    // finding.js would resolve to the finding.ts beside it).
    const run = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const f = await import(${JSON.stringify(pathToFileURL(path.join(dir, 'core', 'finding.js')).href)}); process.stdout.write(f.formatFinding({ id: 'X-01', level: 'fail', message: 'm', expected: 'a', observed: 'b' }));`,
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    expect(run.stdout, run.stderr).toBe('X-01 m: expected a; observed b');
  });
});

test('build --transpile without --out, and --source-maps without --transpile, exit 2 and build nothing', async () => {
  const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'cli', 'build.mjs'), '--transpile'], { encoding: 'utf8', timeout: 60_000 });
  expect(r.status, r.stderr).toBe(2);
  expect(r.stderr).toContain('--transpile builds only a tree elsewhere (--out <folder>)');
  await withBuild(['--source-maps'], (dir, m) => {
    expect(m.status, String(m.stderr)).toBe(2);
    expect(String(m.stderr)).toContain('--source-maps goes with --transpile');
    expect(fs.existsSync(dir), 'nothing built').toBe(false);
  });
});

// `--source-maps` (a clone's own tree, cli/tree.mjs): Playwright reads the maps, so the tree's
// tests stand at the lines of the TypeScript sources, and a run from the clone's tree names
// `suites/auth/bearer.spec.ts:34` as a run from the sources does.
test("build --out --transpile --source-maps: Playwright lists the tree's tests at the same files and lines as the sources'", async () => {
  await withBuild(['--transpile', '--source-maps'], (dir, r) => {
    expect(r.status, String(r.stderr)).toBe(0);
    // Each module's inline map names its source beside it, and the source is there.
    const spec = fs.readFileSync(path.join(dir, 'suites', 'auth', 'bearer.spec.js'), 'utf8');
    const inline = /\/\/# sourceMappingURL=data:application\/json;base64,(\S+)\s*$/.exec(spec);
    expect(inline, 'an inline source map').not.toBeNull();
    expect(JSON.parse(Buffer.from(inline![1]!, 'base64').toString('utf8')).sources).toEqual(['bearer.spec.ts']);
    expect(fs.readFileSync(path.join(dir, 'suites', 'auth', 'bearer.spec.ts'), 'utf8')).toBe(
      fs.readFileSync(path.join(REPO_ROOT, 'suites', 'auth', 'bearer.spec.ts'), 'utf8'),
    );
    fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    const list = (root: string, config: string) => {
      const l = spawnSync(
        process.execPath,
        [path.join(REPO_ROOT, 'node_modules', '@playwright', 'test', 'cli.js'), 'test', '--list', '--project=functional', '-c', config],
        {
          cwd: root,
          encoding: 'utf8',
          timeout: 120_000,
          env: { PATH: process.env.PATH, HOME: process.env.HOME, REPORTS_DIR: path.join(path.dirname(dir), 'reports') },
        },
      );
      expect(l.status, l.stderr).toBe(0);
      return l.stdout.split('\n').filter((line) => line.includes('[functional]'));
    };
    const fromSources = list(REPO_ROOT, 'playwright.config.ts');
    expect(fromSources.length).toBeGreaterThan(50);
    expect(list(dir, 'playwright.config.js')).toEqual(fromSources);
  });
});
