/**
 * The spec-derived schemas and their validators (docs/architecture.md, "Schemas").
 * `openapi.yaml` is the single source of truth; `json/*.schema.json` are generated from it.
 * Validators are compiled once, on first use.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import Ajv2020Module, { type ErrorObject, type SchemaObject } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

export type SchemaName = 'InventoryItem' | 'Inventory' | 'PetStatus' | 'InventoryUpdate' | 'Error' | 'MessageRequest' | 'MessageResponse';

export const schemaNames: readonly SchemaName[] = [
  'InventoryItem',
  'Inventory',
  'PetStatus',
  'InventoryUpdate',
  'Error',
  'MessageRequest',
  'MessageResponse',
];

const here = (file: string) => new URL(file, import.meta.url);

let parsedOpenapi: Record<string, unknown> | undefined;

/** The parsed `schemas/openapi.yaml`, read on first use (most processes validate and never read it). */
export function openapiDocument(): Record<string, unknown> {
  parsedOpenapi ??= parseYaml(readFileSync(here('./openapi.yaml'), 'utf8')) as Record<string, unknown>;
  return parsedOpenapi;
}

/** The generated JSON Schema 2020-12 documents (`schemas/json/<Name>.schema.json`). */
export const jsonSchemas: Record<SchemaName, object> = Object.fromEntries(
  schemaNames.map((name) => [name, JSON.parse(readFileSync(here(`./json/${name}.schema.json`), 'utf8'))]),
) as Record<SchemaName, object>;

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

/** True for a `number` or `bigint` integer within [-2^63, 2^63-1] (OpenAPI `format: int64`). */
export function isInt64(value: unknown): boolean {
  if (typeof value === 'bigint') return value >= INT64_MIN && value <= INT64_MAX;
  // 2^63 - 1 is not a double; every integral double below 2^63 is in range.
  return typeof value === 'number' && Number.isInteger(value) && value >= -(2 ** 63) && value < 2 ** 63;
}

const RFC3339_UTC = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|\+00:00)$/;

/**
 * True iff `value` is an RFC 3339 / ISO 8601 date-time in UTC: offset `Z`, `z` or `+00:00`
 * (spec, Message: "ISO 8601 UTC timestamp"). `-00:00` ("offset unknown", RFC 3339 §4.3) and
 * every non-zero offset are rejected, as are impossible dates and times.
 */
export function isUtcTimestamp(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const m = RFC3339_UTC.exec(value);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const daysInMonth = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  if (daysInMonth === undefined || day < 1 || day > daysInMonth) return false;
  if (hour > 23 || minute > 59) return false;
  // A leap second exists only at 23:59:60 UTC.
  return second < 60 || (second === 60 && hour === 23 && minute === 59);
}

// ajv and ajv-formats are CommonJS; under NodeNext their default export is the module object.
const Ajv2020 = ((Ajv2020Module as unknown as { default?: unknown }).default ?? Ajv2020Module) as typeof Ajv2020Module.default;
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as typeof addFormatsModule.default;

/**
 * Values come from `parseJson`, so an integer field may hold a `bigint`, which Ajv's
 * `type: integer` rejects. Each `type: integer` is therefore checked by the `integer` keyword
 * instead: any integral number or bigint, and with `format: int64` only within [-2^63, 2^63-1].
 * `date-time` additionally requires UTC (see `isUtcTimestamp`).
 */
function withIntegerKeyword(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withIntegerKeyword);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) out[key] = withIntegerKeyword(value);
  if (out.type === 'integer') {
    out.integer = out.format === 'int64' ? 'int64' : 'any';
    delete out.type;
    if (out.format === 'int64') delete out.format;
  }
  return out;
}

/** The validator factory, built on first use (building it compiles the JSON Schema meta-schemas). */
function createAjv() {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats(ajv);
  ajv.addFormat('date-time', { type: 'string', validate: isUtcTimestamp });
  ajv.addKeyword({
    keyword: 'integer',
    schemaType: 'string',
    metaSchema: { enum: ['any', 'int64'] },
    errors: true,
    validate: function integer(schema: string, data: unknown) {
      const self = integer as { errors?: Partial<ErrorObject>[] };
      const isInteger = typeof data === 'bigint' || (typeof data === 'number' && Number.isInteger(data));
      if (isInteger && (schema !== 'int64' || isInt64(data))) return true;
      self.errors = [
        isInteger
          ? { keyword: 'int64', message: 'must be an int64 (between -2^63 and 2^63-1)', params: {} }
          : { keyword: 'type', message: 'must be integer', params: { type: 'integer' } },
      ];
      return false;
    },
  });
  return ajv;
}

let ajvInstance: ReturnType<typeof createAjv> | undefined;

type Validator = ReturnType<ReturnType<typeof createAjv>['compile']>;
/** Each validator is compiled on its first use: a process that validates one schema compiles one. */
const validators = new Map<SchemaName, Validator>();
function validatorOf(name: SchemaName): Validator {
  let v = validators.get(name);
  if (!v) validators.set(name, (v = (ajvInstance ??= createAjv()).compile(withIntegerKeyword(jsonSchemas[name]) as SchemaObject)));
  return v;
}

function formatError(error: ErrorObject): string {
  const path = error.instancePath || '/';
  let message = error.message ?? error.keyword;
  if (error.keyword === 'enum') message += `: ${(error.params.allowedValues as unknown[]).join(', ')}`;
  if (error.keyword === 'format' && error.params.format === 'date-time') {
    message = 'must be an RFC 3339 date-time in UTC (offset Z or +00:00)';
  }
  return `${path}: ${message}`;
}

/**
 * Validates a value parsed with `parseJson` (int64 fields may be bigint) against the schema
 * `name`. Errors are readable lines: `/0/petId: must be integer`.
 */
export function validate(name: SchemaName, value: unknown): { valid: boolean; errors: string[] } {
  if (!schemaNames.includes(name)) throw new Error(`unknown schema ${String(name)}`);
  const validator = validatorOf(name);
  const valid = validator(value) as boolean;
  const errors = validator.errors ?? [];
  // The createdAt pattern repeats the UTC date-time check for other validators; report it once.
  const formatPaths = new Set(errors.filter((e) => e.keyword === 'format').map((e) => e.instancePath));
  return {
    valid,
    errors: errors.filter((e) => !(e.keyword === 'pattern' && formatPaths.has(e.instancePath))).map(formatError),
  };
}
