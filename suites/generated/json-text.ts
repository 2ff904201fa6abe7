/**
 * JSON text in every valid representation of a value (RFC 8259 §6 and §7): an integer as `5`,
 * `5.0`, `5e0`, `5E+0`, `0.5e1` or `50e-1`; a string with its characters written as `\uXXXX`
 * escapes; whitespace between tokens. `bigint` is written as its exact digits. Pure.
 */

export type IntegerForm = 'plain' | 'fraction' | 'exponent' | 'upper-exponent' | 'scientific' | 'negative-exponent';
export type StringForm = 'plain' | 'escaped';

export interface JsonStyle {
  integers: IntegerForm;
  strings: StringForm;
  /** Whitespace written around structural characters (`''`, `' '`, `'\n\t'`). */
  space: string;
}

export const PLAIN_STYLE: JsonStyle = { integers: 'plain', strings: 'plain', space: '' };
export const INTEGER_FORMS: IntegerForm[] = ['plain', 'fraction', 'exponent', 'upper-exponent', 'scientific', 'negative-exponent'];

/** An integer's decimal digits in the given form; every form denotes the same number. */
export function writeInteger(value: number | bigint, form: IntegerForm): string {
  const digits = BigInt(value).toString();
  const negative = digits.startsWith('-');
  const abs = negative ? digits.slice(1) : digits;
  const sign = negative ? '-' : '';
  switch (form) {
    case 'plain':
      return digits;
    case 'fraction':
      return `${digits}.0`;
    case 'exponent':
      return `${digits}e0`;
    case 'upper-exponent':
      return `${digits}E+0`;
    case 'negative-exponent':
      return abs === '0' ? '0e-1' : `${sign}${abs}0e-1`;
    case 'scientific': {
      if (abs === '0') return '0e5';
      const trimmed = abs.replace(/0+$/, '');
      const zeros = abs.length - trimmed.length;
      // 100 -> 1e2; 5 -> 0.5e1; 1234 -> 1.234e3
      if (trimmed.length === 1) return zeros > 0 ? `${sign}${trimmed}e${zeros}` : `${sign}0.${trimmed}e1`;
      return `${sign}${trimmed[0]}.${trimmed.slice(1)}e${abs.length - 1}`;
    }
  }
}

function writeString(s: string, form: StringForm): string {
  if (form === 'plain') return JSON.stringify(s);
  let out = '"';
  for (let i = 0; i < s.length; i++) out += `\\u${s.charCodeAt(i).toString(16).padStart(4, '0')}`;
  return `${out}"`;
}

/** Writes `value` as JSON text in `style`. Non-integral numbers are written as JavaScript does. */
export function writeJson(value: unknown, style: JsonStyle = PLAIN_STYLE): string {
  const sp = style.space;
  if (value === null) return 'null';
  if (typeof value === 'bigint') return writeInteger(value, style.integers);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`${value} has no JSON representation`);
    return Number.isInteger(value) && Math.abs(value) <= Number.MAX_SAFE_INTEGER
      ? writeInteger(value, style.integers)
      : JSON.stringify(value);
  }
  if (typeof value === 'string') return writeString(value, style.strings);
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${sp}${value.map((v) => writeJson(v, style)).join(`,${sp}`)}${sp}]`;
  if (typeof value === 'object') {
    const members = Object.entries(value as Record<string, unknown>).map(
      ([k, v]) => `${writeString(k, style.strings)}${sp}:${sp}${writeJson(v, style)}`,
    );
    return `{${sp}${members.join(`,${sp}`)}${sp}}`;
  }
  throw new TypeError(`cannot write ${typeof value} as JSON`);
}
