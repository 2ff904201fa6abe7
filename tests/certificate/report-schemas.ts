/**
 * The JSON Schemas of the run's files (schemas/conformance.schema.json, certificate.schema.json),
 * compiled once: every test that writes a report or a certificate validates it here.
 */
import fs from 'node:fs';
import path from 'node:path';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

const Ajv2020 = ((Ajv2020Module as unknown as { default?: unknown }).default ?? Ajv2020Module) as typeof Ajv2020Module.default;
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as typeof addFormatsModule.default;
const ROOT = path.resolve(import.meta.dirname, '..', '..');
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);

function compile(file: string) {
  const validate = ajv.compile(JSON.parse(fs.readFileSync(path.join(ROOT, 'schemas', file), 'utf8')) as object);
  return (doc: unknown): string[] =>
    validate(doc)
      ? []
      : (validate.errors ?? []).map(
          (e: { instancePath: string; message?: string; params: unknown }) =>
            `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`,
        );
}

/** Problems of a conformance.json document against its schema (empty: valid). */
export const conformanceProblems = compile('conformance.schema.json');
/** Problems of a certificate.json document against its schema (empty: valid). */
export const certificateProblems = compile('certificate.schema.json');
