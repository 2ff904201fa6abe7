/**
 * The product of a submission (`product.yaml`): vendor, product, version, contact and the URL of
 * the deployment certified, validated against `schemas/product.schema.json` (shipped with the
 * package). Its canonical text (keys sorted) is what the submission holds, so the same product
 * gives the same bytes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import YAML from 'yaml';
import { REPO_ROOT } from '../../core/paths.ts';

/** The product's JSON Schema, in the harness (a clone's `schemas/`, the package's `dist/schemas/`). */
export const PRODUCT_SCHEMA_FILE = path.join(REPO_ROOT, 'schemas', 'product.schema.json');

/** A product.yaml, once it passed the schema. */
export interface Product {
  vendor: string;
  product: string;
  version: string;
  contact: string;
  /** The deployment certified: the certificate's `target.baseUrl`. */
  url: string;
}

let validator: ReturnType<Ajv['compile']> | undefined;
function schemaErrors(doc: unknown): ErrorObject[] {
  if (!validator)
    validator = new Ajv({ allErrors: true, strict: true }).compile(JSON.parse(fs.readFileSync(PRODUCT_SCHEMA_FILE, 'utf8')) as object);
  return validator(doc) ? [] : (validator.errors ?? []);
}

function errorLine(e: ErrorObject): string {
  const where = e.instancePath ? e.instancePath.slice(1) : 'the document';
  if (e.keyword === 'additionalProperties')
    return `unknown key ${(e.params as { additionalProperty: string }).additionalProperty} (allowed: vendor, product, version, contact, url)`;
  if (e.keyword === 'required') return `missing key ${(e.params as { missingProperty: string }).missingProperty}`;
  if (e.keyword === 'pattern') return `${where} has not the expected form (see schemas/product.schema.json)`;
  return `${where} ${e.message ?? 'is invalid'}`;
}

/**
 * Parses and checks a product document (YAML or JSON text). Problems are one line each, naming
 * the key; a value is never quoted (a pasted key must not reach a log).
 */
export function parseProduct(text: string): { ok: true; product: Product } | { ok: false; problems: string[] } {
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (error) {
    const pos = (error as { linePos?: { line: number; col: number }[] }).linePos?.[0];
    return { ok: false, problems: [`not valid YAML${pos ? ` (line ${pos.line}, column ${pos.col})` : ''}`] };
  }
  const errors = schemaErrors(doc);
  if (errors.length) return { ok: false, problems: [...new Set(errors.map(errorLine))] };
  return { ok: true, product: doc as Product };
}

/** The product as the submission holds it: YAML, keys sorted, no comments. */
export function productYaml(product: Product): string {
  const sorted = Object.fromEntries(Object.entries(product).sort(([a], [b]) => (a < b ? -1 : 1)));
  return YAML.stringify(sorted, { lineWidth: 0 });
}

/** `Acme Corp.` → `acme-corp.`: lower case, every run of other characters than a-z, 0-9 and `.` one `-`, none at the ends. */
export function slug(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9.]+/g, '-')
      .replace(/^[-.]+|[-.]+$/g, '') || 'x'
  );
}

/** The submission folder's name: `<vendor>-<product>-<version>`. */
export function submissionName(product: Product): string {
  return `${slug(product.vendor)}-${slug(product.product)}-${slug(product.version)}`;
}

/** A base address without its trailing slashes (the form certify records). */
export const sameUrl = (a: string | undefined, b: string | undefined): boolean =>
  a !== undefined && b !== undefined && a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
