/**
 * The inventory on Redis, shared by every instance of a deployment: an update answered by one
 * instance is seen by the next list on any other.
 *
 * Spec: [List inventory](spec/inventory-service.md#1-list-inventory),
 * [Update stock level](spec/inventory-service.md#2-update-stock-level-experimental) and
 * [InventoryItem](spec/inventory-service.md#inventoryitem-response-object). The pets,
 * their order and their status come from the seed file (no operation adds, removes or changes
 * them); only the quantities are shared, in one hash (`<prefix>inventory`, field = petId as exact
 * decimal digits). An update is one `HSET`, a list one `HMGET`: Redis runs commands one at a
 * time, so each is atomic and a list never shows a value nobody wrote. A quantity missing from the
 * hash (a Redis restarted without persistence) reads as its seed value. A Redis that is down or
 * too slow yields a 503 (`StoreUnavailableError`).
 */
import type { Redis } from 'ioredis';
import { storeError } from '../shared-state/redis.ts';
import { serializeItem, type InventoryItem, type InventoryStore, type PetStatus } from './store.ts';

interface Pet {
  readonly petId: bigint;
  readonly field: string;
  readonly status: PetStatus;
  readonly seedQuantity: number;
}

export class RedisInventory implements InventoryStore {
  private readonly pets: Pet[];
  private readonly byId = new Map<bigint, Pet>();
  private readonly fields: string[];
  private readonly key: string;
  /** The last list body and the quantities it was built from (rebuilt only when one changed). */
  private cached: { quantities: string; body: Buffer } | undefined;
  private readonly client: Redis;

  constructor(client: Redis, seed: readonly InventoryItem[], prefix = 'inventory-service:') {
    this.client = client;
    this.key = `${prefix}inventory`;
    this.pets = seed.map((item) => ({ petId: item.petId, field: item.petId.toString(), status: item.status, seedQuantity: item.quantity }));
    for (const pet of this.pets) this.byId.set(pet.petId, pet);
    this.fields = this.pets.map((pet) => pet.field);
  }

  /**
   * Writes the seed quantities: `reset` replaces whatever the hash holds (a deployment starting
   * afresh), `keep` adds only missing pets (an instance joining a running deployment).
   */
  async seed(mode: 'reset' | 'keep'): Promise<void> {
    if (this.pets.length === 0) {
      if (mode === 'reset') await this.client.del(this.key);
      return;
    }
    const pipeline = this.client.multi();
    if (mode === 'reset') {
      pipeline.del(this.key);
      pipeline.hset(this.key, ...this.pets.flatMap((pet) => [pet.field, String(pet.seedQuantity)]));
    } else {
      for (const pet of this.pets) pipeline.hsetnx(this.key, pet.field, String(pet.seedQuantity));
    }
    await pipeline.exec();
  }

  async listJson(): Promise<Buffer> {
    if (this.pets.length === 0) return Buffer.from('[]');
    let values: (string | null)[];
    try {
      values = await this.client.hmget(this.key, ...this.fields);
    } catch (error) {
      throw storeError(error, 'inventory store');
    }
    const quantities = values.join(',');
    if (this.cached?.quantities === quantities) return this.cached.body;
    const parts = this.pets.map((pet, i) => serializeItem(this.item(pet, values[i])));
    const body = Buffer.from(`[${parts.join(',')}]`);
    this.cached = { quantities, body };
    return body;
  }

  async get(petId: bigint): Promise<InventoryItem | undefined> {
    const pet = this.byId.get(petId);
    if (pet === undefined) return undefined;
    try {
      return this.item(pet, await this.client.hget(this.key, pet.field));
    } catch (error) {
      throw storeError(error, 'inventory store');
    }
  }

  async setQuantity(petId: bigint, quantity: number): Promise<InventoryItem | undefined> {
    const pet = this.byId.get(petId);
    if (pet === undefined) return undefined;
    try {
      await this.client.hset(this.key, pet.field, String(quantity));
    } catch (error) {
      throw storeError(error, 'inventory store');
    }
    return { petId: pet.petId, quantity, status: pet.status };
  }

  private item(pet: Pet, value: string | null): InventoryItem {
    return { petId: pet.petId, quantity: value === null ? pet.seedQuantity : Number(value), status: pet.status };
  }
}
