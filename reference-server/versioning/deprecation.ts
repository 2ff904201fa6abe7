/**
 * Deprecation and sunset markers.
 *
 * Spec: [Versioning](spec/inventory-service.md#versioning) — "`GET /pets/{petId}` is
 * deprecated and has a sunset date" (the date is not shown). Responses of the deprecated route
 * carry `Deprecation: @<epoch seconds>` (RFC 9745 §2.1) and `Sunset: <IMF-fixdate>` (RFC 8594 §3).
 * The deprecation date is fixed (2026-01-01T00:00:00Z); the sunset is 1 January of the year after
 * next, counted from when the server starts, so it is always at least a year ahead and never
 * before the deprecation.
 */
export const DEPRECATED_AT_MS = Date.UTC(2026, 0, 1);

export function sunsetFor(nowMs: number): number {
  return Date.UTC(new Date(nowMs).getUTCFullYear() + 2, 0, 1);
}

/** Flat header list for a deprecated route. */
export function deprecationHeaders(nowMs: number): string[] {
  return ['Deprecation', `@${Math.floor(DEPRECATED_AT_MS / 1000)}`, 'Sunset', new Date(sunsetFor(nowMs)).toUTCString()];
}

/**
 * Stability markers of the operations ("Markers named in the interface are `experimental` and
 * `beta`"). No standard header carries them; they are documented in `schemas/openapi.yaml`
 * (`x-stability`) and listed here for readers of the server.
 */
export const STABILITY: Readonly<Record<string, 'experimental' | 'beta' | 'deprecated'>> = {
  updateInventory: 'experimental',
  getPetById: 'deprecated',
};
