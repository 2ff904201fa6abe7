/**
 * `tsx certify/cli.ts [flags]` is `inventory-conformance certify [flags]` (`npm run certify`):
 * one code path and one signal handler, those of cli/main.ts. Kept for tools that start certify
 * from the sources as a child process.
 */
import { run } from '../cli/main.ts';

await run(['certify', ...process.argv.slice(2)]);
