/**
 * Is the target the bundled reference server? Then load is only ever sent to loopback.
 *
 * Certify passes the reference server's own demo keys (`fixtures/keys.yaml`) when it certifies it,
 * so a run whose `LOAD_KEY` or `RATE_LIMIT_KEY` is one of those keys targets the reference server
 * (directly or through a local fault proxy). Keys are compared in memory, never printed.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

const KEYS_FILE = fileURLToPath(new URL('../../fixtures/keys.yaml', import.meta.url));

function bundledKeys(): Set<string> {
  try {
    const doc = parseYaml(fs.readFileSync(KEYS_FILE, 'utf8')) as { keys?: Array<{ key?: unknown }> };
    return new Set((doc.keys ?? []).map((k) => k.key).filter((k): k is string => typeof k === 'string' && k.length > 0));
  } catch {
    return new Set();
  }
}

/** True when any of `keys` is a demo key of the bundled reference server. */
export function usesReferenceKeys(keys: ReadonlyArray<string | undefined>): boolean {
  const known = bundledKeys();
  return keys.some((k) => k !== undefined && known.has(k));
}

/** `http://127.0.0.1:8080/v1` → the same without a trailing slash; for records and messages (no key in it). */
export function describeTarget(baseUrl: string): string {
  const u = new URL(baseUrl);
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
}
