import fs from 'node:fs';
import path from 'node:path';
import { test, expect } from '../test.ts';
import { EXIT_DESCRIPTIONS } from '../../core/exit-codes.ts';
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

test('docs: the README lists every exit code with its meaning, as the CLI defines them', () => {
  const text = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const table = /<!-- exit-codes -->\n([\s\S]*?)<!-- \/exit-codes -->/.exec(text)?.[1] ?? '';
  expect(table.trim(), 'README.md: the table between <!-- exit-codes --> markers').toBe(
    ['| code | meaning |', '|---|---|', ...EXIT_DESCRIPTIONS.map((e) => `| ${e.code} | ${e.meaning} |`)].join('\n'),
  );
  // A fresh clone's two commands stay stated together, after what a user of the package reads first.
  const clone = [...text.matchAll(/```sh\n([^`]*)```/g)]
    .map((m) =>
      m[1]!
        .split('\n')
        .map((l) => l.split('#')[0]!.trim())
        .filter(Boolean),
    )
    .find((c) => c.includes('npm ci && npm run certify'));
  expect(clone).toEqual(['npm ci && npm run certify', 'npm test']);
  const headings = [...text.matchAll(/^## (.+)$/gm)].map((m) => m[1]!);
  expect(headings.slice(0, 4)).toEqual(['Install', 'Certify staging', 'Read the certificate', 'Gate in CI']);
  expect(headings.indexOf('Working on the harness')).toBeGreaterThan(3);
});

/** Every user-facing document: the README, docs/, and each folder's README. */
function userDocs(): string[] {
  const out = [
    'README.md',
    ...fs
      .readdirSync(path.join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      if (!e.isDirectory() || ['node_modules', 'reports', 'test-results', '.git'].includes(e.name) || e.name.startsWith('.')) continue;
      const sub = dir ? `${dir}/${e.name}` : e.name;
      if (fs.existsSync(path.join(ROOT, sub, 'README.md'))) out.push(`${sub}/README.md`);
      walk(sub);
    }
  };
  walk('');
  return out;
}

test('docs: no user-facing document (README, docs/, folder READMEs, --help) points outside the repository', () => {
  const outside = /\.\.\/shared|\/work\/|shared\/(spec|notes)\//;
  const docs = userDocs();
  expect(docs).toEqual(expect.arrayContaining(['README.md', 'docs/vendor-guide.md', 'cli/README.md', 'suites/generated/README.md']));
  const offending = docs.filter((d) => outside.test(fs.readFileSync(path.join(ROOT, d), 'utf8')));
  expect(
    offending,
    'documents naming a file outside the repository (say "the Inventory Service specification" and point to suites/requirements.yaml)',
  ).toEqual([]);
  expect(help()).not.toMatch(outside);
  expect(outside.test('see ../shared/spec/inventory-service.md')).toBe(true);
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
