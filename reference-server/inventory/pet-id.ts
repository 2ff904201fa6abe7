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

/** Recently parsed segments (a pure function's results; cleared when it reaches `RECENT_IDS`). */
const recent = new Map<string, bigint>();
const RECENT_IDS = 1024;

/** The int64 id of a `{petId}` segment, or a 400 `invalid_pet_id`. */
export function parsePetId(segment: string): bigint {
  const known = recent.get(segment);
  if (known !== undefined) return known;
  const id = parseSegment(segment);
  if (recent.size >= RECENT_IDS) recent.clear();
  recent.set(segment, id);
  return id;
}

function parseSegment(segment: string): bigint {
  if (!DECIMAL.test(segment)) {
    throw new ApiError(400, ErrorCode.invalidPetId, 'petId must be a decimal int64 integer.');
  }
  const id = BigInt(segment);
  if (id < INT64_MIN || id > INT64_MAX) {
    throw new ApiError(400, ErrorCode.invalidPetId, 'petId is outside the int64 range.');
  }
  return id;
}
