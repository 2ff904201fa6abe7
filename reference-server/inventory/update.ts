/**
 * The InventoryUpdate request body.
 *
 * Spec: [InventoryUpdate](spec/inventory-service.md#inventoryupdate-request-object) —
 * `quantity`, integer, required; 400 when "the body lacks required fields or has invalid values".
 * The spec does not show a minimum or maximum: this server accepts 0 … 2^53-1 (a stock count is
 * not negative, and larger integers do not survive JSON parsing exactly). `5.0` is the integer 5
 * (JSON Schema's notion of integer). Other members are ignored (the request shape is experimental).
 *
 * The usual body, `{"quantity":<digits>}` without spaces, is read straight from its bytes; every
 * other body goes through `JSON.parse` and the checks of `parseInventoryUpdate`, with the same outcome.
 */
import { ApiError, ErrorCode } from '../errors/api-error.ts';
import { parseJson } from '../http/json-body.ts';

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

const PREFIX = Buffer.from('{"quantity":');
const DIGIT_0 = 0x30;
const CLOSE_BRACE = 0x7d;
/** At most 15 digits: always below 2^53, so read exactly. */
const MAX_FAST_DIGITS = 15;

/** The new quantity from the request body bytes, or a 400. */
export function quantityOfBody(body: Buffer): number {
  return canonicalQuantity(body) ?? parseInventoryUpdate(parseJson(body));
}

/** The quantity of a body that is exactly `{"quantity":<digits>}` (no leading zero), else undefined. */
function canonicalQuantity(body: Buffer): number | undefined {
  const end = body.length - 1;
  const digits = end - PREFIX.length;
  if (digits < 1 || digits > MAX_FAST_DIGITS || body[end] !== CLOSE_BRACE) return undefined;
  for (let i = 0; i < PREFIX.length; i++) if (body[i] !== PREFIX[i]) return undefined;
  if (digits > 1 && body[PREFIX.length] === DIGIT_0) return undefined;
  let quantity = 0;
  for (let i = PREFIX.length; i < end; i++) {
    const digit = body[i] - DIGIT_0;
    if (digit < 0 || digit > 9) return undefined;
    quantity = quantity * 10 + digit;
  }
  return quantity;
}
