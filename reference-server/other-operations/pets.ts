/**
 * The deprecated pet operation, named but not shown by the spec.
 *
 * Spec: [Other operations](spec/inventory-service.md#other-operations) and
 * [Versioning](spec/inventory-service.md#versioning). Its payload is "not shown": this
 * server returns a minimal `{"id": <petId>, "status": <PetStatus>}` for a pet of the inventory,
 * 404 for another id and 400 for an id that is not an int64. Responses carry the deprecation
 * headers (see `versioning/deprecation.ts`).
 */
import { ApiError, ErrorCode } from '../errors/api-error.ts';
import type { Exchange } from '../http/exchange.ts';
import { send } from '../http/response.ts';
import { parsePetId } from '../inventory/pet-id.ts';

/** `GET /v1/pets/{petId}` (deprecated). */
export async function getPetById(x: Exchange): Promise<void> {
  const petId = parsePetId(x.params[0]);
  const item = await x.app.inventory.get(petId);
  if (item === undefined) throw new ApiError(404, ErrorCode.notFound, `No pet with id ${petId}.`);
  send(x.res, 200, `{"id":${item.petId.toString()},"status":"${item.status}"}`, x.decision, x.routeHeaders);
}
