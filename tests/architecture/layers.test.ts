/**
 * The layers of the harness, read from the imports of every source file (tests aside): a layer
 * imports only layers below it, and no two files import each other in a circle. docs/architecture.md
 * draws the same table.
 */
import { test, expect } from '../test.ts';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../core/paths.ts';

/** Each top-level folder (or root file) and the layers it may import. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  core: [],
  schemas: [],
  settings: ['core'],
  'reference-server': ['core', 'schemas'],
  suites: ['core', 'schemas', 'settings'],
  'playwright.config.ts': ['core', 'schemas', 'settings'],
  certify: ['core', 'schemas', 'settings', 'suites', 'playwright.config.ts', 'reference-server'],
  cli: ['core', 'schemas', 'settings', 'suites', 'certify', 'reference-server'],
  faults: ['core', 'schemas', 'settings', 'suites', 'certify', 'reference-server'],
  bench: ['core', 'schemas', 'settings', 'reference-server'],
  // Scripts of the pipelines (the action's job summary): they run beside the installed harness and import nothing of it.
  ci: [],
};

const layerOf = (file: string): string => (file.includes('/') ? file.split('/')[0]! : file);

/** Every relative import of every tracked source file outside tests/: file → imported files. */
function importGraph(): Map<string, string[]> {
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], { cwd: REPO_ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((f) => /\.(ts|mts|mjs)$/.test(f) && !f.startsWith('tests/') && fs.existsSync(path.join(REPO_ROOT, f)));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = fs.readFileSync(path.join(REPO_ROOT, file), 'utf8');
    const targets = [
      ...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g),
    ].map((m) => path.relative(REPO_ROOT, path.resolve(path.dirname(path.join(REPO_ROOT, file)), m[1] ?? m[2]!)));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** Circles among files, each once, as paths `a → b → a`. */
function circles(graph: Map<string, string[]>): string[] {
  const out: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (f: string) => {
    state.set(f, 'open');
    stack.push(f);
    for (const t of graph.get(f) ?? []) {
      if (!graph.has(t)) continue;
      if (state.get(t) === 'open') out.push([...stack.slice(stack.indexOf(t)), t].join(' → '));
      else if (!state.has(t)) visit(t);
    }
    stack.pop();
    state.set(f, 'done');
  };
  for (const f of graph.keys()) if (!state.has(f)) visit(f);
  return out;
}

test('every source file belongs to a known layer', () => {
  const unknown = [...importGraph().keys()].map(layerOf).filter((l) => !(l in MAY_IMPORT) && !l.startsWith('.'));
  expect([...new Set(unknown)], 'add the folder to MAY_IMPORT and to docs/architecture.md').toEqual([]);
});

test('a layer imports only the layers below it', () => {
  const wrong: string[] = [];
  for (const [file, targets] of importGraph()) {
    const from = layerOf(file);
    for (const target of targets) {
      const to = layerOf(target);
      if (to !== from && !(MAY_IMPORT[from] ?? []).includes(to))
        wrong.push(`${file} imports ${target} (${from} may import: ${(MAY_IMPORT[from] ?? []).join(', ') || 'nothing'})`);
    }
  }
  expect(wrong).toEqual([]);
});

test('no files import each other in a circle', () => {
  expect(circles(importGraph())).toEqual([]);
});

test('the layer check sees a planted upward import and a planted circle', () => {
  const graph = new Map([
    ['core/a.ts', ['certify/b.ts']],
    ['certify/b.ts', ['core/a.ts']],
  ]);
  expect(circles(graph)).toEqual(['core/a.ts → certify/b.ts → core/a.ts']);
  expect(MAY_IMPORT.core).not.toContain(layerOf('certify/b.ts'));
});
