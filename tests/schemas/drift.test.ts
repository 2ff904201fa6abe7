import { test, expect } from '../test.ts';
import { readdirSync, readFileSync } from 'node:fs';
import { generateJsonSchemas, jsonDir, readOpenapi, serializeSchema } from '../../schemas/generate.ts';
import { jsonSchemas, schemaNames } from '../../schemas/index.ts';

/** Names of the committed files that differ from a fresh generation (missing, stale or edited). */
function drift(generated: Record<string, unknown>): string[] {
  const committed = readdirSync(jsonDir).filter((f) => f.endsWith('.schema.json'));
  const expected = Object.keys(generated).map((name) => `${name}.schema.json`);
  const out = committed.filter((f) => !expected.includes(f)).map((f) => `stale ${f}`);
  for (const [name, doc] of Object.entries(generated)) {
    const file = `${name}.schema.json`;
    if (!committed.includes(file)) out.push(`missing ${file}`);
    else if (readFileSync(`${jsonDir}/${file}`, 'utf8') !== serializeSchema(doc)) out.push(`differs ${file}`);
  }
  return out;
}

test('committed schemas/json equal a fresh generation from openapi.yaml (run `npm run schemas`)', () => {
  expect(drift(generateJsonSchemas(readOpenapi()))).toEqual([]);
});

test('the drift check fails when openapi.yaml changes without regenerating', () => {
  const doc = readOpenapi() as any;
  doc.components.schemas.InventoryUpdate.properties.quantity.minimum = 0;
  delete doc.components.schemas.MessageRequest;
  expect(drift(generateJsonSchemas(doc))).toEqual(['stale MessageRequest.schema.json', 'differs InventoryUpdate.schema.json']);
});

test('one 2020-12 document per object, self-contained, exported by schemas/index.ts', () => {
  const generated = generateJsonSchemas(readOpenapi());
  expect(Object.keys(generated).sort()).toEqual([...schemaNames].sort());
  for (const name of schemaNames) {
    const doc = jsonSchemas[name] as Record<string, unknown>;
    expect(doc.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(doc.$id).toMatch(new RegExp(`/${name}\\.schema\\.json$`));
    const text = JSON.stringify(doc);
    expect(text, `${name} has no OpenAPI refs left`).not.toContain('#/components/');
    for (const [, ref] of text.matchAll(/"\$ref":"#\/\$defs\/(\w+)"/g)) {
      expect((doc.$defs as Record<string, unknown>)[ref], `${name} defines ${ref}`).toBeTruthy();
    }
  }
  expect((jsonSchemas.Inventory as any).items).toEqual({ $ref: '#/$defs/InventoryItem' });
  expect(Object.keys((jsonSchemas.Inventory as any).$defs).sort()).toEqual(['InventoryItem', 'PetStatus']);
});

test('generation rejects a $ref it cannot resolve', () => {
  const doc = readOpenapi() as any;
  doc.components.schemas.Inventory.items.$ref = '#/components/schemas/Missing';
  expect(() => generateJsonSchemas(doc)).toThrow(/unknown schema Missing/);
});
