/**
 * Rewrites the settings tables of the READMEs and docs/settings.md from `settings/` (`npx tsx settings/readme.ts`).
 * A page opts in with `<!-- settings:<group>[,<group>…] -->` … `<!-- /settings -->`.
 * `tests/certify/settings.test.ts` fails when a README differs from what this writes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fillReadme } from './index.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The pages that carry generated settings tables. */
export const READMES = ['docs/settings.md', 'certify/README.md'].map((f) => path.join(ROOT, f));

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const file of READMES) {
    const before = fs.readFileSync(file, 'utf8');
    const after = fillReadme(before);
    if (after !== before) fs.writeFileSync(file, after);
    process.stdout.write(`${path.relative(ROOT, file)}: ${after === before ? 'up to date' : 'rewritten'}\n`);
  }
}
