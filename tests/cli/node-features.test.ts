/**
 * Node's own machinery where the running Node has it (npm test runs these on Node 20, .ci/compat on
 * 22, 24 and 26): the compile cache (Node 22.1 and later) in a private folder of the temp dir, and
 * none on Node 20; the sources run by Node's type stripping (22.18 and later) without a transpiled
 * tree or tsx, and the tree on Node 20.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import module from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { test, expect } from '../test.ts';
import { codeFile, NODE_STRIPS_TYPES, nodeArgsFor, REPO_ROOT } from '../../core/paths.ts';

const BIN = path.join(REPO_ROOT, 'cli', 'bin.mjs');
const uid = process.getuid?.() ?? 'user';
const HAS_COMPILE_CACHE = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function';

/** `cli/bin.mjs --version` with a temp dir of its own (and `env`); returns that temp dir's entries after it. */
function versionIn(tmp: string, env: Record<string, string> = {}): string[] {
  const { NODE_COMPILE_CACHE: _, ...inherited } = process.env;
  const r = spawnSync(process.execPath, [BIN, '--version'], {
    encoding: 'utf8',
    env: { ...inherited, TMPDIR: tmp, ...env },
    timeout: 60_000,
  });
  expect(r.status, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/^inventory-conformance \d+\.\d+\.\d+/);
  return fs.readdirSync(tmp).sort();
}

function withTmp(run: (tmp: string) => void): void {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'node-features-'));
  try {
    run(tmp);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

test(`node ${process.version}: the launcher keeps Node's compile cache in a private folder where Node has one (22.1 and later), none on Node 20; it runs the sources by type stripping where Node strips types, the transpiled tree elsewhere`, () => {
  withTmp((tmp) => {
    const entries = versionIn(tmp);
    const trees = `inventory-conformance-trees-${uid}`;
    if (NODE_STRIPS_TYPES) expect(entries, 'no transpiled tree').not.toContain(trees);
    else expect(entries, 'the transpiled tree').toContain(trees);
    const folder = `inventory-conformance-compile-cache-${uid}`;
    if (!HAS_COMPILE_CACHE) {
      expect(entries, 'no cache of our own').not.toContain(folder);
      return;
    }
    expect(entries).toContain(folder);
    const dir = path.join(tmp, folder);
    expect(fs.lstatSync(dir).mode & 0o777, 'only its user may enter it').toBe(0o700);
    expect(fs.readdirSync(dir, { recursive: true }).length, 'Node wrote its cache there').toBeGreaterThan(1);
  });
});

test(`node ${process.version}: a compile cache folder the caller names is the one used`, () => {
  withTmp((tmp) => {
    const chosen = path.join(tmp, 'chosen');
    const entries = versionIn(tmp, { NODE_COMPILE_CACHE: chosen });
    expect(entries, 'no folder of our own').not.toContain(`inventory-conformance-compile-cache-${uid}`);
    // Node 20 reads no NODE_COMPILE_CACHE: nothing is written anywhere.
    const written = fs.existsSync(chosen) ? fs.readdirSync(chosen, { recursive: true }).length : 0;
    if (HAS_COMPILE_CACHE) expect(written, 'Node wrote its cache there').toBeGreaterThan(1);
    else expect(written).toBe(0);
  });
});

test(`node ${process.version}: the reference server starts as the CLI starts it, with tsx only where Node does not strip types`, () => {
  const args = nodeArgsFor(codeFile('reference-server/main'));
  expect(args.includes('--import'), 'a loader').toBe(!NODE_STRIPS_TYPES);
  const r = spawnSync(process.execPath, [...args, '--help'], { encoding: 'utf8', timeout: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  expect(r.stdout).toContain('Usage: inventory-conformance serve');
});
