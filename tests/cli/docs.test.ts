import fs from 'node:fs';
import path from 'node:path';
import { test, expect } from '@playwright/test';
import { EXIT_DESCRIPTIONS } from '../../cli/exit-codes.ts';
import { help } from '../../cli/main.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const DOCS = ['docs/vendor-guide.md', 'ci/README.md'];

test('docs: the vendor guide lists every exit code with its meaning, as the CLI defines them', () => {
  const text = fs.readFileSync(path.join(ROOT, 'docs/vendor-guide.md'), 'utf8');
  const table = /<!-- exit-codes -->\n([\s\S]*?)<!-- \/exit-codes -->/.exec(text)?.[1] ?? '';
  const expected = ['| code | meaning |', '|---|---|', ...EXIT_DESCRIPTIONS.map((e) => `| ${e.code} | ${e.meaning} |`)].join('\n');
  expect(table.trim()).toBe(expected);
  for (const e of EXIT_DESCRIPTIONS) expect(help()).toContain(`${e.code}  ${e.meaning}`);
});

for (const doc of DOCS) {
  test(`docs: ${doc} links only to files of this repository, and they exist`, () => {
    const text = fs.readFileSync(path.join(ROOT, doc), 'utf8');
    const links = [...text.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]!);
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) {
      expect(link, `${doc}: ${link} points outside the repository`).not.toMatch(/^[a-z]+:/i);
      const target = path.resolve(path.dirname(path.join(ROOT, doc)), link.split('#')[0]!);
      expect(target.startsWith(ROOT + path.sep), `${doc}: ${link} leaves the repository`).toBe(true);
      expect(fs.existsSync(target), `${doc}: ${link} does not exist`).toBe(true);
    }
    expect(text).not.toMatch(/\.\.\/shared|\/work\//);
  });
}
