#!/usr/bin/env node
// `inventory-conformance` (package.json "bin"): runs the TypeScript CLI (cli/main.ts) through tsx,
// so `npx inventory-conformance …` works from a fresh clone after `npm ci`.
import { register } from 'tsx/esm/api';

register();
const { run } = await import('./main.ts');
await run();
