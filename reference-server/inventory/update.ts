/**
 * The InventoryUpdate request body.
 *
 * Spec: [InventoryUpdate](spec/inventory-service.md#inventoryupdate-request-object) —
 * `quantity`, integer, required; 400 when "the body lacks required fields or has invalid values".
 * The spec does not show a minimum or maximum: this server accepts 0 … 2^53-1 (a stock count is
 * not negative, and larger integers do not survive JSON parsing exactly). `5.0` is the integer 5
 * (JSON Schema's notion of integer). Other members are ignored (the request shape is experimental).
 */
import { ApiError, ErrorCode } from '../errors/api-error.ts';

export const MIN_QUANTITY = 0;
export const MAX_QUANTITY = Number.MAX_SAFE_INTEGER;

/** The new quantity from a parsed JSON body, or a 400. */
export function parseInventoryUpdate(body: unknown): number {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ApiError(400, ErrorCode.invalidBody, 'The body must be a JSON object: {"quantity": <integer>}.');
  }
  if (!('quantity' in body)) {
    throw new ApiError(400, ErrorCode.invalidBody, 'quantity is required.');
  }
  const quantity = (body as { quantity: unknown }).quantity;
  if (typeof quantity !== 'number' || !Number.isInteger(quantity)) {
    throw new ApiError(400, ErrorCode.invalidBody, 'quantity must be an integer.');
  }
  if (quantity < MIN_QUANTITY || quantity > MAX_QUANTITY) {
    throw new ApiError(400, ErrorCode.invalidBody, `quantity must be between ${MIN_QUANTITY} and ${MAX_QUANTITY}.`);
  }
  return quantity;
}
