/**
 * `X-RateLimit-*` parsing and judging (spec, Limits, rules 1 and 2). Pure functions.
 * Reset is a Unix timestamp in seconds; below about 10^9 it is a delta, above about 10^12
 * milliseconds: both are deviations. Reset is NOT required to be after `Date` or within 60 s
 * (a server may report the day window, or round).
 */
import { getHeader, type HeaderSource } from './headers.ts';
import { parseHttpDate } from './http-date.ts';
import { PLAN_LIMITS, type Plan } from '../../core/plans.ts';

export const RATE_LIMIT_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'] as const;

export interface RateLimitInfo {
  /** Raw values as sent (undefined when absent). */
  raw: { limit?: string; remaining?: string; reset?: string };
  limit?: number;
  remaining?: number;
  reset?: number;
  /** `Date` of the response, epoch ms, when present and valid. */
  dateMs?: number;
  /** Names of absent headers. */
  missing: string[];
  /** Deviations found: non-integers, Remaining outside [0, Limit], Reset not epoch seconds or out of range. */
  problems: string[];
}

/** Largest distance of Reset after `Date` still judged sane: the day window plus a margin. */
export const MAX_RESET_AHEAD_S = 86_400 + 3_600;
/** Reset may trail `Date` by this much (rounding, a window ending while the response is built). */
export const RESET_BEHIND_TOLERANCE_S = 2;

const INTEGER = /^\d+$/;

/** Parses the three headers and `Date` and lists every deviation from the spec's rules. */
export function parseRateLimitHeaders(headers: HeaderSource, dateHeader = getHeader(headers, 'date')): RateLimitInfo {
  const raw = {
    limit: getHeader(headers, 'x-ratelimit-limit')?.trim(),
    remaining: getHeader(headers, 'x-ratelimit-remaining')?.trim(),
    reset: getHeader(headers, 'x-ratelimit-reset')?.trim(),
  };
  const info: RateLimitInfo = { raw, missing: [], problems: [] };
  const fields = [
    ['limit', 'X-RateLimit-Limit'],
    ['remaining', 'X-RateLimit-Remaining'],
    ['reset', 'X-RateLimit-Reset'],
  ] as const;
  for (const [key, name] of fields) {
    const value = raw[key];
    if (value === undefined) {
      info.missing.push(name);
      continue;
    }
    if (!INTEGER.test(value) || !Number.isSafeInteger(Number(value))) {
      info.problems.push(`${name} "${value}" is not a non-negative integer`);
      continue;
    }
    info[key] = Number(value);
  }
  if (info.limit !== undefined && info.remaining !== undefined && info.remaining > info.limit) {
    info.problems.push(`X-RateLimit-Remaining ${info.remaining} exceeds X-RateLimit-Limit ${info.limit}`);
  }
  const date = parseHttpDate(dateHeader);
  if (date) info.dateMs = date.ms;
  if (info.reset !== undefined) {
    const problem = judgeReset(info.reset, info.dateMs);
    if (problem) info.problems.push(problem);
  }
  return info;
}

/**
 * Judges X-RateLimit-Reset against the response `Date` (not the local clock): epoch seconds,
 * not a delta (< 10^9), not milliseconds (> 10^12), and within [Date - 2 s, Date + 25 h].
 * Returns the problem, or undefined. Without `Date` only the magnitude is judged.
 */
export function judgeReset(reset: number, dateMs: number | undefined): string | undefined {
  if (reset < 1e9) return `X-RateLimit-Reset ${reset} looks like a delta in seconds, not a Unix timestamp`;
  if (reset > 1e12) return `X-RateLimit-Reset ${reset} looks like milliseconds, not a Unix timestamp in seconds`;
  if (dateMs === undefined) return undefined;
  const dateS = Math.floor(dateMs / 1000);
  if (reset < dateS - RESET_BEHIND_TOLERANCE_S) {
    return `X-RateLimit-Reset ${reset} is ${dateS - reset} s before the response Date (${dateS})`;
  }
  if (reset > dateS + MAX_RESET_AHEAD_S) {
    return `X-RateLimit-Reset ${reset} is ${reset - dateS} s after the response Date (${dateS}), beyond the day window`;
  }
  return undefined;
}

/**
 * Whether `limit` is a figure of `plan` (minute or day: which window the headers describe is
 * not stated). Enterprise is custom: any positive figure.
 */
export function limitMatchesPlan(limit: number, plan: Plan): boolean {
  if (plan === 'enterprise') return limit > 0;
  const p = PLAN_LIMITS[plan];
  return limit === p.minute || limit === p.day;
}

/** Seconds from the response `Date` until Reset (may be negative); undefined if either is missing. */
export function secondsUntilReset(info: Pick<RateLimitInfo, 'reset' | 'dateMs'>): number | undefined {
  if (info.reset === undefined || info.dateMs === undefined) return undefined;
  return info.reset - Math.floor(info.dateMs / 1000);
}
