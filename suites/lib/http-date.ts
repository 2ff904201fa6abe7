/**
 * HTTP-date parsing (RFC 9110 §5.6.7): a recipient accepts all three formats.
 * Pure functions.
 */

export type HttpDateFormat = 'imf-fixdate' | 'rfc850' | 'asctime';

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY = '(Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const DAY_LONG = '(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MON = '(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
const IMF = new RegExp(`^${DAY}, (\\d{2}) ${MON} (\\d{4}) ${TIME} GMT$`);
const RFC850 = new RegExp(`^${DAY_LONG}, (\\d{2})-${MON}-(\\d{2}) ${TIME} GMT$`);
const ASCTIME = new RegExp(`^${DAY} ${MON} ([ \\d]\\d) ${TIME} (\\d{4})$`);

function build(year: number, mon: string, day: number, h: number, m: number, s: number): number | undefined {
  const month = MONTHS.indexOf(mon.toLowerCase());
  if (month < 0 || h > 23 || m > 59 || s > 60) return undefined;
  const ms = Date.UTC(year, month, day, h, m, Math.min(s, 59));
  const d = new Date(ms);
  if (d.getUTCDate() !== day || d.getUTCMonth() !== month) return undefined;
  return ms;
}

/**
 * Parses an HTTP-date in any of its three formats; returns epoch milliseconds and the format,
 * or undefined. RFC 850 two-digit years are read as the nearest year not more than 50 years
 * in the future (RFC 9110 §5.6.7), relative to `nowMs`.
 */
export function parseHttpDate(value: string | undefined, nowMs: number = Date.now()): { ms: number; format: HttpDateFormat } | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  let m = IMF.exec(v);
  if (m) {
    const ms = build(Number(m[4]), m[3], Number(m[2]), Number(m[5]), Number(m[6]), Number(m[7]));
    return ms === undefined ? undefined : { ms, format: 'imf-fixdate' };
  }
  m = RFC850.exec(v);
  if (m) {
    const nowYear = new Date(nowMs).getUTCFullYear();
    let year = Math.floor(nowYear / 100) * 100 + Number(m[4]);
    if (year > nowYear + 50) year -= 100;
    const ms = build(year, m[3], Number(m[2]), Number(m[5]), Number(m[6]), Number(m[7]));
    return ms === undefined ? undefined : { ms, format: 'rfc850' };
  }
  m = ASCTIME.exec(v);
  if (m) {
    const ms = build(Number(m[7]), m[2], Number(m[3].trim()), Number(m[4]), Number(m[5]), Number(m[6]));
    return ms === undefined ? undefined : { ms, format: 'asctime' };
  }
  return undefined;
}

/** Formats epoch milliseconds as an IMF-fixdate. */
export function formatImfFixdate(ms: number): string {
  return new Date(ms).toUTCString();
}
