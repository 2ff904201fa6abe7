#!/usr/bin/env node
// `inventory-conformance` (package.json "bin"). The installed package runs the tree compiled at
// pack time (dist/), so no TypeScript toolchain is needed where it is installed. A clone runs its
// sources: through Node itself where Node strips TypeScript's types (22.18, 23.6 and later);
// elsewhere (Node 20) from a tree built from them (cli/tree.mjs: transpiled by esbuild into a
// private folder of the temp dir, again whenever a source changes), or through tsx when that tree
// cannot be built.
import fs from 'node:fs';
import module from 'node:module';
import { pathToFileURL } from 'node:url';

const source = new URL('./main.ts', import.meta.url);
const inClone = fs.existsSync(source);

// Node 22.1 and later cache the code they compile: this process and every one it starts (the
// reference server, Playwright's runners and workers) use this user's private folder for it.
// Node 20 has no such cache, and the harness keeps none of its own. A folder the caller chose stays.
if (typeof module.enableCompileCache === 'function' && !process.env.NODE_COMPILE_CACHE) {
  const { privateFolder } = module.createRequire(import.meta.url)(
    inClone ? '../core/private-folder.cjs' : '../dist/core/private-folder.cjs',
  );
  const folder = privateFolder('inventory-conformance-compile-cache');
  if (folder) {
    process.env.NODE_COMPILE_CACHE = folder;
    module.enableCompileCache(folder);
  }
}

let cli;
if (!inClone) cli = await import(new URL('../dist/cli/main.js', import.meta.url).href);
else if (process.features.typescript) cli = await import(source.href);
else {
  const { cloneTree, CLONE_ROOT } = await import('./tree.mjs');
  const tree = cloneTree(CLONE_ROOT);
  if (tree) cli = await import(pathToFileURL(tree).href);
  else {
    const { register } = await import('tsx/esm/api');
    register();
    cli = await import(source.href);
  }
}
await cli.run();
