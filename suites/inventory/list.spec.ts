/**
 * Spec: Endpoints > 1. List inventory; Resources and their fields > InventoryItem, PetStatus.
 * `GET {base_url}/inventory` answers 200 with a JSON array of InventoryItem.
 */
import { test, expectFact, expectNoDeviation, expectStatus } from '../fixtures.ts';
import { validate, isInt64 } from '../../schemas/index.ts';
import { isJsonMediaType } from '../lib/headers.ts';
import { abbreviate } from '../lib/error-body.ts';
import { rawIntegerTokens } from '../lib/json-tokens.ts';

test('INV-01 the list answers 200 with a JSON array of valid InventoryItems', async ({ api }) => {
  const res = await api.listInventory();
  expectStatus(res, 200);
  expectFact(res.jsonError === undefined, { what: `body of ${res.label}`, expected: 'JSON', observed: abbreviate(res.text), res });
  expectFact(Array.isArray(res.json), { what: `body of ${res.label}`, expected: 'a JSON array', observed: abbreviate(res.text), res });
  const { errors } = validate('Inventory', res.json);
  expectNoDeviation(errors, 'every item a valid InventoryItem', res.label, res);
});

test('INV-02 petIds are exact int64 integers', async ({ api }) => {
  const res = await api.listInventory();
  expectStatus(res, 200);
  const items = (Array.isArray(res.json) ? res.json : []) as Record<string, unknown>[];
  const problems: string[] = [];
  const tokens = rawIntegerTokens(res.text, 'petId');
  items.forEach((item, i) => {
    const id = item.petId;
    if (!isInt64(id)) {
      problems.push(`[${i}].petId is ${typeof id === 'string' ? `the string "${id}"` : String(id)}, expected an int64 integer`);
      return;
    }
    const token = tokens[i];
    if (token !== undefined && !/^-?(0|[1-9]\d*)$/.test(token)) {
      problems.push(`[${i}].petId is written as ${token}, expected a plain JSON integer (no fraction, no exponent)`);
    } else if (token !== undefined && token !== String(id)) {
      problems.push(`[${i}].petId reads back as ${String(id)}, written as ${token}`);
    }
  });
  expectNoDeviation(problems, 'every petId read back exactly as written (int64)', res.label, res);
});

test('INV-03 the list is served as application/json', async ({ api }) => {
  const res = await api.listInventory();
  expectStatus(res, 200);
  const ct = res.header('content-type');
  expectFact(isJsonMediaType(ct), { expected: 'Content-Type application/json', observed: ct ?? 'none', res });
});

test('INV-04 every status is available, pending or sold', async ({ api }) => {
  const res = await api.listInventory();
  expectStatus(res, 200);
  const items = (Array.isArray(res.json) ? res.json : []) as Record<string, unknown>[];
  const wrong = items
    .map((item, i) => ({ i, status: item.status }))
    .filter(({ status }) => !(['available', 'pending', 'sold'] as unknown[]).includes(status))
    .map(({ i, status }) => `[${i}].status = ${JSON.stringify(status)}`);
  expectNoDeviation(wrong, 'every status available, pending or sold', res.label, res);
});

test('INV-05 each pet has one entry in the list', async ({ api }) => {
  const res = await api.listInventory();
  expectStatus(res, 200);
  const items = (Array.isArray(res.json) ? res.json : []) as Record<string, unknown>[];
  const seen = new Map<string, number>();
  for (const item of items) seen.set(String(item.petId), (seen.get(String(item.petId)) ?? 0) + 1);
  const dupes = [...seen].filter(([, n]) => n > 1).map(([id, n]) => `petId ${id} × ${n}`);
  expectNoDeviation(dupes, 'one entry per petId', res.label, res);
});
