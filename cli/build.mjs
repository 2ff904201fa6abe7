#!/usr/bin/env node
// `npm run build` (and `prepack`): compiles the harness into dist/, a tree that runs with Node
// alone. dist/ mirrors the sources (compiled .js beside the data files they read: the ledger, the
// specification, the schemas, the fixtures) and has its own package.json, so every path the
// harness computes from its root works the same in a clone and in the installed package.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DATA_DIRS, inputsDigest } from './tree.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/**
 * `--out <folder>` builds the same tree elsewhere, into a folder that does not exist yet or is
 * empty (the fault matrix runs its cases on such a tree); default: dist/, which the build replaces.
 */
const outAt = process.argv.indexOf('--out');
const OUT = outAt > 0 ? process.argv[outAt + 1] : undefined;
if (outAt > 0 && (!OUT || (fs.existsSync(OUT) && fs.readdirSync(OUT).length > 0))) {
  console.error(`build: --out needs a folder that does not exist yet or is empty${OUT ? `: ${OUT} is not` : ''}`);
  process.exit(2);
}
const DIST = OUT ? path.resolve(OUT) : path.join(ROOT, 'dist');
/**
 * `--transpile` (only with `--out`): the modules are transpiled by esbuild, one by one, instead of
 * compiled by tsc, into the same tree. No type check and no emit of tsc's: the same JavaScript for
 * these sources (ES2022 modules without enums, namespaces or decorators) in well under a second
 * instead of about 10 s of two cores. The fault matrix certifies with such a tree; the package is
 * always built by tsc.
 */
const TRANSPILE = process.argv.includes('--transpile');
if (TRANSPILE && !OUT) {
  console.error('build: --transpile builds only a tree elsewhere (--out <folder>); dist/ is always compiled by tsc');
  process.exit(2);
}
/**
 * `--source-maps` (only with `--transpile`): each module carries its source map, and its TypeScript
 * source is copied beside it (`writeModules`), so that a run names the sources' files and lines.
 * A clone's own tree has them (cli/tree.mjs); the fault matrix's, whose locations nobody reads, not.
 */
const SOURCE_MAPS = process.argv.includes('--source-maps');
if (SOURCE_MAPS && !TRANSPILE) {
  console.error('build: --source-maps goes with --transpile (tsc builds dist/ without maps)');
  process.exit(2);
}
/** The launcher (the package runs it from cli/bin.mjs, beside dist/) and this script. */
const SKIP = new Set(['cli/bin.mjs', 'cli/build.mjs', 'cli/tree.mjs']);

// `prepare` runs on every `npm install` in a clone too, where `cli/bin.mjs` runs the clone's own
// tree (cli/tree.mjs) and dist/ is not needed; npm sets these variables only while it prepares a
// git dependency (it installs the clone's dependencies with _PACOTE_NO_PREPARE_, then runs prepare
// with npm_package_resolved), which is the case that needs dist/.
if (process.argv.includes('--git-dependency-only') && !process.env._PACOTE_NO_PREPARE_ && !process.env.npm_package_resolved)
  process.exit(0);

/** Written last into dist/: the digest of the inputs it was built from. */
const INPUTS_FILE = path.join(DIST, 'build-inputs.sha256');

// `npm pack` and `npm publish` run prepare right after prepack, and a git dependency is prepared
// both by its own `npm install` and by the packing that follows: a dist/ built from these very
// sources is not built again.
const inputs = inputsDigest(ROOT);
if (
  process.argv.includes('--git-dependency-only') &&
  fs.existsSync(INPUTS_FILE) &&
  fs.readFileSync(INPUTS_FILE, 'utf8').trim() === inputs
) {
  console.log('build: dist/ is already built from these sources');
  process.exit(0);
}

fs.rmSync(DIST, { recursive: true, force: true });
if (TRANSPILE) await transpile();
else compile();

/** tsc over tsconfig.build.json into DIST; exits 1 when it fails. */
function compile() {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const compiled = spawnSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json'), '--outDir', DIST], {
    stdio: 'inherit',
    cwd: ROOT,
  });
  if (compiled.status !== 0) {
    console.error(`build: tsc failed (exit ${compiled.status ?? compiled.signal})`);
    process.exit(1);
  }
}

/**
 * The modules tsconfig.build.json compiles: its `include` (every module of a folder, `<folder>/**` then `/*.ts`, or one
 * file) less its `exclude`, by path from the root. Any other pattern stops the build, so that the
 * two builds never compile different sets.
 */
function buildModules() {
  const { include, exclude } = JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8'));
  const skipped = new Set(exclude);
  const modules = [];
  const walk = (rel) => {
    for (const e of fs.readdirSync(path.join(ROOT, rel), { withFileTypes: true })) {
      const child = `${rel}/${e.name}`;
      if (skipped.has(child) || e.name.startsWith('.') || e.name === 'node_modules') continue;
      if (e.isDirectory()) walk(child);
      else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) modules.push(child);
    }
  };
  for (const pattern of include) {
    const folder = /^([\w./-]+)\/\*\*\/\*\.ts$/.exec(pattern)?.[1];
    if (folder) walk(folder);
    else if (/^[\w./-]+\.ts$/.test(pattern)) {
      if (!skipped.has(pattern)) modules.push(pattern);
    } else {
      console.error(`build: --transpile does not read the include pattern ${pattern} of tsconfig.build.json`);
      process.exit(1);
    }
  }
  return modules;
}

/**
 * esbuild over buildModules() into DIST, each module alone: every import stays an import, and a
 * relative one's `.ts` becomes `.js`, as tsc's `rewriteRelativeImportExtensions` does. With
 * SOURCE_MAPS each module carries its source map inline, naming its source beside it (the sources
 * are copied into the tree, `copyData`): so Playwright, which reads it, places every test and error
 * at its line of the TypeScript source, `suites/auth/bearer.spec.ts:34` as in the clone. Exits 1
 * when it fails.
 */
async function transpile() {
  const { build } = await import('esbuild');
  const relativeImports = {
    name: 'relative-imports',
    setup(b) {
      b.onResolve({ filter: /^\.\.?\// }, (args) =>
        args.kind === 'entry-point' ? undefined : { path: args.path.replace(/\.ts$/, '.js'), external: true },
      );
    },
  };
  try {
    const built = await build({
      absWorkingDir: ROOT,
      entryPoints: buildModules(),
      outdir: DIST,
      outbase: ROOT,
      bundle: true,
      packages: 'external',
      platform: 'node',
      format: 'esm',
      target: 'es2022',
      tsconfig: path.join(ROOT, 'tsconfig.build.json'),
      plugins: [relativeImports],
      logLevel: 'warning',
      sourcemap: SOURCE_MAPS ? 'external' : false,
      sourcesContent: false,
      write: false,
    });
    writeModules(built.outputFiles);
  } catch (error) {
    console.error(`build: esbuild failed: ${error?.message ?? error}`);
    process.exit(1);
  }
}

/**
 * Writes esbuild's modules; with SOURCE_MAPS each carries its map inline (esbuild's `external` maps
 * come as files of their own, without a comment), the map naming the module's source by its file name.
 */
function writeModules(outputFiles) {
  const maps = new Map(outputFiles.filter((f) => f.path.endsWith('.js.map')).map((f) => [f.path.slice(0, -'.map'.length), f.text]));
  for (const file of outputFiles) {
    if (file.path.endsWith('.js.map')) continue;
    const map = maps.get(file.path);
    let text = file.text;
    if (map) {
      const parsed = JSON.parse(map);
      parsed.sources = parsed.sources.map((s) => path.basename(s));
      text = `${text.trimEnd()}\n//# sourceMappingURL=data:application/json;base64,${Buffer.from(JSON.stringify(parsed)).toString('base64')}\n`;
    }
    fs.mkdirSync(path.dirname(file.path), { recursive: true });
    fs.writeFileSync(file.path, text);
  }
}

function copyData(rel) {
  const abs = path.join(ROOT, rel);
  if (fs.statSync(abs).isDirectory()) {
    for (const name of fs.readdirSync(abs)) if (name !== 'node_modules' && !name.startsWith('.')) copyData(path.join(rel, name));
    return;
  }
  // A tree with source maps keeps the TypeScript sources they name (`writeModules`).
  if ((rel.endsWith('.ts') && !SOURCE_MAPS) || path.basename(rel) === 'README.md' || SKIP.has(rel.split(path.sep).join('/'))) return;
  fs.mkdirSync(path.dirname(path.join(DIST, rel)), { recursive: true });
  fs.copyFileSync(abs, path.join(DIST, rel));
}
for (const dir of DATA_DIRS) copyData(dir);

// The package root of the compiled tree: the harness finds its root by this file's name.
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const manifest = {
  name: pkg.name,
  version: pkg.version,
  description: pkg.description,
  type: pkg.type,
  private: true,
  dependencies: pkg.dependencies,
  engines: pkg.engines,
};
fs.writeFileSync(path.join(DIST, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
// The sources this tree was compiled from, and what was compiled: a certificate written by the
// package names the same suite as one written by a clone of the same sources (certify/certificate/digest.ts).
const { sourceManifest, SUITE_SOURCE_FILE } = await import(pathToFileURL(path.join(DIST, 'certify', 'certificate', 'digest.js')).href);
fs.writeFileSync(
  path.join(DIST, SUITE_SOURCE_FILE),
  `${JSON.stringify({ source: sourceManifest(ROOT), compiled: sourceManifest(DIST) }, null, 2)}\n`,
);
fs.writeFileSync(INPUTS_FILE, `${inputs}\n`);
const files = [];
const count = (d) => {
  for (const e of fs.readdirSync(d, { withFileTypes: true })) e.isDirectory() ? count(path.join(d, e.name)) : files.push(e.name);
};
count(DIST);
console.log(
  `build: ${OUT ? DIST : 'dist/'} holds ${files.length} files (${files.filter((f) => f.endsWith('.js')).length} compiled modules)`,
);
