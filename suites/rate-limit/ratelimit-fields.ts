/**
 * The IETF rate-limit header fields (draft-ietf-httpapi-ratelimit-headers-11): `RateLimit-Policy`
 * (named policies: `q` quota, `w` window seconds) and `RateLimit` (`r` remaining, `t` seconds
 * until the window ends), both Structured Field lists (RFC 9651 §3.1). The spec requires only
 * `X-RateLimit-*`; where a server also sends these, they should parse and agree with them
 * (ledger RL-17, should level: a warning, never a failure). Pure.
 */

import { parseList, Token, type BareItem } from 'structured-headers';

/** One member of a Structured Field list: its value (an item, or an inner list of items) and its parameters. */
export interface SfMember {
  value: BareItem | BareItem[];
  params: Record<string, BareItem>;
}

/**
 * Parses an RFC 9651 List with `structured-headers` (RFC 9651 and 8941), flattening each member's
 * parameters into an object; throws on a syntax error.
 */
export function parseSfList(input: string): SfMember[] {
  return parseList(input).map(([value, params]) => ({
    value: Array.isArray(value) ? value.map(([item]) => item) : value,
    params: Object.fromEntries(params),
  }));
}

export interface RateLimitView {
  limit?: number;
  remaining?: number;
  reset?: number;
  /** The response's Date, epoch seconds. */
  date?: number;
}

/** How far `Date + t` may lie from X-RateLimit-Reset (rounding on both sides). */
export const RESET_TOLERANCE_S = 2;

/**
 * Warnings about the RateLimit fields of one response: none when the server sends neither field.
 * `fields` are the raw values (several field lines joined with `, `, RFC 9110 §5.3).
 */
export function rateLimitFieldWarnings(fields: { rateLimit?: string; policy?: string }, x: RateLimitView): string[] {
  if (fields.rateLimit === undefined && fields.policy === undefined) return [];
  const warnings: string[] = [];
  const parse = (name: string, raw: string | undefined): SfMember[] | undefined => {
    if (raw === undefined) return undefined;
    try {
      return parseSfList(raw);
    } catch (e) {
      warnings.push(`${name} is not a Structured Field list (RFC 9651): ${(e as Error).message}`);
      return undefined;
    }
  };
  const limits = parse('RateLimit', fields.rateLimit);
  const policies = parse('RateLimit-Policy', fields.policy);
  const int = (v: BareItem | undefined) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined);
  const name = (m: SfMember) => (typeof m.value === 'string' ? m.value : m.value instanceof Token ? m.value.toString() : undefined);
  for (const m of policies ?? []) {
    if (int(m.params.q) === undefined) warnings.push(`RateLimit-Policy member ${JSON.stringify(name(m))} has no non-negative integer q`);
    if (m.params.w !== undefined && int(m.params.w) === undefined)
      warnings.push(`RateLimit-Policy member ${JSON.stringify(name(m))} has a w that is not a non-negative integer`);
  }
  for (const m of limits ?? []) {
    if (int(m.params.r) === undefined) warnings.push(`RateLimit member ${JSON.stringify(name(m))} has no non-negative integer r`);
    if (m.params.t !== undefined && int(m.params.t) === undefined)
      warnings.push(`RateLimit member ${JSON.stringify(name(m))} has a t that is not a non-negative integer`);
  }
  if (warnings.length || !limits?.length) {
    if (!limits?.length && policies?.length) warnings.push('RateLimit-Policy is sent without RateLimit');
    return warnings;
  }
  // Agreement: some RateLimit member, with its policy of the same name, describes X-RateLimit-*.
  const agrees = limits.some((m) => {
    const policy = (policies ?? []).find((p) => name(p) === name(m));
    const q = int(policy?.params.q);
    const r = int(m.params.r);
    const t = int(m.params.t);
    const okQ = x.limit === undefined || q === undefined || q === x.limit;
    const okR = x.remaining === undefined || r === x.remaining;
    const okT = x.reset === undefined || x.date === undefined || t === undefined || Math.abs(x.date + t - x.reset) <= RESET_TOLERANCE_S;
    return okQ && okR && okT;
  });
  if (!agrees) {
    warnings.push(
      `RateLimit ${JSON.stringify(fields.rateLimit)} / RateLimit-Policy ${JSON.stringify(fields.policy ?? '(none)')} disagree with ` +
        `X-RateLimit-Limit ${x.limit ?? '?'}, -Remaining ${x.remaining ?? '?'}, -Reset ${x.reset ?? '?'} (Date ${x.date ?? '?'}): ` +
        `expected q = Limit, r = Remaining and Date + t within ${RESET_TOLERANCE_S} s of Reset for one policy`,
    );
  }
  return warnings;
}
