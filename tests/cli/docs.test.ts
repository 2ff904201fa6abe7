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
  // The first screen: the two commands and the one-command staging certification, then the contents.
  const first = text.split('\n').slice(0, 40).join('\n');
  for (const needed of ['npm ci && npm run certify', 'npm test', 'npx inventory-conformance certify', 'BASE_URL=', './reports'])
    expect(first, `README.md's first 40 lines hold ${needed}`).toContain(needed);
  const headings = [...text.matchAll(/^## (.+)$/gm)].map((m) => m[1]!);
  expect(headings.slice(0, 3)).toEqual(['Start', 'Certify staging', 'Contents']);
  for (const page of ['docs/settings.md', 'docs/run-costs.md', 'docs/ci.md', 'docs/submission.md', 'docs/development.md'])
    expect(text, `the README's contents link ${page}`).toContain(`](${page})`);
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

/** The anchors of a Markdown page: its headings as GitHub writes their ids, and `<a id="…">`. */
function anchorsOf(text: string): Set<string> {
  const slug = (h: string) =>
    h
      .trim()
      .toLowerCase()
      .replace(/[`*_]/g, '')
      .replace(/[^\p{L}\p{N} -]/gu, '')
      .replace(/ /g, '-');
  return new Set([
    ...[...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)),
    ...[...text.matchAll(/<a id="([^"]+)">/g)].map((m) => m[1]!),
  ]);
}

for (const doc of [
  ...DOCS,
  'README.md',
  'docs/settings.md',
  'docs/run-costs.md',
  'docs/ci.md',
  'docs/submission.md',
  'docs/development.md',
]) {
  test(`docs: ${doc} links only to files of this repository, and they and their anchors exist`, () => {
    const text = fs.readFileSync(path.join(ROOT, doc), 'utf8');
    const links = [...text.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]!);
    if (DOCS.includes(doc)) expect(links.length).toBeGreaterThan(0);
    for (const link of links) {
      expect(link, `${doc}: ${link} points outside the repository`).not.toMatch(/^[a-z]+:/i);
      const [file, anchor] = link.split('#');
      const target = file ? path.resolve(path.dirname(path.join(ROOT, doc)), file) : path.join(ROOT, doc);
      expect(target.startsWith(ROOT + path.sep), `${doc}: ${link} leaves the repository`).toBe(true);
      expect(fs.existsSync(target), `${doc}: ${link} does not exist`).toBe(true);
      if (anchor && target.endsWith('.md'))
        expect(anchorsOf(fs.readFileSync(target, 'utf8')).has(anchor), `${doc}: ${link}: no such anchor`).toBe(true);
    }
    expect(text).not.toMatch(/\.\.\/shared|\/work\//);
  });
}
