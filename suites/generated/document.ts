/**
 * The operations of an OpenAPI document, as the generator needs them: method, path template,
 * which base address serves it, path parameters and request body schemas (every `$ref`
 * resolved), and the documented response statuses. Pure: it reads the document it is given, so a
 * field added to `schemas/openapi.yaml` reaches the generated cases without new code.
 */

/** A JSON Schema node as found in the document (after `$ref` resolution). */
export type Schema = Record<string, unknown>;

export interface PathParameter {
  name: string;
  schema: Schema;
}

export interface Operation {
  /** `operationId`, or `METHOD path` when the document gives none. */
  id: string;
  method: string;
  /** Path template relative to the base address, e.g. `/inventory/{petId}`. */
  path: string;
  /** `messages` when the operation has its own `servers` entry (the quickstart's {api_url}), else `inventory`. */
  base: 'inventory' | 'messages';
  pathParameters: PathParameter[];
  /** Media types and schema of the request body, when the operation has one. */
  requestBody?: { required: boolean; mediaTypes: string[]; schema: Schema };
  /** Documented statuses, e.g. `['200', '400', '401', '404', '429']`. */
  statuses: string[];
  /** Schema of each documented 2xx response's JSON body (`{}` where the spec shows none). */
  successSchemas: Record<string, Schema>;
  /** Name of each 2xx body's component schema (`Inventory`), when it is a `$ref` to one. */
  successSchemaNames: Record<string, string | undefined>;
  /** True when every 2xx body is described (not the open `{}` of a "not shown" payload). */
  described: boolean;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Resolves a local `$ref` (`#/components/...`) against `doc`. */
function lookup(doc: Record<string, unknown>, ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`only local $ref are supported, got ${ref}`);
  let node: unknown = doc;
  for (const part of ref.slice(2).split('/')) {
    node = (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    if (node === undefined) throw new Error(`unresolved $ref ${ref}`);
  }
  return node;
}

/** A copy of `node` with every `$ref` replaced by its target (recursively; cycles are an error). */
export function deref(doc: Record<string, unknown>, node: unknown, seen: string[] = []): unknown {
  if (Array.isArray(node)) return node.map((n) => deref(doc, n, seen));
  if (node === null || typeof node !== 'object') return node;
  const obj = node as Record<string, unknown>;
  if (typeof obj.$ref === 'string') {
    if (seen.includes(obj.$ref)) throw new Error(`cyclic $ref ${obj.$ref}`);
    return deref(doc, lookup(doc, obj.$ref), [...seen, obj.$ref]);
  }
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, deref(doc, v, seen)]));
}

/** True when a schema constrains nothing (`{}` or only annotations): the spec shows no payload. */
export function isOpenSchema(schema: Schema): boolean {
  const annotations = new Set(['description', 'title', 'examples', 'example', 'deprecated']);
  return Object.keys(schema).every((k) => annotations.has(k));
}

/** The component name a response's JSON body schema refers to (following the response's own `$ref`). */
function bodySchemaName(document: Record<string, unknown>, response: unknown): string | undefined {
  let res = response as Record<string, any> | undefined;
  if (typeof res?.$ref === 'string') res = lookup(document, res.$ref) as Record<string, any>;
  const ref = res?.content?.['application/json']?.schema?.$ref;
  return typeof ref === 'string' && ref.startsWith('#/components/schemas/') ? ref.split('/').pop() : undefined;
}

/** Every operation of the document, in document order. */
export function operationsOf(document: Record<string, unknown>): Operation[] {
  const raw = document as Record<string, any>;
  const doc = deref(document, document) as Record<string, any>;
  const out: Operation[] = [];
  for (const [path, item] of Object.entries<Record<string, any>>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])] as Array<Record<string, any>>;
      const json = op.requestBody?.content ?? {};
      const mediaTypes = Object.keys(json);
      const bodySchema = (json['application/json'] ?? Object.values(json)[0])?.schema as Schema | undefined;
      const successSchemas: Record<string, Schema> = {};
      const successSchemaNames: Record<string, string | undefined> = {};
      for (const [status, res] of Object.entries<Record<string, any>>(op.responses ?? {})) {
        if (!/^2/.test(status)) continue;
        successSchemas[status] = (res.content?.['application/json']?.schema as Schema | undefined) ?? {};
        successSchemaNames[status] = bodySchemaName(document, raw.paths[path][method].responses[status]);
      }
      out.push({
        id: op.operationId ?? `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        base: op.servers?.length ? 'messages' : 'inventory',
        pathParameters: params.filter((p) => p.in === 'path').map((p) => ({ name: p.name, schema: (p.schema ?? {}) as Schema })),
        ...(bodySchema ? { requestBody: { required: !!op.requestBody.required, mediaTypes, schema: bodySchema } } : {}),
        statuses: Object.keys(op.responses ?? {}),
        successSchemas,
        successSchemaNames,
        described: Object.values(successSchemas).every((s) => !isOpenSchema(s)),
      });
    }
  }
  return out;
}

/** Methods documented for each path template. */
export function methodsByPath(operations: Operation[]): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const op of operations) map.set(op.path, [...(map.get(op.path) ?? []), op.method]);
  return map;
}
