// The clone's transpiled tree: `cli/bin.mjs` in a clone runs the harness from a copy of the
// package's tree built from the clone's sources (`cli/build.mjs --out --transpile --source-maps`,
// so that a run names the sources' files and lines), kept in a private folder of the OS temp dir
// and built again whenever a source changes. Every process of a
// run (certify, the reference server, Playwright's runners and workers) then loads plain
// JavaScript: none compiles TypeScript, which on a first run is most of the time before the first
// request. Also the digest of the build's inputs, which `cli/build.mjs` records in dist/.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { privateFolder } from '../core/private-folder.cjs';

/** Folders whose files the build reads: the modules, and the data files a run reads beside them. */
export const DATA_DIRS = ['core', 'certify', 'cli', 'settings', 'suites', 'schemas', 'reference-server', 'fixtures', 'spec'];
/** Top-level files the build reads besides DATA_DIRS. */
export const INPUT_FILES = ['playwright.config.ts', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'];

/** SHA-256 over every input file under `root`, by path: the same digest means the tree would be built the same. */
export function inputsDigest(root) {
  const hash = createHash('sha256');
  const walk = (rel) => {
    const abs = path.join(root, rel);
    if (!fs.existsSync(abs)) return;
    if (!fs.statSync(abs).isDirectory()) return void hash.update(`${rel}\0`).update(fs.readFileSync(abs)).update('\0');
    for (const name of fs.readdirSync(abs).sort()) if (name !== 'node_modules' && !name.startsWith('.')) walk(path.join(rel, name));
  };
  for (const input of [...DATA_DIRS, ...INPUT_FILES]) walk(input);
  return hash.digest('hex');
}

/** Written last into a tree the clone runs: its presence says the tree is whole. */
const READY_FILE = 'clone-tree-ready';
/** Written into a tree the clone runs: the clone it was built from (`PROJECT_ROOT`, core/paths.ts). */
export const CLONE_ROOT_FILE = 'clone-root';
/** How long a build may take (esbuild over the harness: under a second on a quiet 2-core machine). */
const BUILD_TIMEOUT_MS = 60_000;
/** A tree no run has started from for this long is removed when another is built. */
const UNUSED_MS = 24 * 60 * 60 * 1000;

/** Builds the tree of `root` into `out` (a new folder); true when it is whole. */
function buildInto(root, out) {
  const build = spawnSync(process.execPath, [path.join(root, 'cli', 'build.mjs'), '--out', out, '--transpile', '--source-maps'], {
    cwd: root,
    stdio: 'ignore',
    timeout: BUILD_TIMEOUT_MS,
    killSignal: 'SIGKILL',
  });
  if (build.status !== 0) return false;
  // Its packages resolve from the clone's node_modules, as the clone's sources do.
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(out, 'node_modules'), 'dir');
  fs.writeFileSync(path.join(out, CLONE_ROOT_FILE), root);
  fs.writeFileSync(path.join(out, READY_FILE), '');
  return true;
}

/**
 * Removes from `folder`, but `keep`: the trees of clones that no longer exist, the trees no run has
 * started from for UNUSED_MS, and builds abandoned as long ago.
 */
function prune(folder, keep) {
  const now = Date.now();
  for (const name of fs.readdirSync(folder)) {
    if (name === keep) continue;
    const dir = path.join(folder, name);
    try {
      const whole = fs.existsSync(path.join(dir, 'tree', READY_FILE));
      const cloneGone = whole && !fs.existsSync(fs.readFileSync(path.join(dir, 'tree', CLONE_ROOT_FILE), 'utf8'));
      const used = whole ? fs.statSync(path.join(dir, 'used')).mtimeMs : fs.statSync(dir).mtimeMs;
      if (cloneGone || now - used > UNUSED_MS) fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // another run removed or is building it
    }
  }
}

/**
 * The entry (`cli/main.js`) of the tree built from the clone at `root`, built first when the
 * clone's sources changed since (a few hundred milliseconds); undefined when it cannot be built or
 * kept (no esbuild, a temp folder that is not private, a full disk): the caller then runs the
 * sources through tsx. Two runs that build at once each build their own, and the first to finish
 * is kept.
 */
export function cloneTree(root) {
  try {
    const folder = privateFolder('inventory-conformance-trees');
    if (!folder || !fs.existsSync(path.join(root, 'node_modules'))) return undefined;
    const key = createHash('sha256')
      .update(`${root}\0${inputsDigest(root)}`)
      .digest('hex')
      .slice(0, 24);
    const dir = path.join(folder, key);
    const entry = path.join(dir, 'tree', 'cli', 'main.js');
    if (!fs.existsSync(path.join(dir, 'tree', READY_FILE))) {
      const building = fs.mkdtempSync(path.join(folder, 'build-'));
      try {
        if (!buildInto(root, path.join(building, 'tree'))) return undefined;
        fs.writeFileSync(path.join(building, 'used'), '');
        fs.renameSync(building, dir);
      } catch {
        // another run kept its tree first, or the build failed
      } finally {
        fs.rmSync(building, { recursive: true, force: true });
      }
      if (!fs.existsSync(path.join(dir, 'tree', READY_FILE))) return undefined;
      prune(folder, key);
    }
    const now = new Date();
    fs.utimesSync(path.join(dir, 'used'), now, now);
    return entry;
  } catch {
    return undefined;
  }
}

/** This clone's root (the folder above cli/). */
export const CLONE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
