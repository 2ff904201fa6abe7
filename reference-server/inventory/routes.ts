/**
 * The inventory operations.
 *
 * Spec: [List inventory](spec/inventory-service.md#1-list-inventory) and
 * [Update stock level](spec/inventory-service.md#2-update-stock-level-experimental).
 */
import { ApiError, ErrorCode } from '../errors/api-error.ts';
import type { Exchange } from '../http/exchange.ts';
import { checkContentType } from '../http/json-body.ts';
import { send } from '../http/response.ts';
import { parsePetId } from './pet-id.ts';
import { serializeItem, type InventoryItem } from './store.ts';
import { quantityOfBody } from './update.ts';

/** `GET /v1/inventory` (listInventory): 200, the JSON array of every InventoryItem (pre-serialized). */
export function listInventory(x: Exchange): void | Promise<void> {
  const body = x.app.inventory.listJson();
  if (body instanceof Uint8Array) return send(x.res, 200, body, x.decision);
  return body.then((b) => send(x.res, 200, b, x.decision));
}

/**
 * `PATCH /v1/inventory/{petId}` (updateInventory, experimental): 200 with the updated item; 400 for
 * a bad id or body, 404 for an unknown pet, 415 for a non-JSON `Content-Type`. The id is checked
 * before the body is read, the pet's existence after the body is valid (so a bad body is a 400 for
 * any id). The response is serialized from exactly the item the store wrote.
 */
export function updateInventory(x: Exchange): void {
  const petId = parsePetId(x.params[0]);
  checkContentType(x, 'optional-415');
  x.app.body.read(x, updateWithBody, petId);
}

/** The update once the body has arrived (a module function: no closure per request). */
function updateWithBody(x: Exchange, body: Buffer, petId: bigint): void {
  const item = x.app.inventory.setQuantity(petId, quantityOfBody(body));
  if (item === undefined || !('then' in item)) return answerUpdate(x, petId, item);
  Promise.resolve(item)
    .then((stored) => answerUpdate(x, petId, stored))
    .catch((error: unknown) => x.app.fail(x, error));
}

function answerUpdate(x: Exchange, petId: bigint, item: InventoryItem | undefined): void {
  if (item === undefined) throw new ApiError(404, ErrorCode.notFound, `No pet with id ${petId}.`);
  send(x.res, 200, serializeItem(item), x.decision);
}
