/**
 * Media types (type and subtype case-insensitive, parameters such as `charset=utf-8` allowed; RFC 9110 §8.3.1).
 */

/** `type/subtype` of a Content-Type value, lower-cased, or undefined when it is not one. */
export function mediaType(value: string): string | undefined {
  const semi = value.indexOf(';');
  const essence = (semi < 0 ? value : value.slice(0, semi)).trim().toLowerCase();
  return /^[!#$%&'*+.^_`|~0-9a-z-]+\/[!#$%&'*+.^_`|~0-9a-z-]+$/.test(essence) ? essence : undefined;
}

/** `application/json` or a `+json` structured syntax suffix type (RFC 6839). */
export function isJsonMediaType(essence: string | undefined): boolean {
  return essence === 'application/json' || (essence?.startsWith('application/') === true && essence.endsWith('+json'));
}
