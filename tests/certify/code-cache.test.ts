import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, expect } from '../test.ts';
import { CODE_CACHE, playwrightEnv, withPreload } from '../../core/playwright-env.ts';
import { REPO_ROOT } from '../../core/paths.ts';

/**
 * core/code-cache.cjs, the preload of every Playwright process the tool starts: V8's code cache
 * for Playwright's own modules. Each test runs node processes with their own temp dir (TMPDIR), so
 * the cache's folder is the test's.
 */

interface Stats {
  hits: number;
  misses: number;
  rejected: number;
  folder?: string;
  modules: string[];
}

const UID = process.getuid!();
const cacheIn = (tmp: string) => path.join(tmp, `inventory-conformance-code-cache-${UID}`);

/** Runs `script` (CommonJS) in a node (with `nodeFlags`) with the preload and `tmp` as its temp dir; its stdout's last line as JSON, and the preload's stats. */
function run(tmp: string, script: string, nodeFlags: string[] = []): { value: unknown; stats: Stats } {
  const child = spawnSync(
    process.execPath,
    [
      ...nodeFlags,
      '-e',
      `${script}\nconsole.log(JSON.stringify({ value: globalThis.value, stats: globalThis[Symbol.for('inventory-conformance.code-cache')] }))`,
    ],
    {
      cwd: tmp,
      env: { PATH: process.env.PATH, TMPDIR: tmp, NODE_OPTIONS: withPreload(undefined, CODE_CACHE) },
      encoding: 'utf8',
      timeout: 30_000,
    },
  );
  expect(child.status, `the node process ran\n${child.stderr}`).toBe(0);
  expect(child.stderr, 'the preload prints nothing').toBe('');
  return JSON.parse(child.stdout.trim().split('\n').at(-1)!) as { value: unknown; stats: Stats };
}

/** A module of the `playwright` package in `tmp`, MIN_BYTES or more, exporting `value`. */
function playwrightModule(tmp: string, name: string, body: string): string {
  const file = path.join(tmp, 'node_modules', 'playwright', 'lib', name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${body}\n// ${'x'.repeat(20_000)}\n`);
  return file;
}

function withTemp(body: (tmp: string) => void): void {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'code-cache-test-'));
  try {
    body(tmp);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

test("Playwright's modules are compiled once: the next process reads them from the cache, private to the user, and they work the same", () => {
  withTemp((tmp) => {
    const load = `const { test, expect } = require(${JSON.stringify(path.join(REPO_ROOT, 'node_modules', '@playwright', 'test'))});
globalThis.value = [typeof test, typeof test.describe, typeof expect, typeof expect.extend];`;
    const first = run(tmp, load);
    expect(first.stats.misses, 'the first process compiles the bundles').toBeGreaterThan(0);
    expect(first.stats.hits).toBe(0);
    const entries = fs.readdirSync(cacheIn(tmp));
    expect(entries.length, 'it writes them as it exits').toBe(first.stats.misses);
    expect(fs.statSync(cacheIn(tmp)).mode & 0o777, 'the folder is private').toBe(0o700);
    for (const entry of entries) expect(fs.statSync(path.join(cacheIn(tmp), entry)).mode & 0o777, `${entry} is private`).toBe(0o600);

    const second = run(tmp, load);
    expect(second.stats, 'the next process reads every one of them').toMatchObject({ hits: first.stats.misses, misses: 0, rejected: 0 });
    expect(second.value, "Playwright's exports are the same").toEqual(first.value);
    expect(second.value).toEqual(['function', 'function', 'function', 'function']);
  });
});

test('the large modules of the installed Playwright that hold dynamic imports are cached: each holds the imports it was reviewed with', () => {
  withTemp((tmp) => {
    const modules = [
      'playwright-core/lib/coreBundle.js',
      'playwright-core/lib/utilsBundle.js',
      'playwright/lib/matchers/expect.js',
      'playwright/lib/transform/babelBundle.js',
    ];
    const paths = modules.map((m) => path.join(REPO_ROOT, 'node_modules', m));
    const { stats } = run(tmp, paths.map((p) => `require(${JSON.stringify(p)});`).join('\n'));
    for (const p of paths)
      expect(
        stats.modules,
        `${path.relative(REPO_ROOT, p)} is cached (after an upgrade of Playwright, read its imports again: core/code-cache.cjs REVIEWED)`,
      ).toContain(p);
  });
});

test('a module changed in place, to the same size, is compiled anew: code from the cache is never run for other source', () => {
  withTemp((tmp) => {
    const file = playwrightModule(tmp, 'same-size.js', "module.exports = 'A';");
    const script = `globalThis.value = require(${JSON.stringify(file)});`;
    expect(run(tmp, script).value).toBe('A');
    expect(run(tmp, script).stats.hits, 'read from the cache').toBe(1);
    const before = fs.statSync(file).size;
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace("'A'", "'B'"));
    expect(fs.statSync(file).size).toBe(before);
    expect(run(tmp, script).value, 'the module as it is now').toBe('B');
  });
});

test('the same module in another clone or project is read from the entry the first one wrote', () => {
  withTemp((tmp) => {
    const [a, b] = ['a', 'b'].map((project) => playwrightModule(path.join(tmp, project), 'shared.js', "module.exports = 'shared';"));
    expect(run(tmp, `globalThis.value = require(${JSON.stringify(a)});`).stats.misses).toBe(1);
    const other = run(tmp, `globalThis.value = require(${JSON.stringify(b)});`);
    expect(other.value).toBe('shared');
    expect(other.stats, "read from the first one's entry").toMatchObject({ hits: 1, misses: 0 });
  });
});

test('an entry V8 compiled under other flags is rejected and written anew; the module loads from its source', () => {
  withTemp((tmp) => {
    const file = playwrightModule(tmp, 'flags.js', 'module.exports = 6 * 7;');
    const script = `globalThis.value = require(${JSON.stringify(file)});`;
    run(tmp, script);
    const other = run(tmp, script, ['--stack-size=2000']);
    expect(other.value).toBe(42);
    expect(other.stats).toMatchObject({ hits: 0, rejected: 1 });
  });
});

test('a corrupt entry is rejected and written anew; the module loads from its source', () => {
  withTemp((tmp) => {
    const file = playwrightModule(tmp, 'corrupt.js', 'module.exports = 6 * 7;');
    const script = `globalThis.value = require(${JSON.stringify(file)});`;
    run(tmp, script);
    const [entry] = fs.readdirSync(cacheIn(tmp));
    fs.writeFileSync(path.join(cacheIn(tmp), entry), Buffer.alloc(4096, 7));
    const rejected = run(tmp, script);
    expect(rejected.value).toBe(42);
    expect(rejected.stats).toMatchObject({ hits: 0, rejected: 1 });
    expect(fs.readFileSync(path.join(cacheIn(tmp), entry)).equals(Buffer.alloc(4096, 7)), 'the entry is written anew').toBe(false);
    expect(run(tmp, script).stats.hits, 'the entry written anew is read').toBe(1);
  });
});

test('a module that holds a dynamic import is not cached, and its import works; a reviewed module is, with the imports it was reviewed with', () => {
  withTemp((tmp) => {
    const target = path.join(tmp, 'target.mjs');
    fs.writeFileSync(target, 'export const answer = 42;\n');
    const url = JSON.stringify(`file://${target}`);
    const plain = playwrightModule(tmp, 'imports.js', `exports.load = () => import(${url});`);
    const inEval = playwrightModule(tmp, 'eval-import.js', `exports.load = () => eval(\`import(\${JSON.stringify(${url})})\`);`);
    const small = path.join(tmp, 'node_modules', 'playwright', 'lib', 'small.js');
    fs.writeFileSync(small, 'module.exports = 1;\n');
    const other = path.join(tmp, 'node_modules', 'other', 'big.js');
    fs.mkdirSync(path.dirname(other), { recursive: true });
    fs.writeFileSync(other, `module.exports = 2;\n// ${'x'.repeat(20_000)}\n`);
    const script = `require(${JSON.stringify(small)}); require(${JSON.stringify(other)});
Promise.all([require(${JSON.stringify(plain)}).load(), require(${JSON.stringify(inEval)}).load()]).then(([a, b]) =>
  console.log(JSON.stringify({ value: [a.answer, b.answer], stats: globalThis[Symbol.for('inventory-conformance.code-cache')] })));`;
    for (let i = 0; i < 2; i++) {
      const result = run(tmp, script);
      expect(result.value, 'both dynamic imports work').toEqual([42, 42]);
      expect(result.stats, 'none of the modules is cached').toMatchObject({ hits: 0, misses: 0 });
    }
    expect(fs.readdirSync(cacheIn(tmp))).toEqual([]);

    // The reviewed `expect.js` holds one `import(` that the tool's runs never reach.
    const reviewed = path.join(tmp, 'node_modules', 'playwright', 'lib', 'matchers', 'expect.js');
    fs.mkdirSync(path.dirname(reviewed), { recursive: true });
    const load = `globalThis.value = require(${JSON.stringify(reviewed)});`;
    fs.writeFileSync(reviewed, `module.exports = 'reviewed'; async function never() { return import('x'); }\n// ${'x'.repeat(20_000)}\n`);
    expect(run(tmp, load).stats.misses, 'with the reviewed imports, it is cached').toBe(1);
    fs.writeFileSync(
      reviewed,
      `module.exports = 'changed'; async function never() { return [import('x'), import('y')]; }\n// ${'x'.repeat(20_000)}\n`,
    );
    const changed = run(tmp, load);
    expect(changed.value).toBe('changed');
    expect(changed.stats, 'with an import more, it is not').toMatchObject({ hits: 0, misses: 0 });
  });
});
test('a cache folder that others may write, or that is a link, is not used: nothing is read or written there, and modules load', () => {
  for (const kind of ['open to others', 'a link'] as const)
    withTemp((tmp) => {
      const elsewhere = path.join(tmp, 'elsewhere');
      fs.mkdirSync(elsewhere, { mode: 0o700 });
      if (kind === 'a link') fs.symlinkSync(elsewhere, cacheIn(tmp), 'dir');
      else {
        fs.mkdirSync(cacheIn(tmp));
        fs.chmodSync(cacheIn(tmp), 0o777);
      }
      const file = playwrightModule(tmp, 'module.js', "module.exports = 'loaded';");
      const script = `globalThis.value = require(${JSON.stringify(file)});`;
      for (let i = 0; i < 2; i++) {
        const result = run(tmp, script);
        expect(result.value, kind).toBe('loaded');
        expect(result.stats, kind).toEqual({ hits: 0, misses: 0, rejected: 0, modules: [] });
      }
      expect(fs.readdirSync(elsewhere), kind).toEqual([]);
      expect(fs.readdirSync(cacheIn(tmp)), kind).toEqual([]);
    });
});

test("the tool's Playwright processes load the preload after the caller's own NODE_OPTIONS, once, whatever the preload's path holds", () => {
  withTemp((tmp) => {
    const odd = path.join(tmp, 'a folder with "quotes" and \\ back');
    fs.mkdirSync(odd);
    const preload = path.join(odd, 'code-cache.cjs');
    fs.copyFileSync(CODE_CACHE, preload);
    fs.copyFileSync(path.join(path.dirname(CODE_CACHE), 'private-folder.cjs'), path.join(odd, 'private-folder.cjs'));
    const options = withPreload('--max-old-space-size=300', preload);
    expect(withPreload(options, preload), 'added once').toBe(options);
    const child = spawnSync(
      process.execPath,
      [
        '-e',
        "console.log(JSON.stringify([!!globalThis[Symbol.for('inventory-conformance.code-cache')], require('node:v8').getHeapStatistics().heap_size_limit]))",
      ],
      { env: { PATH: process.env.PATH, TMPDIR: tmp, NODE_OPTIONS: options }, encoding: 'utf8', timeout: 30_000 },
    );
    expect(child.status, child.stderr).toBe(0);
    const [loaded, limit] = JSON.parse(child.stdout) as [boolean, number];
    expect(loaded, 'the preload ran').toBe(true);
    expect(limit, "the caller's option holds").toBeLessThan(400 * 1024 * 1024);
  });
  expect(playwrightEnv({ PATH: '/usr/bin' }, {}, '.ts').NODE_OPTIONS).toBe(withPreload(undefined, CODE_CACHE));
  expect(playwrightEnv({ NODE_OPTIONS: '--trace-warnings' }, {}, '.ts').NODE_OPTIONS).toBe(withPreload('--trace-warnings', CODE_CACHE));
});
