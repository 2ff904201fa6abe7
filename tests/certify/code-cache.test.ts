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

/** A module exporting 42, loaded once so that its entry is written: the script that loads it, and the entry's path. */
function cachedOnce(tmp: string): { script: string; entry: string } {
  const file = playwrightModule(tmp, 'answer.js', 'module.exports = 6 * 7;');
  const script = `globalThis.value = require(${JSON.stringify(file)});`;
  run(tmp, script);
  const [name] = fs.readdirSync(cacheIn(tmp));
  return { script, entry: path.join(cacheIn(tmp), name) };
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

test('the large modules of the installed Playwright that hold dynamic imports are cached: each is the text that was reviewed', () => {
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

test('a module of the same text at another path (another clone) is compiled anew: its stack traces name its own path', () => {
  withTemp((tmp) => {
    const body = "exports.where = () => new Error('here').stack.split('\\n')[1];";
    const [a, b] = ['a', 'b'].map((project) => playwrightModule(path.join(tmp, project), 'stack.js', body));
    expect(run(tmp, `globalThis.value = require(${JSON.stringify(a)}).where();`).value).toContain(a);
    const other = run(tmp, `globalThis.value = require(${JSON.stringify(b)}).where();`);
    expect(other.stats, 'compiled anew').toMatchObject({ hits: 0, misses: 1 });
    expect(other.value, 'the frame names the module loaded').toContain(b);
    expect(run(tmp, `globalThis.value = require(${JSON.stringify(b)}).where();`).value, 'and so it does from its own entry').toContain(b);
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

test('an entry whose header or payload is damaged is rejected by its checksum and written anew; the module loads from its source', () => {
  for (const damage of ['header', 'payload'] as const)
    withTemp((tmp) => {
      const { script, entry } = cachedOnce(tmp);
      const damaged = fs.readFileSync(entry);
      // V8 checks no more than its own header: bits flipped past it would be run.
      if (damage === 'header') damaged.fill(7, 0, 64);
      else for (const at of [200, 700, damaged.length - 9]) damaged[at] ^= 0x15;
      fs.writeFileSync(entry, damaged);
      const rejected = run(tmp, script);
      expect(rejected.value, damage).toBe(42);
      expect(rejected.stats, damage).toMatchObject({ hits: 0, rejected: 1 });
      expect(fs.readFileSync(entry).equals(damaged), `${damage}: the entry is written anew`).toBe(false);
      expect(run(tmp, script).stats.hits, `${damage}: the entry written anew is read`).toBe(1);
    });
});

test('an entry that is a link or not a regular file is not read: the module compiles from its source, and nothing hangs', () => {
  for (const kind of ['a link to a sound entry', 'a named pipe'] as const)
    withTemp((tmp) => {
      const { script, entry } = cachedOnce(tmp);
      if (kind === 'a named pipe') {
        fs.rmSync(entry);
        expect(spawnSync('mkfifo', [entry]).status, 'mkfifo').toBe(0);
      } else {
        fs.renameSync(entry, path.join(tmp, 'sound.v8'));
        fs.symlinkSync(path.join(tmp, 'sound.v8'), entry);
      }
      const result = run(tmp, script);
      expect(result.value, kind).toBe(42);
      expect(result.stats.hits, kind).toBe(0);
    });
});

test('a module that holds a dynamic import, however written, is not cached, and its import works; nor is one at a reviewed path with another text', () => {
  withTemp((tmp) => {
    const target = path.join(tmp, 'target.mjs');
    fs.writeFileSync(target, 'export const answer = 42;\n');
    const url = JSON.stringify(`file://${target}`);
    const forms = [
      `exports.load = () => import(${url});`,
      `exports.load = () => import (${url});`,
      `exports.load = () => import/* a comment */(${url});`,
      `exports.load = () => eval(\`import(\${JSON.stringify(${url})})\`);`,
    ].map((body, i) => playwrightModule(tmp, `imports-${i}.js`, body));
    const small = path.join(tmp, 'node_modules', 'playwright', 'lib', 'small.js');
    fs.writeFileSync(small, 'module.exports = 1;\n');
    const other = path.join(tmp, 'node_modules', 'other', 'big.js');
    fs.mkdirSync(path.dirname(other), { recursive: true });
    fs.writeFileSync(other, `module.exports = 2;\n// ${'x'.repeat(20_000)}\n`);
    const script = `require(${JSON.stringify(small)}); require(${JSON.stringify(other)});
Promise.all(${JSON.stringify(forms)}.map((f) => require(f).load())).then((modules) =>
  console.log(JSON.stringify({ value: modules.map((m) => m.answer), stats: globalThis[Symbol.for('inventory-conformance.code-cache')] })));`;
    for (let i = 0; i < 2; i++) {
      const result = run(tmp, script);
      expect(result.value, 'every dynamic import works').toEqual([42, 42, 42, 42]);
      expect(result.stats, 'none of the modules is cached').toMatchObject({ hits: 0, misses: 0 });
    }
    expect(fs.readdirSync(cacheIn(tmp))).toEqual([]);

    // At the path of the reviewed `expect.js`, with a text that is not the one reviewed.
    const reviewed = path.join(tmp, 'node_modules', 'playwright', 'lib', 'matchers', 'expect.js');
    fs.mkdirSync(path.dirname(reviewed), { recursive: true });
    fs.writeFileSync(reviewed, `module.exports = 'other'; async function never() { return import('x'); }\n// ${'x'.repeat(20_000)}\n`);
    const result = run(tmp, `globalThis.value = require(${JSON.stringify(reviewed)});`);
    expect(result.value).toBe('other');
    expect(result.stats, 'not cached').toMatchObject({ hits: 0, misses: 0 });
  });
});

test('a temp dir on a path others could change (a folder they may write, without the sticky bit) is not used; with the sticky bit it is', () => {
  withTemp((tmp) => {
    const shared = path.join(tmp, 'shared');
    fs.mkdirSync(shared);
    const file = playwrightModule(tmp, 'module.js', "module.exports = 'loaded';");
    const script = `globalThis.value = require(${JSON.stringify(file)});`;
    fs.chmodSync(shared, 0o777);
    const open = run(shared, script);
    expect(open.value).toBe('loaded');
    expect(open.stats, 'not used').toEqual({ hits: 0, misses: 0, rejected: 0, modules: [] });
    expect(fs.readdirSync(shared), 'nothing written').toEqual([]);
    fs.chmodSync(shared, 0o1777);
    expect(run(shared, script).stats, 'used').toMatchObject({ misses: 1, folder: cacheIn(shared) });
  });
});

test('a patched module wrapper is a different entry: the module runs in the wrapper of its process', () => {
  withTemp((tmp) => {
    const file = playwrightModule(tmp, 'wrapped.js', 'module.exports = globalThis.W;');
    const patch = (value: string) => {
      const preload = path.join(tmp, `patch-${value}.cjs`);
      fs.writeFileSync(preload, `require('module').wrapper[0] += 'globalThis.W = ${JSON.stringify(value)};';\n`);
      return ['--require', preload];
    };
    const script = `globalThis.value = require(${JSON.stringify(file)});`;
    expect(run(tmp, script, patch('one')).value).toBe('one');
    expect(run(tmp, script, patch('two')).value).toBe('two');
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
