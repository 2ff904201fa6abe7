/**
 * The checks fail one way: through a typed finding (`core/finding.ts`), written as the test's
 * `finding` annotation by the assertions of `suites/fixtures/assertions.ts` (`expectFact`,
 * `expectStatus`, `expectErrorBody`, `expectNoDeviation`, `failWith`). A call of Playwright's
 * `expect(…)` (with a message string or without, `expect.soft` and `expect.poll` too) in any source
 * file under `suites/` would fail a check with an assertion diff instead of requirement, expected
 * and observed: the compiler API reads every such file and finds each call.
 */
import { test, expect } from '../test.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { REPO_ROOT } from '../../core/paths.ts';

/** A call of `expect` in a file of the suites. */
interface ExpectCall {
  file: string;
  line: number;
  /** The call as written, on one line, cut at 80 characters. */
  text: string;
  /** Whether it carries a message (its second argument). */
  message: boolean;
}

/** `expect(…)`, `expect.soft(…)`, `expect.poll(…)`: a call whose callee is `expect` or one of its members. */
function isExpectCall(node: ts.Node): node is ts.CallExpression {
  if (!ts.isCallExpression(node)) return false;
  const callee = node.expression;
  if (ts.isIdentifier(callee)) return callee.text === 'expect';
  return ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression) && callee.expression.text === 'expect';
}

/** Every call of `expect` in one source text. */
function expectCalls(file: string, text: string): ExpectCall[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: ExpectCall[] = [];
  const visit = (node: ts.Node): void => {
    if (isExpectCall(node)) {
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      found.push({ file, line, text: node.getText(source).replace(/\s+/g, ' ').slice(0, 80), message: node.arguments.length > 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every TypeScript source file under `suites/` of `root`, relative to `root`. */
function suiteFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = path.posix.join(rel, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (/\.ts$/.test(entry.name)) out.push(child);
    }
  };
  walk('suites');
  return out.sort();
}

/** The `expect` calls of every source file under `suites/` of `root`. */
function scan(root: string): ExpectCall[] {
  return suiteFiles(root).flatMap((file) => expectCalls(file, fs.readFileSync(path.join(root, file), 'utf8')));
}

/** One line per call: `file:line expect(…) with a message: fail through a finding (suites/fixtures/assertions.ts)`. */
const describe = (calls: ExpectCall[]): string[] =>
  calls.map(
    (c) => `${c.file}:${c.line} ${c.text}${c.message ? ' (with a message)' : ''}: fail through a finding (suites/fixtures/assertions.ts)`,
  );

test('no check under suites/ fails through expect(): every failure is a typed finding', () => {
  expect(describe(scan(REPO_ROOT))).toEqual([]);
});

test('the check reads the spec files of every section', () => {
  const specs = suiteFiles(REPO_ROOT).filter((f) => f.endsWith('.spec.ts'));
  for (const section of ['auth', 'errors', 'inventory', 'messages', 'rate-limit', 'versioning', 'generated', 'load']) {
    expect(
      specs.some((f) => f.startsWith(`suites/${section}/`)),
      section,
    ).toBe(true);
  }
});

test('an expect with a message string, an expect without one and expect.soft are found, naming file:line', () => {
  const text = [
    "import { test, expect, expectFact } from '../fixtures.ts';",
    "test('INV-03 planted', async ({ api }) => {",
    '  const res = await api.listInventory();',
    '  expect(res.status, `INV-03: expected 200, observed ${res.status}`).toBe(200);',
    '  expect(res.json).toBeDefined();',
    "  expect.soft(res.text, 'INV-03 body').not.toBe('');",
    "  expectFact(res.status === 200, { expected: 'status 200', observed: String(res.status), res });",
    '  res.expect?.(1);',
    '});',
  ].join('\n');
  expect(expectCalls('planted.spec.ts', text).map((c) => `${c.line}:${c.message}`)).toEqual(['4:true', '5:false', '6:true']);
});

test('a planted spec file calling expect with a message fails the scan; one failing through expectFact passes', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'findings-'));
  try {
    fs.mkdirSync(path.join(root, 'suites', 'inventory'), { recursive: true });
    const planted =
      "test('INV-03 x', async ({ api }) => {\n  const res = await api.listInventory();\n  expect(res.status, 'INV-03: expected 200').toBe(200);\n});\n";
    fs.writeFileSync(path.join(root, 'suites', 'inventory', 'planted.spec.ts'), planted);
    fs.writeFileSync(
      path.join(root, 'suites', 'inventory', 'fine.spec.ts'),
      planted.replace(
        "expect(res.status, 'INV-03: expected 200').toBe(200)",
        "expectFact(res.status === 200, { expected: 'status 200', observed: String(res.status), res })",
      ),
    );
    expect(describe(scan(root))).toEqual([
      "suites/inventory/planted.spec.ts:3 expect(res.status, 'INV-03: expected 200') (with a message): fail through a finding (suites/fixtures/assertions.ts)",
    ]);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
