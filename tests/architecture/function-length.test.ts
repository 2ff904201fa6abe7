/**
 * No function of the repository is over 100 lines: every function-like node with a body in every
 * source folder (the product code, the faults, the bench, the pipelines' scripts and the tests),
 * read with the TypeScript compiler API, spans at most 100 lines from its first token (its JSDoc
 * aside) to its closing brace. The one exception is the callback of a `test.describe` group: it
 * holds tests, not steps, and each test in it is measured on its own.
 */
import { test, expect } from '../test.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { REPO_ROOT } from '../../core/paths.ts';

/** The folders the rule holds for. */
const FOLDERS = ['suites', 'certify', 'cli', 'reference-server', 'core', 'settings', 'schemas', 'faults', 'bench', 'ci', 'tests'] as const;
/** The most lines a function may span. */
const MAX_LINES = 100;
const SOURCE = /\.(ts|mts|cts|js|mjs|cjs)$/;

/** A function over the limit: where it starts (1-based line), its name as written, and how many lines it spans. */
interface LongFunction {
  file: string;
  line: number;
  name: string;
  lines: number;
}

/** The name a function-like node is known by: its own, the variable or property it is assigned to, or its kind. */
function nameOf(node: ts.SignatureDeclaration, source: ts.SourceFile): string {
  if (node.name) return node.name.getText(source);
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && parent.name)
    return parent.name.getText(source);
  return ts.isConstructorDeclaration(node) ? 'constructor' : `(${ts.SyntaxKind[node.kind]})`;
}

/** `test.describe(title, () => { … })` (and `.serial`, `.parallel`, `.only`, `.skip`): a group of tests, each measured on its own. */
function isGroupCallback(node: ts.Node, source: ts.SourceFile): boolean {
  const call = node.parent;
  if (!call || !ts.isCallExpression(call) || !call.arguments.includes(node as ts.Expression)) return false;
  return /^(test\.)?describe(\.(serial|parallel|only|skip))?$/.test(call.expression.getText(source));
}

/** Every function-like node with a body in one source text that spans more than `limit` lines (nested ones included). */
function longFunctions(file: string, text: string, limit = MAX_LINES): LongFunction[] {
  const kind = /\.(js|mjs|cjs)$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const found: LongFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body && !isGroupCallback(node, source)) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > limit) found.push({ file, line: first + 1, name: nameOf(node, source), lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every source file under the given folders of `root` (node_modules aside), relative to `root`. */
function sourceFiles(root: string, folders: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    const abs = path.join(root, rel);
    if (!fs.existsSync(abs)) return;
    for (const entry of fs.readdirSync(abs, { withFileTypes: true })) {
      const child = path.posix.join(rel, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') walk(child);
      } else if (SOURCE.test(entry.name)) out.push(child);
    }
  };
  for (const folder of folders) walk(folder);
  return out.sort();
}

/** The long functions of every source file under the folders of `root`. */
function scan(root: string, folders: readonly string[] = FOLDERS): LongFunction[] {
  return sourceFiles(root, folders).flatMap((file) => longFunctions(file, fs.readFileSync(path.join(root, file), 'utf8')));
}

/** One line per long function: `file:line name spans N lines (at most 100)`. */
const describe = (found: LongFunction[]): string[] =>
  found.map((f) => `${f.file}:${f.line} ${f.name} spans ${f.lines} lines (at most ${MAX_LINES})`);

/** A function whose body holds `bodyLines` statement lines: it spans `bodyLines + 2` lines. */
const plantedFunction = (name: string, bodyLines: number): string =>
  [
    `export function ${name}(): number {`,
    '  let n = 0;',
    ...Array.from({ length: bodyLines - 2 }, () => '  n += 1;'),
    '  return n;',
    '}',
  ].join('\n');

test('no function of any source folder spans more than 100 lines (a test.describe group aside)', () => {
  expect(describe(scan(REPO_ROOT)), 'split each into named steps').toEqual([]);
});

test('the check reads every folder it holds for', () => {
  for (const folder of FOLDERS) expect(sourceFiles(REPO_ROOT, [folder]).length, folder).toBeGreaterThan(0);
});

test('a planted function of 101 lines is named with file:line and length; one of 100 lines passes', () => {
  const text = ['// planted', plantedFunction('fits', 98), '', plantedFunction('tooLong', 99)].join('\n');
  expect(describe(longFunctions('planted.ts', text))).toEqual([`planted.ts:103 tooLong spans 101 lines (at most ${MAX_LINES})`]);
});

test('a test.describe group is not measured; a long test inside it is', () => {
  const body = Array.from({ length: 101 }, () => '    x += 1;').join('\n');
  const text = ["test.describe('group', () => {", "  test('long', () => {", body, '  });', '});'].join('\n');
  expect(longFunctions('group.test.ts', text).map((f) => `${f.name}:${f.line}:${f.lines}`)).toEqual(['(ArrowFunction):2:103']);
});

test('arrow functions, methods and nested functions are measured, each on its own', () => {
  const body = Array.from({ length: 101 }, () => '    x += 1;').join('\n');
  const text = [
    'const arrow = () => {',
    body,
    '};',
    'class C {',
    '  method() {',
    body,
    '  }',
    '}',
    'function outer() {',
    '  const inner = function () {',
    body,
    '  };',
    '}',
  ].join('\n');
  expect(longFunctions('shapes.ts', text).map((f) => `${f.name}:${f.line}:${f.lines}`)).toEqual([
    'arrow:1:103',
    'method:105:103',
    'outer:209:105',
    'inner:210:103',
  ]);
});

test('a planted long function in a temporary folder fails the scan, naming file:line and length', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'function-length-'));
  try {
    fs.mkdirSync(path.join(root, 'certify', 'steps'), { recursive: true });
    fs.writeFileSync(path.join(root, 'certify', 'steps', 'planted.ts'), `// planted\n${plantedFunction('planted', 150)}\n`);
    fs.writeFileSync(path.join(root, 'certify', 'short.ts'), `${plantedFunction('short', 10)}\n`);
    expect(describe(scan(root))).toEqual([`certify/steps/planted.ts:2 planted spans 152 lines (at most ${MAX_LINES})`]);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
