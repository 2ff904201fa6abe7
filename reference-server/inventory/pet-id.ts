/**
 * The `{petId}` path parameter.
 *
 * Spec: [Update stock level](spec/inventory-service.md#2-update-stock-level-experimental)
 * — "`petId`: integer, int64, required". Ids are handled as `bigint`, exactly, including ids above
 * 2^53 and at the int64 bounds. A segment that is not a decimal integer (an optional `-` and
 * digits), or one outside [-2^63, 2^63-1], is a 400 `invalid_pet_id`.
 */
import { ApiError, ErrorCode } from '../errors/api-error.ts';

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

const DECIMAL = /^-?[0-9]{1,30}$/;

export function parsePetId(segment: string): bigint {
  if (!DECIMAL.test(segment)) {
    throw new ApiError(400, ErrorCode.invalidPetId, 'petId must be a decimal int64 integer.');
  }
  const id = BigInt(segment);
  if (id < INT64_MIN || id > INT64_MAX) {
    throw new ApiError(400, ErrorCode.invalidPetId, 'petId is outside the int64 range.');
  }
  return id;
}
