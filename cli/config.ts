/**
 * The config file (`conformance.yaml`, schema `schemas/conformance-config.schema.json`): targets,
 * plans, profile, gate, thresholds and budgets, turned into the variables of the run. Keys appear
 * only as `${VAR}` references; a file holding a literal key is refused without printing it.
 * Precedence (cli/main.ts): flag > environment variable > config file > default.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject } from 'ajv';
import YAML from 'yaml';

export const SCHEMA_FILE = fileURLToPath(new URL('../schemas/conformance-config.schema.json', import.meta.url));
export const DEFAULT_CONFIG = 'conformance.yaml';

/** Fields of a target that hold keys, and the variable each feeds. */
export const KEY_FIELDS = { apiKey: 'API_KEY', rateLimitKey: 'RATE_LIMIT_KEY', loadKey: 'LOAD_KEY' } as const;
/** Fields of a target, and the variable each feeds. */
export const TARGET_FIELDS: Record<string, string> = {
  baseUrl: 'BASE_URL',
  apiUrl: 'API_URL',
  apiPlan: 'API_PLAN',
  rateLimitPlan: 'RATE_LIMIT_PLAN',
  missingPetId: 'MISSING_PET_ID',
  insecureTls: 'INSECURE_TLS',
  ...KEY_FIELDS,
};
/** Top-level fields, and the variable each feeds (`thresholds` and `budgets` keys map by `variableOf`). */
export const TOP_FIELDS: Record<string, string> = {
  profile: 'CONFORMANCE_PROFILE',
  loadSaturate: 'LOAD_SATURATE',
  strict: 'CONFORMANCE_STRICT',
  baseline: 'CONFORMANCE_BASELINE',
  reportsDir: 'REPORTS_DIR',
  signingKeyFile: 'CONFORMANCE_SIGNING_KEY_FILE',
  validDays: 'CONFORMANCE_VALID_DAYS',
};
/** Settings the file does not hold: the file itself, the target chosen in it, a replay token, the certificate a run is compared with (one per release), how verbose the console is (the reader's choice). */
export const NOT_IN_FILE = [
  'CONFORMANCE_CONFIG',
  'CONFORMANCE_TARGET',
  'CONFORMANCE_REPLAY',
  'CONFORMANCE_NO_REGRESSION_FROM',
  'CONFORMANCE_VERBOSE',
] as const;
/** Fields holding a file path, resolved against the config file's folder. */
const PATH_VARIABLES = new Set(['CONFORMANCE_BASELINE', 'REPORTS_DIR', 'CONFORMANCE_SIGNING_KEY_FILE']);

const REFERENCE = /^\$\{([A-Z_][A-Z0-9_]*)\}$/;
const ANY_REFERENCE = /\$\{([A-Z_][A-Z0-9_]*)\}/g;

/** `loadP99Ms` → `LOAD_P99_MS`, `maxRetryAfterS` → `MAX_RETRY_AFTER_S`. */
export function variableOf(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
}

export type ConfigResult = { ok: true; env: Record<string, string>; target: string; notes: string[] } | { ok: false; errors: string[] };

type Env = Record<string, string | undefined>;

function ajvMessage(e: ErrorObject): string {
  const where = e.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : '(top level)';
  const p = e.params as Record<string, unknown>;
  if (e.keyword === 'additionalProperties') return `${where}: unknown key "${String(p.additionalProperty)}"`;
  if (e.keyword === 'enum') return `${where}: must be one of ${(p.allowedValues as unknown[]).join(', ')}`;
  if (e.keyword === 'const') return `${where}: must be ${JSON.stringify(p.allowedValue)}`;
  if (e.keyword === 'required') return `${where}: missing "${String(p.missingProperty)}"`;
  if (e.keyword === 'propertyNames') return `${where}: target names are lower-case letters, digits, - and _`;
  // Never the value itself (it could be a key or a URL with credentials).
  return `${where}: ${e.message ?? 'invalid'}`;
}

/**
 * Literal keys: a key field that is not exactly `${VAR}`, or any string equal to a key given in the
 * environment. Returns the paths (never the values).
 */
export function literalKeys(doc: unknown, env: Env): string[] {
  const out: string[] = [];
  const secrets = knownKeys(doc, env);
  const walk = (v: unknown, at: string, keyField: boolean) => {
    if (typeof v === 'string') {
      if (keyField && !REFERENCE.test(v.trim())) out.push(at);
      else if (secrets.some((s) => v.includes(s))) out.push(at);
      return;
    }
    if (keyField && v !== undefined && v !== null) out.push(at);
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${at}[${i}]`, false));
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        const isKey = (at.startsWith('targets.') && k in KEY_FIELDS) || (at === '' && k === 'signingKeyFile');
        // A key written as a mapping key: its path would print it, so only the parent is named.
        if (secrets.some((s) => k.includes(s))) {
          out.push(`${at || '(top level)'} (a mapping key)`);
          continue;
        }
        walk(x, at ? `${at}.${k}` : k, isKey);
      }
    }
  };
  walk(doc, '', false);
  return [...new Set(out)];
}

/**
 * The keys the file must never hold, in normal form (at least 8 characters, shorter ones would
 * match ordinary words): `API_KEY`, `RATE_LIMIT_KEY`, `LOAD_KEY` of the environment, and the value
 * of every variable a key field of the file refers to (`apiKey: ${STAGING_API_KEY}`).
 */
export function knownKeys(doc: unknown, env: Env): string[] {
  const names = new Set<string>(Object.values(KEY_FIELDS));
  const targets = (doc as { targets?: unknown } | null)?.targets;
  if (targets && typeof targets === 'object') {
    for (const t of Object.values(targets as Record<string, unknown>)) {
      if (!t || typeof t !== 'object') continue;
      for (const [k, v] of Object.entries(t as Record<string, unknown>)) {
        const ref = k in KEY_FIELDS && typeof v === 'string' ? REFERENCE.exec(v.trim()) : null;
        if (ref) names.add(ref[1]!);
      }
    }
  }
  // The normal form of a key (core/secrets.ts): surrounding whitespace trimmed.
  const values = [...names].map((n) => env[n]?.trim() ?? '').filter((v) => v.length >= 8);
  return [...new Set(values)];
}

/** Lines of the raw text that hold a known key (comments included, which the parsed document drops). */
function linesHoldingKeys(text: string, keys: readonly string[]): number[] {
  const out: number[] = [];
  text.split('\n').forEach((line, i) => {
    if (keys.some((k) => line.includes(k))) out.push(i + 1);
  });
  return out;
}

let validator: ReturnType<Ajv['compile']> | undefined;
function validate(doc: unknown): ErrorObject[] {
  if (!validator) {
    const ajv = new Ajv({ allErrors: true, strict: true });
    validator = ajv.compile(JSON.parse(fs.readFileSync(SCHEMA_FILE, 'utf8')) as object);
  }
  return validator(doc) ? [] : (validator.errors ?? []);
}

/** Reads, checks and turns a config file into variables for one target. */
export function loadConfig(file: string, env: Env, targetName?: string): ConfigResult {
  const name = path.basename(file);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    return { ok: false, errors: [`${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`] };
  }
  let doc: unknown;
  try {
    doc = YAML.parse(text, { prettyErrors: true });
  } catch (error) {
    // YAML errors quote the offending line; a literal key may sit on it, so only the position is kept.
    const pos = (error as { linePos?: { line: number; col: number }[] }).linePos?.[0];
    return { ok: false, errors: [`${name}: not valid YAML${pos ? ` (line ${pos.line}, column ${pos.col})` : ''}`] };
  }
  const literals = literalKeys(doc, env);
  // Comments are not in the parsed document: a key there is a literal key all the same.
  if (!literals.length) literals.push(...linesHoldingKeys(text, knownKeys(doc, env)).map((n) => `line ${n}`));
  if (literals.length) {
    return {
      ok: false,
      errors: literals.map(
        (at) =>
          `${name}: ${at} holds a literal key. Keys may appear only as \${VAR} references (e.g. apiKey: \${STAGING_API_KEY}); the value is not printed. Remove it from the file and from its history.`,
      ),
    };
  }
  const problems = validate(doc).map((e) => `${name}: ${ajvMessage(e)}`);
  if (problems.length) return { ok: false, errors: [...new Set(problems)] };

  const config = doc as {
    default?: string;
    targets: Record<string, Record<string, string>>;
    thresholds?: Record<string, number>;
    budgets?: Record<string, number>;
  } & Record<string, unknown>;
  const names = Object.keys(config.targets);
  const wanted = targetName ?? config.default ?? (names.length === 1 ? names[0] : undefined);
  if (!wanted)
    return {
      ok: false,
      errors: [`${name}: ${names.length} targets (${names.join(', ')}); choose one with --target or a \`default:\` key`],
    };
  const target = config.targets[wanted];
  if (!target) return { ok: false, errors: [`${name}: no target "${wanted}" (targets: ${names.join(', ')})`] };

  const out: Record<string, string> = {};
  const errors: string[] = [];
  const notes: string[] = [];
  const dir = path.dirname(path.resolve(file));
  const put = (variable: string, raw: unknown, at: string) => {
    let value = String(raw);
    const isKey = (Object.values(KEY_FIELDS) as string[]).includes(variable) || variable === 'CONFORMANCE_SIGNING_KEY_FILE';
    let empty = false;
    value = value.replace(ANY_REFERENCE, (_m, ref: string) => {
      const v = env[ref];
      if (v === undefined || v.trim() === '') empty = true;
      return v ?? '';
    });
    if (empty) {
      // An unset CI secret arrives as an empty variable: say so, never run silently without it.
      if (isKey)
        notes.push(
          `${at} refers to an unset or empty variable: ${variable} is not given, and the checks that need it are not certified (--strict fails the gate on that)`,
        );
      else errors.push(`${name}: ${at} refers to an unset or empty variable`);
      return;
    }
    out[variable] = PATH_VARIABLES.has(variable) ? path.resolve(dir, value) : value;
  };
  for (const [k, v] of Object.entries(target)) put(TARGET_FIELDS[k]!, v, `targets.${wanted}.${k}`);
  for (const [k, variable] of Object.entries(TOP_FIELDS)) if (config[k] !== undefined) put(variable, config[k], k);
  for (const group of ['thresholds', 'budgets'] as const) {
    for (const [k, v] of Object.entries(config[group] ?? {})) put(variableOf(k), v, `${group}.${k}`);
  }
  if (errors.length) return { ok: false, errors };
  return { ok: true, env: out, target: wanted, notes };
}

/**
 * Keys never cross targets: when the target's address is given outside the file (a flag or a
 * variable) and is not the chosen config target's `baseUrl`, that target's other values (keys,
 * quickstart address, plans, …) would go to another server. Returns the refusal, naming the fields
 * the file would have given and where the address came from, never a key nor a URL's credentials;
 * undefined when nothing crosses.
 */
export function crossTargetConflict(
  configEnv: Record<string, string>,
  outside: Record<string, string | undefined>,
  given: { origin: string; targetName: string },
): string | undefined {
  const set = (v: string | undefined) => v !== undefined && v.trim() !== '';
  const address = outside.BASE_URL?.trim();
  if (!address) return undefined;
  const same = (a: string | undefined, b: string) => a !== undefined && a.trim().replace(/\/+$/, '') === b.replace(/\/+$/, '');
  if (same(configEnv.BASE_URL, address)) return undefined;
  const fields = Object.entries(TARGET_FIELDS)
    .filter(([, variable]) => variable !== 'BASE_URL' && configEnv[variable] !== undefined && !set(outside[variable]))
    .map(([field]) => field);
  if (!fields.length) return undefined;
  const theirs = configEnv.BASE_URL ? `its baseUrl ${printableAddress(configEnv.BASE_URL)}` : 'it has no baseUrl';
  return (
    `BASE_URL from ${given.origin} (${printableAddress(address)}) is not the address of config target "${given.targetName}" (${theirs}); ` +
    `its ${fields.join(', ')} would go to another target, so nothing is sent. Certify "${given.targetName}" without ${given.origin}, ` +
    `choose the matching target with --target, or give the other target's values by flag or variable`
  );
}

/** An address as a message may quote it: scheme, host, port and path, never userinfo or query. */
function printableAddress(raw: string): string {
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return 'an unparsable address';
  }
}

/** Where the config comes from: the given file, else `conformance.yaml` in `cwd` if present. */
export function configFile(given: string | undefined, cwd: string): string | undefined {
  if (given) return path.resolve(cwd, given);
  const auto = path.join(cwd, DEFAULT_CONFIG);
  return fs.existsSync(auto) ? auto : undefined;
}
