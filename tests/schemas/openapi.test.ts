import { test, expect } from '../test.ts';
import SwaggerParser from '@apidevtools/swagger-parser';
import { openapiDocument } from '../../schemas/index.ts';
import { openapiPath } from '../../schemas/generate.ts';

type Doc = Record<string, any>;
const RATE_LIMIT_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const copy = (): Doc => structuredClone(openapiDocument()) as Doc;

/** Every operation of a dereferenced document: `GET /inventory` → operation object. */
function operations(doc: Doc): [string, Doc][] {
  return Object.entries(doc.paths as Doc).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((m) => [`${m.toUpperCase()} ${path}`, item[m]] as [string, Doc]),
  );
}

/** Lines `GET /inventory 200: X-RateLimit-Reset` for each rate-limit header a response fails to declare (required). */
async function missingRateLimitHeaders(doc: Doc): Promise<string[]> {
  const deref = (await SwaggerParser.dereference(structuredClone(doc) as any)) as Doc;
  const missing: string[] = [];
  for (const [op, operation] of operations(deref)) {
    for (const [status, response] of Object.entries(operation.responses as Doc)) {
      for (const name of RATE_LIMIT_HEADERS) {
        if (response.headers?.[name]?.required !== true) missing.push(`${op} ${status}: ${name}`);
      }
    }
  }
  return missing;
}

test('openapi.yaml passes @apidevtools/swagger-parser validation', async () => {
  await expect(SwaggerParser.validate(openapiPath)).resolves.toBeTruthy();
});

test('the validator rejects a broken copy (response without description, undefined $ref)', async () => {
  const noDescription = copy();
  delete noDescription.paths['/inventory'].get.responses['200'].description;
  await expect(SwaggerParser.validate(noDescription as any)).rejects.toThrow();
  const danglingRef = copy();
  danglingRef.paths['/inventory'].get.responses['200'].content['application/json'].schema.$ref = '#/components/schemas/Nope';
  await expect(SwaggerParser.validate(danglingRef as any)).rejects.toThrow();
});

test('every response of every operation declares the three X-RateLimit headers as required', async () => {
  expect(await missingRateLimitHeaders(openapiDocument())).toEqual([]);
  const deref = (await SwaggerParser.dereference(copy() as any)) as Doc;
  const count = operations(deref).reduce((n, [, op]) => n + Object.keys(op.responses).length, 0);
  expect(count).toBeGreaterThanOrEqual(20);
});

test('the rate-limit header check fails when one response drops a header', async () => {
  const doc = copy();
  delete doc.paths['/store/orders'].get.responses['200'].headers['X-RateLimit-Remaining'];
  delete doc.components.responses.TooManyRequests.headers['X-RateLimit-Reset'];
  const missing = await missingRateLimitHeaders(doc);
  expect(missing).toContain('GET /store/orders 200: X-RateLimit-Remaining');
  expect(missing).toContain('GET /inventory 429: X-RateLimit-Reset');
});

test('the document states the interface of the spec', async () => {
  const doc = (await SwaggerParser.dereference(copy() as any)) as Doc;
  expect(doc.openapi).toBe('3.1.0');
  expect(doc.info.version).toBe('1.0.0');
  expect(doc.servers).toHaveLength(2);
  for (const server of doc.servers) expect(server.url).toMatch(/\/v1$/);
  expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  expect(doc.security).toEqual([{ bearerAuth: [] }]);

  const ops = Object.fromEntries(operations(doc));
  expect(Object.keys(ops).sort()).toEqual(
    ['GET /inventory', 'GET /pets/{petId}', 'GET /store/orders', 'PATCH /inventory/{petId}', 'POST /messages'].sort(),
  );
  expect(ops['GET /inventory'].operationId).toBe('listInventory');
  expect(Object.keys(ops['GET /inventory'].responses).sort()).toEqual(['200', '401', '429']);

  const update = ops['PATCH /inventory/{petId}'];
  expect(update.operationId).toBe('updateInventory');
  expect(update['x-stability']).toBe('experimental');
  expect(update.parameters).toEqual([
    expect.objectContaining({ name: 'petId', in: 'path', required: true, schema: { type: 'integer', format: 'int64' } }),
  ]);
  expect(update.requestBody.required).toBe(true);
  expect(Object.keys(update.responses).sort()).toEqual(['200', '400', '401', '404', '429']);

  const send = ops['POST /messages'];
  expect(send.servers).toHaveLength(1);
  expect(send.servers[0].url).toBe('{api_url}');
  expect(send.requestBody.required).toBe(true);
  expect(Object.keys(send.responses).sort()).toEqual(['200', '201', '202', '400', '401', '429']);

  expect(ops['GET /pets/{petId}'].deprecated).toBe(true);
  expect(ops['GET /pets/{petId}'].responses['200'].content['application/json'].schema).toEqual({});
  expect(ops['GET /store/orders'].responses['200'].content['application/json'].schema).toEqual({});

  for (const [op, operation] of Object.entries(ops)) {
    expect(operation.security, `${op} uses the global bearer scheme`).toBeUndefined();
    const tooMany = operation.responses['429'];
    expect(tooMany.headers['Retry-After'].required, `${op} 429 Retry-After`).toBe(true);
    for (const [status, response] of Object.entries(operation.responses as Doc)) {
      if (['400', '401', '404'].includes(status)) {
        expect(response.content['application/json'].schema.required, `${op} ${status} Error body`).toEqual(['code', 'message', 'status']);
      }
    }
  }
});

test('objects allow extra fields and invent no bounds the spec does not show', () => {
  const text = JSON.stringify(openapiDocument());
  expect(text).not.toContain('"additionalProperties":false');
  expect(text).not.toContain('"unevaluatedProperties":false');
  const schemas = (openapiDocument() as Doc).components.schemas;
  for (const schema of [schemas.InventoryItem.properties.quantity, schemas.InventoryUpdate.properties.quantity]) {
    expect(Object.keys(schema).sort()).toEqual(['description', 'type']);
  }
  expect(schemas.MessageResponse.required).toEqual(['id', 'message', 'status', 'createdAt']);
  expect(schemas.MessageResponse.properties.createdAt).toMatchObject({ type: 'string', format: 'date-time' });
  expect(schemas.MessageResponse.properties.createdAt.description).toMatch(/UTC/);
  expect(schemas.MessageResponse.properties.status.enum).toBeUndefined();
});
