/**
 * Digests of the certificate: SHA-256 of a file, of a canonical JSON value, and of the suite's
 * source as a manifest (one digest per file, sorted by path). `verify` recomputes each of them.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

export function sha256File(file: string): string {
  return sha256(fs.readFileSync(file));
}

/** JSON with object keys sorted at every level, no whitespace: the same value gives the same bytes. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

export function digestOf(value: unknown): string {
  return sha256(canonicalJson(value));
}

/**
 * What "the suite's source" is: everything that decides a verdict. The reference server, the
 * harness's own tests and the docs are not part of it.
 */
export const SUITE_SOURCE = [
  'suites',
  'certify',
  'settings',
  'schemas',
  'cli',
  'playwright.config.ts',
  // the installed package runs the compiled config
  'playwright.config.js',
  'package.json',
  'package-lock.json',
] as const;

const SOURCE_FILE = /\.(ts|js|mjs|cjs|json|ya?ml)$/;

function walk(root: string, rel: string, out: string[]): void {
  const abs = path.join(root, rel);
  if (!fs.existsSync(abs)) return;
  const stat = fs.statSync(abs);
  if (stat.isFile()) {
    if (SOURCE_FILE.test(rel)) out.push(rel.split(path.sep).join('/'));
    return;
  }
  for (const name of fs.readdirSync(abs).sort()) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    walk(root, path.join(rel, name), out);
  }
}

/** `{ 'suites/fixtures.ts': '<sha256>', … }` over SUITE_SOURCE, sorted by path. */
export function sourceManifest(root: string, entries: readonly string[] = SUITE_SOURCE): Record<string, string> {
  const files: string[] = [];
  for (const e of entries) walk(root, e, files);
  files.sort();
  const manifest: Record<string, string> = {};
  for (const f of files) manifest[f] = sha256File(path.join(root, f));
  return manifest;
}

/** Written by the build into the compiled tree: the sources it was compiled from, and what it compiled. */
export const SUITE_SOURCE_FILE = 'suite-source.json';

interface BuiltSuite {
  source: Record<string, string>;
  compiled: Record<string, string>;
}

/**
 * The suite's source manifest at `root`, the same for a clone and for the package built from it.
 * In a clone: the files themselves. In the installed package (compiled at pack time): the sources
 * it was compiled from, as the build recorded them, provided the compiled files are still the ones
 * it built; otherwise the compiled files' own manifest, which matches no certificate.
 */
export function suiteManifest(root: string): Record<string, string> {
  const file = path.join(root, SUITE_SOURCE_FILE);
  if (!fs.existsSync(file)) return sourceManifest(root);
  const compiled = sourceManifest(root);
  let built: BuiltSuite | undefined;
  try {
    built = JSON.parse(fs.readFileSync(file, 'utf8')) as BuiltSuite;
  } catch {
    return compiled;
  }
  return built?.source && built.compiled && manifestDigest(compiled) === manifestDigest(built.compiled) ? built.source : compiled;
}

/** One digest for a manifest: SHA-256 of `sha256sum`-style lines (`<digest>  <path>\n`). */
export function manifestDigest(manifest: Record<string, string>): string {
  return sha256(
    Object.keys(manifest)
      .sort()
      .map((f) => `${manifest[f]}  ${f}\n`)
      .join(''),
  );
}

/** Paths added, removed or changed between two manifests. */
export function manifestChanges(recorded: Record<string, string>, current: Record<string, string>): string[] {
  const out: string[] = [];
  for (const f of Object.keys(recorded)) {
    if (!(f in current)) out.push(`${f} (removed)`);
    else if (current[f] !== recorded[f]) out.push(`${f} (changed)`);
  }
  for (const f of Object.keys(current)) if (!(f in recorded)) out.push(`${f} (added)`);
  return out.sort();
}
