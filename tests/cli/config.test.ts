import fs from 'node:fs';
import path from 'node:path';
import { test, expect } from '../certificate/scratch.ts';
import { loadConfig, NOT_IN_FILE, SCHEMA_FILE, TARGET_FIELDS, TOP_FIELDS, variableOf } from '../../cli/config.ts';
import { SETTINGS, type Setting } from '../../settings/index.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const EXAMPLE = path.join(ROOT, 'conformance.example.yaml');
const KEY = 'sk_test_4f9a1c2e7b3d';

function file(scratch: (name: string) => string, text: string): string {
  const f = scratch('conformance.yaml');
  fs.writeFileSync(f, text);
  return f;
}

test('config: the example file is valid; a target and its ${VAR} keys become the run variables', () => {
  const r = loadConfig(
    EXAMPLE,
    { STAGING_API_KEY: KEY, STAGING_RATE_LIMIT_KEY: 'rl_key_123456', STAGING_LOAD_KEY: 'load_key_123456' },
    'staging',
  );
  expect(r.ok && r.env).toMatchObject({
    BASE_URL: 'https://staging.example.com/v1',
    API_KEY: KEY,
    API_PLAN: 'pro',
    RATE_LIMIT_PLAN: 'free',
    CONFORMANCE_PROFILE: 'full',
    LOAD_P99_MS: '1000',
    PHASE_TIMEOUT_S: '900',
  });
  const reference = loadConfig(EXAMPLE, {});
  expect(reference.ok && reference.target).toBe('reference');
  expect(reference.ok && reference.env.BASE_URL).toBeUndefined();
});

test('config: every key of the schema maps to a setting', () => {
  const schema = JSON.parse(fs.readFileSync(SCHEMA_FILE, 'utf8'));
  const names = new Set(SETTINGS.map((s) => s.name));
  const keys = [
    ...Object.keys(schema.properties.thresholds.properties),
    ...Object.keys(schema.properties.budgets.properties),
    ...Object.keys(schema.definitions.target.properties),
  ];
  for (const k of keys) expect(names.has(variableOf(k)), `${k} → ${variableOf(k)}`).toBe(true);
});

type Node = Record<string, unknown>;

/** Where each setting lives in the schema: `targets.*.x`, a top-level key, `thresholds.x` or `budgets.x`. */
function schemaNodes(schema: {
  properties: Record<string, Node>;
  definitions: Record<string, Node>;
}): Map<string, { at: string; node: Node }> {
  const out = new Map<string, { at: string; node: Node }>();
  const target = schema.definitions.target!.properties as Record<string, Node>;
  for (const [k, node] of Object.entries(target)) out.set(TARGET_FIELDS[k] ?? `(unmapped targets.*.${k})`, { at: `targets.*.${k}`, node });
  for (const [k, node] of Object.entries(schema.properties)) if (k in TOP_FIELDS) out.set(TOP_FIELDS[k]!, { at: k, node });
  for (const group of ['thresholds', 'budgets']) {
    for (const [k, node] of Object.entries(schema.properties[group]!.properties as Record<string, Node>))
      out.set(variableOf(k), { at: `${group}.${k}`, node });
  }
  return out;
}

/** The schema a setting's kind and bounds call for (a setting's own rule, settings/define.ts). */
function expectedNode(s: Setting, definitions: Record<string, Node>): Node {
  const bounds: Node = {};
  if (s.min !== undefined) bounds[s.minExclusive ? 'exclusiveMinimum' : 'minimum'] = s.min;
  if (s.max !== undefined) bounds.maximum = s.max;
  switch (s.kind) {
    case 'integer':
    case 'number':
      return { type: s.kind, ...bounds };
    case 'boolean':
      return { type: 'boolean' };
    case 'enum':
      return { enum: [...(s.values ?? [])] };
    case 'secret':
      return { ...definitions.reference, description: undefined };
    case 'int64':
      return { type: 'string', pattern: '^-?[0-9]+$' };
    default:
      return { type: 'string' };
  }
}

/** A schema node with its `$ref` followed, without descriptions. */
function resolved(node: Node, definitions: Record<string, Node>): Node {
  const ref = typeof node.$ref === 'string' ? definitions[node.$ref.replace('#/definitions/', '')] : undefined;
  const { $ref: _r, description: _d, ...rest } = { ...(ref ?? {}), ...node };
  return rest;
}

test("config: every setting the file may hold has one schema key whose type and bounds are the setting's (the schema cannot drift from settings/)", () => {
  const schema = JSON.parse(fs.readFileSync(SCHEMA_FILE, 'utf8'));
  const nodes = schemaNodes(schema);
  const inFile = SETTINGS.filter((s) => !(NOT_IN_FILE as readonly string[]).includes(s.name));
  expect(
    [...nodes.keys()].sort(),
    'schema keys ↔ settings (add the key to schemas/conformance-config.schema.json and cli/config.ts)',
  ).toEqual(inFile.map((s) => s.name).sort());
  const mismatches = inFile.flatMap((s) => {
    const { at, node } = nodes.get(s.name)!;
    const want = JSON.parse(JSON.stringify(expectedNode(s, schema.definitions))) as Node;
    const got = resolved(node, schema.definitions);
    // A URL, a path or a name is a string; the schema may narrow it (a key file only as a ${VAR} reference).
    const stringy = s.kind === 'url' || s.kind === 'path' || s.kind === 'string';
    const same = stringy
      ? got.type === 'string'
      : JSON.stringify(Object.entries(want).sort()) === JSON.stringify(Object.entries(got).sort());
    return same ? [] : [{ setting: s.name, at, expected: want, observed: got }];
  });
  expect(mismatches, 'schema keys whose type or bounds differ from the setting').toEqual([]);
  // The check fails on the drift it guards: a bound loosened (loadBurstMax ≥ 1 where LOAD_BURST_MAX needs ≥ 2).
  const drifted = structuredClone(schema);
  drifted.properties.budgets.properties.loadBurstMax.minimum = 1;
  const d = schemaNodes(drifted).get('LOAD_BURST_MAX')!;
  expect(resolved(d.node, drifted.definitions)).not.toEqual(
    expectedNode(SETTINGS.find((s) => s.name === 'LOAD_BURST_MAX')!, drifted.definitions),
  );
});

const LITERAL: [string, string][] = [
  ['a literal apiKey', `version: 1\ntargets:\n  s:\n    baseUrl: https://s.example.com/v1\n    apiKey: ${KEY}\n`],
  ['a key embedded in a reference', `version: 1\ntargets:\n  s:\n    loadKey: "\${X}${KEY}"\n`],
  ['a key pasted into another field', `version: 1\ntargets:\n  s:\n    baseUrl: https://s.example.com/v1?k=${KEY}\n`],
];
for (const [name, text] of LITERAL) {
  test(`config: ${name} is refused, and the error does not print it`, async ({ scratch }) => {
    const r = loadConfig(file(scratch, text), { API_KEY: KEY });
    expect(r.ok).toBe(false);
    const errors = !r.ok ? r.errors.join('\n') : '';
    expect(errors).toContain('holds a literal key');
    expect(errors).not.toContain(KEY);
  });
}

const BAD: [string, string, RegExp][] = [
  ['unknown key', 'version: 1\ntargets: { s: {} }\nprofle: full\n', /\(top level\): unknown key "profle"/],
  ['bad enum', 'version: 1\ntargets: { s: { apiPlan: gold } }\n', /targets\.s\.apiPlan: must be one of free, pro, business, enterprise/],
  ['bad threshold', 'version: 1\ntargets: { s: {} }\nthresholds: { loadMaxErrorRate: 2 }\n', /thresholds\.loadMaxErrorRate: must be <= 1/],
  ['no targets', 'version: 1\n', /missing "targets"/],
  ['wrong version', 'version: 2\ntargets: { s: {} }\n', /version: must be 1/],
  [
    'YAML syntax, without quoting the line',
    `version: 1\ntargets: { s: { apiKey: "\${A}" }\nbroken: [${KEY}\n`,
    /not valid YAML \(line \d+, column \d+\)/,
  ],
  ['unknown target', 'version: 1\ntargets: { a: {}, b: {} }\ndefault: c\n', /no target "c" \(targets: a, b\)/],
  ['two targets, none chosen', 'version: 1\ntargets: { a: {}, b: {} }\n', /choose one with --target/],
  [
    'unset non-key reference',
    'version: 1\ntargets: { s: { baseUrl: "${NOPE_URL}" } }\n',
    /targets\.s\.baseUrl refers to an unset or empty variable/,
  ],
];
for (const [name, text, message] of BAD) {
  test(`config: a bad file is refused with a clear error (${name})`, async ({ scratch }) => {
    const r = loadConfig(file(scratch, text), {});
    expect(r.ok).toBe(false);
    expect(!r.ok && r.errors.join('\n')).toMatch(message);
    expect(!r.ok && r.errors.join('\n')).not.toContain(KEY);
  });
}

test('config: a key referring to an empty variable (an unset CI secret) is named, not silently dropped', async ({ scratch }) => {
  const r = loadConfig(
    file(scratch, 'version: 1\ntargets:\n  s:\n    baseUrl: https://s.example.com/v1\n    apiKey: ${K}\n    loadKey: ${L}\n'),
    { K: KEY, L: '' },
  );
  expect(r.ok).toBe(true);
  expect(r.ok && r.env.LOAD_KEY).toBeUndefined();
  expect(r.ok && r.notes.join('\n')).toContain('targets.s.loadKey refers to an unset or empty variable: LOAD_KEY is not given');
});
