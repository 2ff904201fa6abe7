/**
 * Raw JSON number tokens, to check how the server wrote an int64 (spec, InventoryItem: petId is
 * integer/int64). Pure functions.
 */

/**
 * The raw value tokens of every `"<field>": <number>` member in `text`, in document order, as
 * written (`9007199254740993`, `1e3`, `4.0`). Strings and other value types are skipped by
 * position: the n-th token belongs to the n-th member named `field` only when every such member
 * is a number, which the callers check.
 */
export function rawIntegerTokens(text: string, field: string): Array<string | undefined> {
  const out: Array<string | undefined> = [];
  const re = new RegExp(`"${field.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"\\s*:\\s*(-?[0-9][0-9.eE+-]*|"[^"]*"|[a-z]+|[[{])`, 'g');
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) out.push(/^-?[0-9]/.test(m[1]) ? m[1] : undefined);
  return out;
}
