/**
 * The inventory: one InventoryItem per pet, with a pre-serialized list body.
 *
 * Spec: [InventoryItem](spec/inventory-service.md#inventoryitem-response-object) and
 * [PetStatus](spec/inventory-service.md#petstatus-enumeration-of-strings). `petId` is an
 * int64 kept as `bigint` and written to JSON as its exact decimal digits. Mutations are synchronous
 * (node runs one at a time), so an update is atomic and its response is serialized from exactly
 * the stored item; the cached list body is dropped on every update.
 */
export type PetStatus = 'available' | 'pending' | 'sold';

export const PET_STATUSES: readonly PetStatus[] = ['available', 'pending', 'sold'];

export interface InventoryItem {
  readonly petId: bigint;
  quantity: number;
  readonly status: PetStatus;
}

/** On the items the in-process store keeps: their JSON up to the quantity (`petId` never changes). */
const JSON_HEAD = Symbol('jsonHead');

type StoredItem = InventoryItem & { readonly [JSON_HEAD]: string };

/** JSON of one item; `petId` as exact decimal digits (JSON.stringify cannot write a bigint). */
export function serializeItem(item: InventoryItem): string {
  const head = (item as Partial<StoredItem>)[JSON_HEAD] ?? `{"petId":${item.petId.toString()},"quantity":`;
  return `${head}${item.quantity},"status":"${item.status}"}`;
}

/**
 * Where the stock levels live: in this process (`Inventory`, synchronous) or shared by the
 * instances of a deployment (`RedisInventory`, asynchronous). Handlers accept either. Every
 * implementation is linearizable per pet: an update's answer is the value it stored, and a list
 * that starts after an update answered sees it.
 */
export interface InventoryStore {
  /** The `GET /inventory` body. */
  listJson(): Buffer | Promise<Buffer>;
  get(petId: bigint): InventoryItem | undefined | Promise<InventoryItem | undefined>;
  /** Replaces the stock count; returns the stored item, or undefined for an unknown pet. */
  setQuantity(petId: bigint, quantity: number): InventoryItem | undefined | Promise<InventoryItem | undefined>;
}

/** The in-process store (the default). */
export class Inventory implements InventoryStore {
  private readonly items = new Map<bigint, InventoryItem>();
  private listBody: Buffer | undefined;

  /** Copies `seed`: each server owns its inventory. */
  constructor(seed: Iterable<InventoryItem>) {
    for (const item of seed) {
      const stored: StoredItem = {
        petId: item.petId,
        quantity: item.quantity,
        status: item.status,
        [JSON_HEAD]: `{"petId":${item.petId.toString()},"quantity":`,
      };
      this.items.set(item.petId, stored);
    }
  }

  /** The `GET /inventory` body, built once per change. */
  listJson(): Buffer {
    if (this.listBody === undefined) {
      const parts: string[] = [];
      for (const item of this.items.values()) parts.push(serializeItem(item));
      this.listBody = Buffer.from(`[${parts.join(',')}]`);
    }
    return this.listBody;
  }

  get(petId: bigint): InventoryItem | undefined {
    return this.items.get(petId);
  }

  /** Replaces the stock count; returns the stored item, or undefined for an unknown pet. */
  setQuantity(petId: bigint, quantity: number): InventoryItem | undefined {
    const item = this.items.get(petId);
    if (item === undefined) return undefined;
    item.quantity = quantity;
    this.listBody = undefined;
    return item;
  }

  snapshot(): InventoryItem[] {
    return [...this.items.values()].map((item) => ({ petId: item.petId, quantity: item.quantity, status: item.status }));
  }
}
