#!/usr/bin/env node
// `inventory-conformance` (package.json "bin"). In a clone it runs the TypeScript sources
// (cli/main.ts) through tsx; the installed package runs the tree compiled at pack time (dist/),
// so no TypeScript toolchain is needed where it is installed.
import fs from 'node:fs';

const source = new URL('./main.ts', import.meta.url);
let cli;
if (fs.existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  cli = await import(source.href);
} else {
  cli = await import(new URL('../dist/cli/main.js', import.meta.url).href);
}
await cli.run();
