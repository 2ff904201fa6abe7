/**
 * The definition of one setting of the conformance run, and the one rule that reads it.
 *
 * A setting is an environment variable (and, for the CLI, a `--kebab-case` flag) with a kind,
 * bounds, a default and a help line. Each kind has exactly one parser here, so a variable read by
 * certify, the suites, the load checks and the Playwright config is validated the same way
 * everywhere. A problem names the variable and the rule; it never echoes the value of a secret or
 * of a URL (a URL may carry a key in its userinfo or query).
 */
import { KEY_RULE, normaliseKey } from '../core/secrets.ts';

/** What a setting holds; decides its parser. */
export type SettingKind = 'string' | 'url' | 'secret' | 'enum' | 'integer' | 'int64' | 'number' | 'boolean' | 'path';

/** The type of a setting's value once read. `int64` stays a decimal string (JSON numbers lose precision above 2^53). */
export type ValueOf<K extends SettingKind> = K extends 'integer' | 'number' ? number : K extends 'boolean' ? boolean : string;

/** A setting as written in a group file. */
export interface SettingInput<N extends string, K extends SettingKind, D extends ValueOf<K> | undefined> {
  /** Environment variable, e.g. `MAX_RETRY_AFTER_S`. */
  name: N;
  kind: K;
  /** One line for `--help` and the README tables. */
  help: string;
  /** Value when unset (undefined: the setting is optional and has none). */
  default?: D;
  /** `enum`: the accepted values (matched case-insensitively, read in lower case). */
  values?: readonly string[];
  /** `integer`/`number`: inclusive bounds. */
  min?: number;
  max?: number;
  /** `number`: the lower bound itself is excluded (e.g. a duration that must be above 0). */
  minExclusive?: boolean;
  /** A unit shown in messages and help, e.g. `seconds`. */
  unit?: string;
  /** CLI flag; derived from the name (`--max-retry-after-s`) unless given; `false`: environment only. */
  flag?: string | false;
}

/** A setting, as registered (group stamped, flag derived). */
export interface Setting<
  N extends string = string,
  K extends SettingKind = SettingKind,
  D extends ValueOf<K> | undefined = ValueOf<K> | undefined,
> extends SettingInput<N, K, D> {
  /** The group file that defines it, e.g. `run`, `load`. */
  group: string;
  /** The CLI flag, or undefined when the setting is read from the environment only. */
  flag: string | undefined;
  /** A key: never printed, never written, never accepted as a flag. */
  secret: boolean;
}

/** A group of settings: one file under `settings/`, one section of `--help` and of the README tables. */
export interface SettingGroup<S extends readonly Setting[] = readonly Setting[]> {
  name: string;
  /** Section title in `--help` and the README. */
  title: string;
  settings: S;
}

/** `MAX_RETRY_AFTER_S` → `--max-retry-after-s`. */
export function flagOf(name: string): string {
  return `--${name.toLowerCase().replace(/_/g, '-')}`;
}

/** Defines one setting (type-checks its default against its kind). */
export function setting<const N extends string, const K extends SettingKind, const D extends ValueOf<K> | undefined = undefined>(
  input: SettingInput<N, K, D>,
): Setting<N, K, D> {
  const secret = input.kind === 'secret';
  // Keys are never flags: a command line is visible to every user of the machine (ps).
  const flag = secret || input.flag === false ? undefined : (input.flag ?? flagOf(input.name));
  return { ...input, group: '', flag, secret };
}

/** Defines a group: stamps the group name on each of its settings. */
export function defineGroup<const S extends readonly Setting[]>(name: string, title: string, settings: S): SettingGroup<S> {
  for (const s of settings) (s as { group: string }).group = name;
  return { name, title, settings };
}

/** A problem with one setting's value: the variable and a message that never contains a secret. */
export interface SettingProblem {
  name: string;
  message: string;
}

export type ParsedValue = { ok: true; value: string | number | boolean } | { ok: false; message: string };

const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;

/** The rule of a numeric setting in words, e.g. `an integer in [1, 1000]`. */
export function describeRule(s: Setting): string {
  const unit = s.unit ? ` (${s.unit})` : '';
  switch (s.kind) {
    case 'integer':
    case 'number': {
      const what = s.kind === 'integer' ? 'an integer' : 'a number';
      if (s.min !== undefined && s.max !== undefined) return `${what} in ${s.minExclusive ? '(' : '['}${s.min}, ${s.max}]${unit}`;
      if (s.min === 1 && s.kind === 'integer') return `a positive integer${unit}`;
      if (s.min === 0 && s.minExclusive) return `a positive number${unit}`;
      if (s.min === 0) return `a non-negative ${s.kind === 'integer' ? 'integer' : 'number'}${unit}`;
      if (s.min !== undefined) return `${what} ${s.minExclusive ? 'above' : 'at least'} ${s.min}${unit}`;
      return `${what}${unit}`;
    }
    case 'int64':
      return 'an int64 integer';
    case 'enum':
      return `one of ${(s.values ?? []).join(', ')}`;
    case 'boolean':
      return 'one of true, false, 1, 0, yes, no';
    case 'url':
      return 'an absolute http(s) URL without credentials, query or fragment';
    case 'secret':
      return KEY_RULE;
    default:
      return 'a non-empty string';
  }
}

/** How a rejected value is quoted in a message: never for secrets and URLs. */
function shown(s: Setting, raw: string): string {
  return s.kind === 'secret' || s.kind === 'url' ? s.name : `${s.name}="${raw}"`;
}

/**
 * Reads one setting's raw value (already known to be non-empty) by the rule of its kind. The one
 * parser of every setting: nothing else in the harness validates a variable.
 */
export function parseValue(s: Setting, rawUntrimmed: string): ParsedValue {
  const raw = rawUntrimmed.trim();
  const bad = (extra = ''): ParsedValue => ({ ok: false, message: `${shown(s, raw)} must be ${describeRule(s)}${extra}` });
  switch (s.kind) {
    case 'integer':
    case 'number': {
      const n = Number(raw);
      if (raw === '' || !Number.isFinite(n)) return bad();
      if (s.kind === 'integer' && !Number.isInteger(n)) return bad();
      if (s.min !== undefined && (s.minExclusive ? n <= s.min : n < s.min)) return bad();
      if (s.max !== undefined && n > s.max) return bad();
      return { ok: true, value: n };
    }
    case 'int64': {
      if (!/^-?\d+$/.test(raw) || BigInt(raw) > INT64_MAX || BigInt(raw) < INT64_MIN) return bad();
      return { ok: true, value: raw };
    }
    case 'enum': {
      const v = raw.toLowerCase();
      if (!(s.values ?? []).includes(v)) return bad();
      return { ok: true, value: v };
    }
    case 'boolean': {
      const v = raw.toLowerCase();
      if (['1', 'true', 'yes'].includes(v)) return { ok: true, value: true };
      if (['0', 'false', 'no'].includes(v)) return { ok: true, value: false };
      return bad();
    }
    case 'secret': {
      const key = normaliseKey(rawUntrimmed);
      return key.ok ? { ok: true, value: key.value } : bad();
    }
    case 'url': {
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        return { ok: false, message: `${s.name} must be an absolute http(s) URL (the value is not shown: it may carry a key)` };
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:')
        return { ok: false, message: `${s.name} must use http or https, got "${url.protocol}"` };
      if (url.username || url.password)
        return { ok: false, message: `${s.name} must not carry credentials (the value is not shown); pass the key in API_KEY` };
      if (url.search || url.hash)
        return { ok: false, message: `${s.name} must not have a query or fragment (the value is not shown: it may carry a key)` };
      return { ok: true, value: raw.replace(/\/+$/, '') };
    }
    default:
      return { ok: true, value: raw };
  }
}
