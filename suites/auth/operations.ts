/**
 * The operations every auth check runs against (spec, Authentication: "The scheme applies to
 * every inventory operation"; Errors: 401 "all operations"). Each sends a request that would be
 * valid with a good key; an update sends the pet's current quantity unless told otherwise, so
 * that even a server that wrongly accepts it changes nothing.
 */
import type { ApiClient, ApiResponse, Credential, InventoryEntry, Stock } from '../fixtures.ts';

export interface Operation {
  name: string;
  /** Sends with `credential`; `pet` is required for the update. */
  send(api: ApiClient, credential: Credential, pet?: InventoryEntry, quantity?: number): Promise<ApiResponse>;
  /** A valid request on it changes state (update, message): `@mutates` when the key is valid. */
  mutates: boolean;
  needsPet: boolean;
}

export const OPERATIONS: Operation[] = [
  {
    name: 'listInventory',
    send: (api, credential) => api.listInventory(credential),
    mutates: false,
    needsPet: false,
  },
  {
    name: 'updateInventory',
    send: (api, credential, pet, quantity) => {
      if (!pet) throw new Error('updateInventory needs a pet');
      return api.updateInventory(pet.id, { quantity: quantity ?? pet.quantity }, { credential });
    },
    mutates: true,
    needsPet: true,
  },
  {
    name: 'sendMessage',
    send: (api, credential) => api.sendMessage({ message: `auth conformance check ${new Date().toISOString()}` }, { credential }),
    mutates: true,
    needsPet: false,
  },
];

/** The pet an auth test owns when the operation needs one. */
export async function petFor(op: Operation, stock: Stock, requirementId: string): Promise<InventoryEntry | undefined> {
  return op.needsPet ? stock.claim(requirementId) : undefined;
}

/** A key with the case of every letter swapped (undefined when it has no letters). */
export function swapCase(key: string): string | undefined {
  const swapped = [...key].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');
  return swapped === key ? undefined : swapped;
}
