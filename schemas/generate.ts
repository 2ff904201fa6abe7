/**
 * `npm run schemas`: derives one JSON Schema 2020-12 document per object of `openapi.yaml`
 * (components/schemas) into `schemas/json/<Name>.schema.json`. OpenAPI 3.1 schema objects are
 * already 2020-12; the only rewrite is `#/components/schemas/X` → `#/$defs/X`, with every
 * transitively referenced schema copied into `$defs` so each document stands alone.
 */
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

export const SCHEMA_ID_BASE = 'https://inventory-service.example/schemas/';
const COMPONENT_REF = '#/components/schemas/';

export const openapiPath = fileURLToPath(new URL('./openapi.yaml', import.meta.url));
export const jsonDir = fileURLToPath(new URL('./json/', import.meta.url));

type Json = unknown;
type SchemaMap = Record<string, Json>;

/** Reads and parses `schemas/openapi.yaml`. */
export function readOpenapi(path = openapiPath): Record<string, unknown> {
  return parseYaml(readFileSync(path, 'utf8')) as Record<string, unknown>;
}

/** Copies `node`, rewriting component refs to `$defs` refs and collecting the names referenced. */
function rewrite(node: Json, refs: Set<string>): Json {
  if (Array.isArray(node)) return node.map((item) => rewrite(item, refs));
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, Json> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string') {
      if (!value.startsWith(COMPONENT_REF)) throw new Error(`unsupported $ref ${value}`);
      const name = value.slice(COMPONENT_REF.length);
      refs.add(name);
      out[key] = `#/$defs/${name}`;
    } else {
      out[key] = rewrite(value, refs);
    }
  }
  return out;
}

/**
 * Pure: the JSON Schema 2020-12 document of every `components.schemas` entry of an OpenAPI 3.1
 * document, keyed by name (in the order of the OpenAPI document).
 */
export function generateJsonSchemas(openapi: Record<string, unknown>): Record<string, Record<string, Json>> {
  const components = (openapi.components as { schemas?: SchemaMap } | undefined)?.schemas ?? {};
  const result: Record<string, Record<string, Json>> = {};
  for (const name of Object.keys(components)) {
    const refs = new Set<string>();
    const root = rewrite(components[name], refs) as Record<string, Json>;
    const defs: Record<string, Json> = {};
    const pending = [...refs];
    while (pending.length > 0) {
      const dep = pending.shift()!;
      if (dep in defs) continue;
      if (!(dep in components)) throw new Error(`${name}: $ref to unknown schema ${dep}`);
      const depRefs = new Set<string>();
      defs[dep] = rewrite(components[dep], depRefs);
      pending.push(...depRefs);
    }
    result[name] = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: `${SCHEMA_ID_BASE}${name}.schema.json`,
      $comment: 'Generated from schemas/openapi.yaml by `npm run schemas`; do not edit.',
      title: name,
      ...root,
      ...(Object.keys(defs).length > 0 ? { $defs: sortKeys(defs) } : {}),
    };
  }
  return result;
}

function sortKeys(map: Record<string, Json>): Record<string, Json> {
  return Object.fromEntries(Object.entries(map).sort(([a], [b]) => a.localeCompare(b)));
}

/** The exact file text written for one document (the drift test compares this text). */
export function serializeSchema(doc: unknown): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/** Regenerates `schemas/json/` from `openapi.yaml`, removing stale `*.schema.json` files. */
export function writeJsonSchemas(dir = jsonDir): string[] {
  const docs = generateJsonSchemas(readOpenapi());
  mkdirSync(dir, { recursive: true });
  for (const file of readdirSync(dir)) {
    if (file.endsWith('.schema.json') && !(file.replace('.schema.json', '') in docs)) rmSync(`${dir}/${file}`);
  }
  for (const [name, doc] of Object.entries(docs)) writeFileSync(`${dir}/${name}.schema.json`, serializeSchema(doc));
  return Object.keys(docs);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const names = writeJsonSchemas();
  console.log(`wrote ${names.length} schemas to schemas/json/: ${names.join(', ')}`);
}
