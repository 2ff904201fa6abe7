/**
 * `Deprecation` (RFC 9745 §2.1: a structured-field Date, `@<epoch seconds>`) and `Sunset`
 * (RFC 8594 §3: an HTTP-date). Pure functions.
 */
import { parseHttpDate } from './http-date.ts';

export type DeprecationValue =
  | { ok: true; form: 'sf-date'; epochS: number }
  | { ok: true; form: 'obsolete'; epochS?: number; note: string }
  | { ok: false; reason: string };

export function parseDeprecation(value: string): DeprecationValue {
  const v = value.trim();
  if (/^@-?\d{1,15}$/.test(v)) return { ok: true, form: 'sf-date', epochS: Number(v.slice(1)) };
  if (/^(true|\?1)$/i.test(v))
    return { ok: true, form: 'obsolete', note: `"${v}" is an obsolete draft form; RFC 9745 uses @<epoch seconds>` };
  const date = parseHttpDate(v);
  if (date)
    return {
      ok: true,
      form: 'obsolete',
      epochS: Math.floor(date.ms / 1000),
      note: `"${v}" is an HTTP-date (an obsolete draft form); RFC 9745 uses @<epoch seconds>`,
    };
  return { ok: false, reason: `Deprecation "${v}" is neither @<epoch seconds> (RFC 9745 §2.1) nor an obsolete draft form` };
}

export interface SunsetJudgement {
  problems: string[];
  warnings: string[];
}

/** Judges a Sunset value against the response Date and the Deprecation date (epoch seconds) when known. */
export function judgeSunset(value: string, dateHeader: string | undefined, deprecationS: number | undefined): SunsetJudgement {
  const out: SunsetJudgement = { problems: [], warnings: [] };
  const sunset = parseHttpDate(value);
  if (!sunset) {
    out.problems.push(`Sunset "${value}" is not an HTTP-date (RFC 8594 §3)`);
    return out;
  }
  const sunsetS = Math.floor(sunset.ms / 1000);
  if (deprecationS !== undefined && sunsetS < deprecationS) {
    out.problems.push(`Sunset ${value} is earlier than Deprecation (@${deprecationS}) (RFC 9745 §3)`);
  }
  const date = parseHttpDate(dateHeader);
  if (date && sunset.ms <= date.ms) out.warnings.push(`Sunset ${value} is not after the response Date ${dateHeader}`);
  if (sunset.format !== 'imf-fixdate') out.warnings.push(`Sunset uses the ${sunset.format} format; IMF-fixdate is preferred`);
  return out;
}
