/**
 * Every error path the suite can provoke (spec, Errors table: 400, 401, 404), shared by the
 * Error-body checks and the rate-limit header checks. A path that needs a valid key on an
 * operation that changes state is `@mutates`.
 */
import type { ApiClient, ApiResponse, Stock } from '../fixtures.ts';

export interface ProvokedResponse {
  name: string;
  /** The status the spec requires for this request. */
  expected: number;
  mutates: boolean;
  send(api: ApiClient, stock: Stock, requirementId: string): Promise<ApiResponse>;
}

/** A pet id absent from the list: MISSING_PET_ID, else the first unlisted candidate. */
export async function unlistedPetId(api: ApiClient, requirementId: string): Promise<string> {
  if (api.env.missingPetId) return api.env.missingPetId;
  const listed = new Set((await api.inventory(requirementId)).map((e) => e.id));
  const id = ['987654321', '123456789012', '31337', '424242424242', '99'].find((c) => !listed.has(c));
  if (!id) throw new Error(`${requirementId}: no unlisted pet id found; set MISSING_PET_ID`);
  return id;
}

export const ERROR_PATHS: ProvokedResponse[] = [
  {
    name: '401 listInventory without a key',
    expected: 401,
    mutates: false,
    send: (api) => api.listInventory('none'),
  },
  {
    name: '401 listInventory with an unknown key',
    expected: 401,
    mutates: false,
    send: (api) => api.listInventory({ authorization: `Bearer ${api.unknownKey}` }),
  },
  {
    name: '401 sendMessage without a key',
    expected: 401,
    mutates: false,
    send: (api) => api.sendMessage({ message: 'error-body check' }, { credential: 'none' }),
  },
  {
    name: '400 updateInventory with invalid JSON',
    expected: 400,
    mutates: true,
    send: async (api, stock, id) => {
      const pet = await stock.claim(id);
      return api.updateInventory(pet.id, undefined, { body: '{"quantity": ', contentType: 'application/json' });
    },
  },
  {
    name: '404 updateInventory of an unknown pet',
    expected: 404,
    mutates: true,
    send: async (api, _stock, id) => api.updateInventory(await unlistedPetId(api, id), { quantity: 1 }),
  },
  {
    name: '400 sendMessage without message',
    expected: 400,
    mutates: true,
    send: (api) => api.sendMessage({ text: 'no message field' }),
  },
];
