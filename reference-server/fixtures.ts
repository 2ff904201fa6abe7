/**
 * Loading the seed inventory and the demo keys from YAML (`fixtures/inventory.yaml`,
 * `fixtures/keys.yaml`). Integers are read as `bigint` so int64 ids stay exact. A malformed file
 * fails start-up with a message naming the file and the entry.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { INT64_MAX, INT64_MIN } from './inventory/pet-id.ts';
import { PET_STATUSES, type InventoryItem, type PetStatus } from './inventory/store.ts';
import { isPlan, type Limits, type Plan } from './rate-limit/plans.ts';

export interface KeyEntry {
  name: string;
  plan: Plan;
  key: string;
  limits?: Limits;
}

function readYaml(file: string): unknown {
  return parse(readFileSync(file, 'utf8'), { intAsBigInt: true });
}

function list(doc: unknown, field: string, file: string): Record<string, unknown>[] {
  const items = (doc as Record<string, unknown> | null)?.[field];
  if (!Array.isArray(items)) throw new Error(`${file}: expected a list under "${field}"`);
  return items.map((item, i) => {
    if (item === null || typeof item !== 'object') throw new Error(`${file}: ${field}[${i}] is not a mapping`);
    return item as Record<string, unknown>;
  });
}

function safeInteger(value: unknown, where: string): number {
  const n = typeof value === 'bigint' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) throw new Error(`${where}: expected a non-negative integer`);
  return n;
}

/** The seed items of `file`. */
export function loadInventorySeed(file: string): InventoryItem[] {
  const seen = new Set<bigint>();
  return list(readYaml(file), 'items', file).map((raw, i) => {
    const where = `${file}: items[${i}]`;
    const petId = typeof raw.petId === 'number' && Number.isSafeInteger(raw.petId) ? BigInt(raw.petId) : raw.petId;
    if (typeof petId !== 'bigint' || petId < INT64_MIN || petId > INT64_MAX) throw new Error(`${where}: petId must be an int64`);
    if (seen.has(petId)) throw new Error(`${where}: duplicate petId ${petId}`);
    seen.add(petId);
    const status = raw.status;
    if (!PET_STATUSES.includes(status as PetStatus)) throw new Error(`${where}: status must be one of ${PET_STATUSES.join(', ')}`);
    return { petId, quantity: safeInteger(raw.quantity, `${where}.quantity`), status: status as PetStatus };
  });
}

/** The keys of `file`. Never log the result: it holds the keys themselves. */
export function loadKeys(file: string): KeyEntry[] {
  const names = new Set<string>();
  return list(readYaml(file), 'keys', file).map((raw, i) => {
    const where = `${file}: keys[${i}]`;
    const { name, plan, key, limits } = raw;
    if (typeof name !== 'string' || name === '') throw new Error(`${where}: name must be a string`);
    if (names.has(name)) throw new Error(`${where}: duplicate name ${name}`);
    names.add(name);
    if (!isPlan(plan)) throw new Error(`${where}: plan must be free, pro, business or enterprise`);
    if (typeof key !== 'string' || !/^[A-Za-z0-9._~+/-]+=*$/.test(key))
      throw new Error(`${where}: key must be a bearer token (RFC 6750 b64token)`);
    const entry: KeyEntry = { name, plan, key };
    if (limits !== undefined) {
      const l = limits as Record<string, unknown>;
      entry.limits = { minute: safeInteger(l.minute, `${where}.limits.minute`), day: safeInteger(l.day, `${where}.limits.day`) };
    }
    return entry;
  });
}
