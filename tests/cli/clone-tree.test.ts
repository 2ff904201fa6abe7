import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, expect } from '../test.ts';
import { REPO_ROOT } from '../../core/paths.ts';
// @ts-expect-error: a plain JavaScript module of the launcher, without types
import { cloneTree, inputsDigest } from '../../cli/tree.mjs';

// A clone runs the harness from a tree built from its sources (cli/tree.mjs), kept in a private
// folder of the temp dir: these tests point the temp dir elsewhere, so that they judge their own.
const BIN = path.join(REPO_ROOT, 'cli', 'bin.mjs');
const treeOf = cloneTree as (root: string) => string | undefined;
const uid = process.getuid?.() ?? 'user';

function withTmpdir<T>(run: (tmp: string) => T): T {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'clone-tree-'));
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = tmp;
  try {
    return run(tmp);
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** A tree as cloneTree leaves one (`key`), built from `clone`, last started from `usedAt`. */
function plantTree(folder: string, key: string, clone: string, usedAt: Date): string {
  const dir = path.join(folder, key);
  fs.mkdirSync(path.join(dir, 'tree'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'tree', 'clone-root'), clone);
  fs.writeFileSync(path.join(dir, 'tree', 'clone-tree-ready'), '');
  fs.writeFileSync(path.join(dir, 'used'), '');
  fs.utimesSync(path.join(dir, 'used'), usedAt, usedAt);
  return dir;
}

test('the clone tree is built once, whole, in a private folder, names its clone, and is reused while the sources stay the same', () => {
  withTmpdir((tmp) => {
    const folder = path.join(tmp, `inventory-conformance-trees-${uid}`);
    fs.mkdirSync(folder, { mode: 0o700 });
    // What a new build removes: the tree of a clone that is gone, and one unused for two days;
    // the tree of another clone started from an hour ago stays.
    const gone = plantTree(folder, 'gone', path.join(tmp, 'deleted-clone'), new Date());
    const old = plantTree(folder, 'old', tmp, new Date(Date.now() - 48 * 3600_000));
    const recent = plantTree(folder, 'recent', tmp, new Date(Date.now() - 3600_000));
    const entry = treeOf(REPO_ROOT);
    expect(entry, 'a tree was built').toBeDefined();
    expect(entry!.startsWith(`${folder}${path.sep}`)).toBe(true);
    expect([fs.existsSync(gone), fs.existsSync(old), fs.existsSync(recent)], 'gone, old, recent').toEqual([false, false, true]);
    expect(fs.statSync(folder).mode & 0o777, 'only its user may enter it').toBe(0o700);
    const tree = path.resolve(path.dirname(entry!), '..');
    expect(fs.readFileSync(path.join(tree, 'clone-root'), 'utf8')).toBe(REPO_ROOT);
    expect(fs.existsSync(path.join(tree, 'suites', 'requirements.yaml')), 'with the data files').toBe(true);
    const built = fs.statSync(entry!).mtimeMs;
    expect(treeOf(REPO_ROOT), 'the same tree again').toBe(entry);
    expect(fs.statSync(entry!).mtimeMs, 'not built again').toBe(built);
    expect(
      fs.readdirSync(folder).filter((n) => n.startsWith('build-')),
      'no build left behind',
    ).toEqual([]);
  });
});

test('the clone tree is keyed by every input: a changed source file changes the digest', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'clone-tree-root-'));
  try {
    fs.mkdirSync(path.join(root, 'core'));
    fs.writeFileSync(path.join(root, 'core', 'a.ts'), 'export const a = 1;\n');
    const before = inputsDigest(root);
    expect(inputsDigest(root), 'stable').toBe(before);
    fs.writeFileSync(path.join(root, 'core', 'a.ts'), 'export const a = 2;\n');
    expect(inputsDigest(root)).not.toBe(before);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

// Another user's code must never run as this user's harness: a folder anybody else may write into,
// or a link to elsewhere, is not used; the clone then runs its sources through tsx.
const UNSAFE: Array<{ name: string; make: (folder: string, tmp: string) => void }> = [
  { name: 'a folder others may write into', make: (folder) => fs.mkdirSync(folder, { mode: 0o777 }) },
  {
    name: 'a link to another folder',
    make: (folder, tmp) => {
      fs.mkdirSync(path.join(tmp, 'elsewhere'), { mode: 0o700 });
      fs.symlinkSync(path.join(tmp, 'elsewhere'), folder);
    },
  },
];
for (const u of UNSAFE) {
  test(`the clone tree's folder as ${u.name} is not used, nothing is built, and the CLI runs from the sources`, () => {
    withTmpdir((tmp) => {
      const folder = path.join(tmp, `inventory-conformance-trees-${uid}`);
      u.make(folder, tmp);
      fs.chmodSync(folder, 0o777);
      expect(treeOf(REPO_ROOT)).toBeUndefined();
      expect(fs.readdirSync(folder), 'nothing built into it').toEqual([]);
      const r = spawnSync(process.execPath, [BIN, '--version'], {
        encoding: 'utf8',
        env: { ...process.env, TMPDIR: tmp },
        timeout: 60_000,
      });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^inventory-conformance \d+\.\d+\.\d+/);
      expect(fs.readdirSync(folder)).toEqual([]);
    });
  });
}
