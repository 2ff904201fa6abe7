#!/usr/bin/env node
// `inventory-conformance` (package.json "bin"). The installed package runs the tree compiled at
// pack time (dist/), so no TypeScript toolchain is needed where it is installed. A clone runs the
// same tree built from its own sources (cli/tree.mjs: transpiled by esbuild into a private folder
// of the temp dir, again whenever a source changes), so that no process of a run compiles
// TypeScript; when that tree cannot be built, it runs the sources through tsx.
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';

const source = new URL('./main.ts', import.meta.url);
let cli;
if (fs.existsSync(source)) {
  const { cloneTree, CLONE_ROOT } = await import('./tree.mjs');
  const tree = cloneTree(CLONE_ROOT);
  if (tree) cli = await import(pathToFileURL(tree).href);
  else {
    const { register } = await import('tsx/esm/api');
    register();
    cli = await import(source.href);
  }
} else {
  cli = await import(new URL('../dist/cli/main.js', import.meta.url).href);
}
await cli.run();
