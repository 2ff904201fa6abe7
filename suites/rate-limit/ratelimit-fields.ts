/**
 * The IETF rate-limit header fields (draft-ietf-httpapi-ratelimit-headers-11): `RateLimit-Policy`
 * (named policies: `q` quota, `w` window seconds) and `RateLimit` (`r` remaining, `t` seconds
 * until the window ends), both Structured Field lists (RFC 9651 §3.1). The spec requires only
 * `X-RateLimit-*`; where a server also sends these, they should parse and agree with them
 * (ledger RL-17, should level: a warning, never a failure). Pure.
 */

export type BareItem = string | number | boolean | { token: string } | { bytes: string };
export interface SfMember {
  value: BareItem | BareItem[];
  params: Record<string, BareItem>;
}

/** Parses an RFC 9651 List (items and inner lists with parameters); throws on a syntax error. */
export function parseSfList(input: string): SfMember[] {
  let i = 0;
  const s = input.trim();
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at character ${i} of ${JSON.stringify(s)}`);
  };
  const ows = () => {
    while (s[i] === ' ' || s[i] === '\t') i++;
  };
  const key = (): string => {
    const m = /^[a-z*][a-z0-9_.*-]*/.exec(s.slice(i));
    if (!m) fail('a key was expected');
    i += m![0].length;
    return m![0];
  };
  const bare = (): BareItem => {
    const c = s[i];
    if (c === '"') {
      let out = '';
      for (i++; i < s.length; i++) {
        if (s[i] === '\\') {
          const n = s[++i];
          if (n !== '"' && n !== '\\') fail('a bad escape in a string');
          out += n;
        } else if (s[i] === '"') {
          i++;
          return out;
        } else if (s.charCodeAt(i) < 0x20 || s.charCodeAt(i) > 0x7e) fail('a non-ASCII character in a string');
        else out += s[i];
      }
      return fail('an unterminated string');
    }
    if (c === '?') {
      const b = s[i + 1];
      if (b !== '0' && b !== '1') fail('a bad boolean');
      i += 2;
      return b === '1';
    }
    if (c === ':') {
      const end = s.indexOf(':', i + 1);
      if (end < 0) fail('an unterminated byte sequence');
      const bytes = s.slice(i + 1, end);
      i = end + 1;
      return { bytes };
    }
    const num = /^-?\d{1,15}(\.\d{1,3})?/.exec(s.slice(i));
    if (num) {
      i += num[0].length;
      if (/^[\d.]/.test(s[i] ?? '')) fail('a number too long');
      return Number(num[0]);
    }
    const token = /^[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*/.exec(s.slice(i));
    if (token) {
      i += token[0].length;
      return { token: token[0] };
    }
    return fail('an item was expected');
  };
  const params = (): Record<string, BareItem> => {
    const out: Record<string, BareItem> = {};
    while (s[i] === ';') {
      i++;
      ows();
      const k = key();
      if (s[i] === '=') {
        i++;
        out[k] = bare();
      } else out[k] = true;
    }
    return out;
  };
  const members: SfMember[] = [];
  if (s === '') return members;
  for (;;) {
    let value: BareItem | BareItem[];
    if (s[i] === '(') {
      i++;
      const inner: BareItem[] = [];
      for (;;) {
        while (s[i] === ' ') i++;
        if (s[i] === ')') {
          i++;
          break;
        }
        if (i >= s.length) fail('an unterminated inner list');
        inner.push(bare());
        params();
        if (s[i] !== ' ' && s[i] !== ')') fail('a space or ) was expected');
      }
      value = inner;
    } else value = bare();
    members.push({ value, params: params() });
    ows();
    if (i >= s.length) return members;
    if (s[i] !== ',') fail('a comma was expected');
    i++;
    ows();
    if (i >= s.length) fail('a trailing comma');
  }
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
  const name = (m: SfMember) => (typeof m.value === 'string' ? m.value : typeof m.value === 'object' && 'token' in (m.value as object) ? (m.value as { token: string }).token : undefined);
  for (const m of policies ?? []) {
    if (int(m.params.q) === undefined) warnings.push(`RateLimit-Policy member ${JSON.stringify(name(m))} has no non-negative integer q`);
    if (m.params.w !== undefined && int(m.params.w) === undefined) warnings.push(`RateLimit-Policy member ${JSON.stringify(name(m))} has a w that is not a non-negative integer`);
  }
  for (const m of limits ?? []) {
    if (int(m.params.r) === undefined) warnings.push(`RateLimit member ${JSON.stringify(name(m))} has no non-negative integer r`);
    if (m.params.t !== undefined && int(m.params.t) === undefined) warnings.push(`RateLimit member ${JSON.stringify(name(m))} has a t that is not a non-negative integer`);
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
