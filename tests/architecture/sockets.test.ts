/**
 * One way out: no module of the harness opens a socket to the target but the one outbound client,
 * core/transport.ts (a deadline to the last byte, TLS verified explicitly, a body cap, no redirect
 * followed, the exchange recorded redacted). Every source file outside tests/ is read with the
 * TypeScript compiler API; a value import (static, dynamic or `require`) of a networking module,
 * a re-export of one, or a call of the global `fetch` (or `new WebSocket`) is allowed only in the
 * files below, each with its reason. Type-only imports open nothing and are not counted.
 * docs/architecture.md lists the same allow-list.
 */
import { test, expect } from '../test.ts';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { REPO_ROOT } from '../../core/paths.ts';

/** Modules whose import can open a socket. */
const NETWORK_MODULES = /^(node:)?(http|https|http2|net|tls|dgram)$|^(undici|node-fetch|axios|got|autocannon|ioredis|ws)(\/|$)/;

/** Where a socket may be opened, and why (a path ending in `/` is a folder). */
const ALLOWED: Record<string, string> = {
  'core/transport.ts': 'the one outbound client: every request to the target',
  'suites/pacing/coordinator.ts': "the run's pacer: a server on 127.0.0.1, never the target",
  'suites/pacing/client.ts':
    "the run's pacer's client: to the coordinator on 127.0.0.1 (CONFORMANCE_PACER_URL), key labels only, never the target",
  'reference-server/': 'the bundled target itself: its listener, and its shared limiter store (Redis)',
  'faults/':
    'the fault matrix plays the target: the fault proxy listens and forwards to its upstream; the staging simulator drives the reference server',
  'bench/': "the reference server's bench: its own load generators against the reference server, never a user's target",
};

const allowed = (file: string): boolean => Object.keys(ALLOWED).some((a) => (a.endsWith('/') ? file.startsWith(a) : file === a));

/** Every way `text` can open a socket: `file:line what`. */
export function socketOpeners(file: string, text: string): string[] {
  const kind = /\.(js|mjs|cjs)$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const found: string[] = [];
  const at = (node: ts.Node, what: string) =>
    found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1} ${what}`);
  const moduleOf = (node: ts.Expression | undefined) =>
    node && ts.isStringLiteralLike(node) && NETWORK_MODULES.test(node.text) ? node.text : undefined;
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly) {
      const named = node.importClause?.namedBindings;
      const onlyTypes =
        !node.importClause?.name &&
        named &&
        ts.isNamedImports(named) &&
        named.elements.length > 0 &&
        named.elements.every((e) => e.isTypeOnly);
      const m = moduleOf(node.moduleSpecifier);
      if (m && !onlyTypes) at(node, `imports ${m}`);
    } else if (ts.isExportDeclaration(node) && !node.isTypeOnly) {
      const m = moduleOf(node.moduleSpecifier);
      if (m) at(node, `re-exports ${m}`);
    } else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const m = moduleOf(node.arguments[0]);
      if (m && (callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === 'require')))
        at(node, `imports ${m}`);
      const name = ts.isIdentifier(callee)
        ? callee.text
        : ts.isPropertyAccessExpression(callee) && /^(globalThis|window|self)$/.test(callee.expression.getText(source))
          ? callee.name.text
          : '';
      if (name === 'fetch') at(node, 'calls fetch(');
    } else if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'WebSocket') {
      at(node, 'opens a WebSocket');
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every tracked (or new, not ignored) source file outside tests/ and node_modules. */
function sourceFiles(): string[] {
  return execFileSync('git', ['ls-files', '-co', '--exclude-standard'], { cwd: REPO_ROOT, encoding: 'utf8' })
    .split('\n')
    .filter(
      (f) =>
        /\.(ts|mts|cts|js|mjs|cjs)$/.test(f) &&
        !f.startsWith('tests/') &&
        !f.startsWith('node_modules/') &&
        fs.existsSync(path.join(REPO_ROOT, f)),
    );
}

test('no module opens a socket but core/transport.ts and the allowed servers and tooling', () => {
  const wrong = sourceFiles()
    .filter((f) => !allowed(f))
    .flatMap((f) => socketOpeners(f, fs.readFileSync(path.join(REPO_ROOT, f), 'utf8')));
  expect(
    wrong,
    'send through core/transport.ts (send, agentFor), or add the file to ALLOWED and to docs/architecture.md with its reason',
  ).toEqual([]);
});

test('the one outbound client is where the scan says sockets are opened', () => {
  const text = fs.readFileSync(path.join(REPO_ROOT, 'core/transport.ts'), 'utf8');
  expect(socketOpeners('core/transport.ts', text).length).toBeGreaterThan(0);
});

test('every allowed entry exists, and docs/architecture.md lists it', () => {
  const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs/architecture.md'), 'utf8');
  for (const entry of Object.keys(ALLOWED)) {
    expect(fs.existsSync(path.join(REPO_ROOT, entry)), entry).toBe(true);
    expect(doc, entry).toContain(`\`${entry}\``);
  }
});

const PLANTED: [string, string, number][] = [
  ['a default import of node:http', "import http from 'node:http';\nhttp.get('x');", 1],
  ['a named import of https', "import { request } from 'https';", 1],
  ['a namespace import of node:net', "import * as net from 'node:net';", 1],
  ['a dynamic import of node:tls', "const tls = await import('node:tls');", 1],
  ['a require of undici', "const { fetch } = require('undici');", 1],
  ['a re-export of node:http2', "export { connect } from 'node:http2';", 1],
  ['a call of the global fetch', "await fetch('https://example.com/v1/inventory');", 1],
  ['a call of globalThis.fetch', 'await globalThis.fetch(url);', 1],
  ['a WebSocket', "new WebSocket('wss://example.com');", 1],
  ['a type-only import', "import type { AddressInfo } from 'node:net';\nimport { type Agent } from 'node:http';", 0],
  ['a mention in a comment or a string', "// fetch('x') and import http from 'node:http'\nconst s = \"fetch('x')\";", 0],
  ['a method named fetch', 'await cache.fetch(key);', 0],
];
for (const [what, text, count] of PLANTED) {
  test(`the scan ${count ? 'sees' : 'ignores'} ${what}`, () => {
    expect(socketOpeners('suites/planted.ts', text)).toHaveLength(count);
  });
}
