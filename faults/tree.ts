import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from '../core/paths.ts';
import * as sources from '../certify/run.ts';

/**
 * The harness a certify run of the fault matrix uses: the sources of this clone (in this process
 * through tsx and Playwright's loader; as a command, `cli/bin.mjs certify` exactly as `npm run
 * certify` runs it, from the clone's own transpiled tree, cli/tree.mjs), or the package's tree built from them
 * (`cli/build.mjs --out`, the layout the installed package runs, its modules transpiled by esbuild:
 * `--transpile`). Both certify the same suites with the same code; the compiled one starts its
 * Playwright processes on less CPU (no TypeScript loader), which is what the matrix's many runs
 * spend most of their time on.
 */
export interface HarnessTree {
  /** certify's in-process entry of this tree. */
  runCertify: typeof sources.runCertify;
  /** The command line (after `node`) of `inventory-conformance certify` on this tree. */
  certifyCli: readonly string[];
  /**
   * certify's `onlyTests` for this tree, from locations of the sources (`<folder>/<file>.ts:<line>`
   * under `suites/`). A compiled tree's test files are `.js`, and its tests stand at the `.js`
   * lines, or, in a tree with source maps, at the `.ts` lines the maps name; Playwright matches a
   * file filter against both the file and the test's place. So it keeps the files, as a pattern that
   * names both, and leaves the selection to the exact titles that go with them (a title is unique
   * in its file).
   */
  onlyTests(locations: readonly string[]): string[];
}

/**
 * The sources of this clone: certify's own `runCertify` in this process (TypeScript), and
 * `cli/bin.mjs certify` exactly as `npm run certify` runs it (the clone's transpiled tree).
 */
export const SOURCE_TREE: HarnessTree = {
  runCertify: sources.runCertify,
  certifyCli: [path.join(REPO_ROOT, 'cli', 'bin.mjs'), 'certify'],
  onlyTests: (locations) => [...locations],
};

/** A compiled tree and the removal of the folder that holds it. */
export interface CompiledTree {
  tree: HarnessTree;
  remove(): void;
}

/** How long the build may take (esbuild over the harness: under a second on a quiet 2-core machine). */
const BUILD_TIMEOUT_MS = 60_000;

/**
 * Builds the harness into a new folder of the OS temp dir (`cli/build.mjs --out --transpile`: the
 * package's tree without tsc's 10 s of two cores, which the package's own build still spends,
 * tests/package/install.test.ts) and returns it as
 * a tree: its packages resolve to this clone's node_modules (a link beside the tree), and a
 * launcher runs its CLI as the package's `cli/bin.mjs` does. Past BUILD_TIMEOUT_MS the build is
 * stopped and the folder removed.
 */
export async function compiledTree(): Promise<CompiledTree> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inventory-matrix-tree-'));
  const remove = () => fs.rmSync(dir, { recursive: true, force: true });
  try {
    const root = path.join(dir, 'tree');
    build(root);
    fs.symlinkSync(dependenciesOf(REPO_ROOT), path.join(root, 'node_modules'), 'dir');
    const launcher = path.join(dir, 'certify.mjs');
    fs.writeFileSync(launcher, `const cli = await import('./tree/cli/main.js');\nawait cli.run(process.argv.slice(2));\n`);
    // Through a JavaScript module of its own: imported from TypeScript, `run.js` would resolve to a
    // `run.ts` beside it (a tree built with source maps keeps the sources they name), as tsx and
    // Playwright's loader resolve a TypeScript module's imports.
    const entry = path.join(dir, 'run.mjs');
    fs.writeFileSync(entry, `export * from './tree/certify/run.js';\n`);
    const compiled = (await import(pathToFileURL(entry).href)) as typeof sources;
    const tree: HarnessTree = {
      runCertify: compiled.runCertify,
      certifyCli: [launcher, 'certify'],
      onlyTests: compiledFiles,
    };
    return { tree, remove };
  } catch (error) {
    remove();
    throw error;
  }
}

/** The node_modules folder this clone's dependencies resolve from (the one that holds @playwright/test). */
function dependenciesOf(root: string): string {
  const manifest = createRequire(path.join(root, 'package.json')).resolve('@playwright/test/package.json');
  const folder = `${path.sep}node_modules`;
  return manifest.slice(0, manifest.lastIndexOf(`${folder}${path.sep}`) + folder.length);
}

/**
 * The files of source locations under `suites/` as Playwright file filters (regular expressions)
 * that match the compiled file and the source its map names (`auth/bearer.spec.ts:34` →
 * `auth/bearer.spec.[jt]s`), once each.
 */
export function compiledFiles(locations: readonly string[]): string[] {
  return [...new Set(locations.map((l) => l.replace(/\.ts(?::\d+)?$/, '.[jt]s')))];
}

/** `cli/build.mjs --out --transpile`, killed past BUILD_TIMEOUT_MS; throws with the end of its output when it fails. */
function build(out: string): void {
  const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'cli', 'build.mjs'), '--out', out, '--transpile'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: BUILD_TIMEOUT_MS,
    killSignal: 'SIGKILL',
  });
  if (r.status !== 0)
    throw new Error(
      `cli/build.mjs --out ${out} --transpile ended with ${r.status ?? r.signal ?? r.error?.message}: ${`${r.stdout}${r.stderr}`.slice(-2000)}`,
    );
}
