/**
 * Faults of the inventory operations (Endpoints 1 and 2, Resources and their fields): the list's
 * shape, types and int64 ids, and the update's semantics, validation and error answers.
 */
import { headers, type FaultHooks } from '../proxy.ts';
import {
  isJson,
  isList,
  isPatch,
  jsonBody,
  mapJson,
  mapRequestJson,
  petIdOf,
  readJson,
  respond,
  tokenOf,
  crash,
  updateQuantity,
  quantityBefore,
  answer,
} from '../lib.ts';
import type { FaultDefinition } from '../fault.ts';

/** List responses only (a 200 JSON array), item by item. */
function mapItems(fn: (item: Record<string, unknown>, index: number) => unknown): FaultHooks {
  return respond(
    (res, req) => isList(req) && res.status === 200,
    (res) => mapJson(res, (b) => (Array.isArray(b) ? b.map((item, i) => fn(item, i)) : b)),
  );
}

export const faults: FaultDefinition[] = [
  {
    name: 'list-petid-string',
    description: 'The list serializes `petId` as a string (a common int64 workaround) instead of an integer.',
    expect: ['INV-01', 'INV-02'],
    proxy: () => mapItems((item) => ({ ...item, petId: String(item.petId) })),
  },
  {
    name: 'list-status-outside-enum',
    description: '`status` uses a value outside PetStatus (`sold` renamed to `out_of_stock`).',
    expect: ['INV-01', 'INV-04'],
    proxy: () => mapItems((item) => (item.status === 'sold' ? { ...item, status: 'out_of_stock' } : item)),
  },
  {
    name: 'list-quantity-missing',
    description: 'Zero quantities are omitted from items (Go-style `omitempty`), so the required `quantity` is missing.',
    expect: ['INV-01'],
    proxy: () =>
      mapItems((item) => {
        if (item.quantity !== 0) return item;
        const { quantity: _q, ...rest } = item;
        return rest;
      }),
  },
  {
    name: 'list-int64-rounded',
    description:
      'Ids above 2^53 are rounded as a JavaScript server would (JSON.parse/JSON.stringify): 9007199254740993 becomes 9007199254740992.',
    expect: ['INV-02'],
    proxy: () =>
      respond(
        (res, req) => (isList(req) || isPatch(req)) && res.status === 200 && isJson(res.headers),
        (res) => ({ ...res, body: Buffer.from(JSON.stringify(JSON.parse(res.body.toString('utf8')))) }),
      ),
  },
  {
    name: 'list-duplicate-entry',
    description: 'A join in the list query returns one pet twice.',
    expect: ['INV-05'],
    proxy: () =>
      respond(
        (res, req) => isList(req) && res.status === 200,
        (res) => mapJson(res, (b) => (Array.isArray(b) && b.length ? [...b, b[0]] : b)),
      ),
  },
  {
    name: 'list-text-plain',
    description: 'The list is served as `text/plain` (a framework default) although the body is JSON.',
    expect: ['INV-03'],
    proxy: () =>
      respond(
        (res, req) => isList(req) && res.status === 200,
        (res) => ({ ...res, headers: headers.set(res.headers, 'Content-Type', 'text/plain') }),
      ),
  },
  {
    name: 'update-not-persisted',
    description: 'PATCH answers 200 with the new quantity but the write is lost (the list keeps the old quantity).',
    expect: ['UPD-02'],
    proxy: () => ({
      async request(req, ctx) {
        if (!isPatch(req) || typeof updateQuantity(req) !== 'number') return req;
        const before = await quantityBefore(req, ctx.forward);
        const res = await ctx.forward(req);
        if (res.status === 200 && before !== undefined) {
          await ctx.forward({ ...req, body: jsonBody({ quantity: before }) });
        }
        return res;
      },
    }),
  },
  {
    name: 'update-stale-response',
    description: 'PATCH persists the new quantity but answers with the item as it was before (a read-before-write cache).',
    expect: ['UPD-01'],
    proxy: () => ({
      async request(req, ctx) {
        if (!isPatch(req) || typeof updateQuantity(req) !== 'number') return req;
        const before = await quantityBefore(req, ctx.forward);
        const res = await ctx.forward(req);
        if (res.status !== 200 || before === undefined) return res;
        return mapJson(res, (b) => ({ ...b, quantity: before }));
      },
    }),
  },
  {
    name: 'update-string-quantity-coerced',
    description: 'A string quantity (`"5"`) is coerced to a number and accepted instead of 400.',
    expect: ['UPD-03'],
    proxy: () => ({
      request: (req) =>
        isPatch(req)
          ? mapRequestJson(req, (b) => {
              if (b && typeof b === 'object' && typeof b.quantity === 'string') {
                const n = Number.parseInt(b.quantity, 10);
                return { ...b, quantity: Number.isNaN(n) ? 0 : n };
              }
              return b;
            })
          : req,
    }),
  },
  {
    name: 'update-refused-but-written',
    description:
      'A string quantity (`"5"`) is refused with a correct 400 Error body, but the validator runs after the write: the number in the string is stored.',
    expect: ['UPD-03'],
    proxy: () => ({
      async request(req, ctx) {
        const q = isPatch(req) && tokenOf(req) !== undefined ? updateQuantity(req) : undefined;
        if (typeof q !== 'string' || !/^\s*-?\d+\s*$/.test(q)) return req;
        const written = await ctx.forward({ ...req, body: jsonBody({ quantity: Number.parseInt(q, 10) }) });
        return answer(400, { code: 'invalid_quantity', message: 'quantity must be an integer', status: 400 }, written.headers);
      },
    }),
  },
  {
    name: 'update-float-truncated',
    extended: true,
    description: 'A fractional quantity (`2.5`) is truncated to an integer and accepted instead of 400.',
    expect: ['UPD-03'],
    proxy: () => ({
      request: (req) =>
        isPatch(req)
          ? mapRequestJson(req, (b) =>
              b && typeof b === 'object' && typeof b.quantity === 'number' && !Number.isInteger(b.quantity)
                ? { ...b, quantity: Math.trunc(b.quantity) }
                : b,
            )
          : req,
    }),
  },
  {
    name: 'update-upsert',
    description: 'PATCH of an unknown pet creates it (200) instead of answering 404.',
    expect: ['UPD-04'],
    proxy: () =>
      respond(
        (res, req) => isPatch(req) && res.status === 404,
        (res, req) => {
          const q = updateQuantity(req);
          const id = petIdOf(req);
          const body = Buffer.from(
            `{"petId":${/^\d+$/.test(id) ? id : JSON.stringify(id)},"quantity":${JSON.stringify(q ?? 0)},"status":"available"}`,
          );
          return { status: 200, headers: headers.set(res.headers, 'Content-Type', 'application/json'), body };
        },
      ),
  },
  {
    name: 'malformed-json-500',
    description: 'Invalid JSON in a PATCH body crashes the handler: 500 instead of 400.',
    expect: ['UPD-03'],
    proxy: () => ({
      request(req) {
        if (!isPatch(req) || readJson(req.body) !== undefined || tokenOf(req) === undefined) return req;
        return crash('Unexpected token in JSON');
      },
    }),
  },
  {
    name: 'update-negative-quantity-500',
    description: 'A negative quantity reaches an unsigned database column: 500 instead of 200 or 400.',
    expect: ['UPD-06'],
    proxy: () => ({
      request: (req) => req, // buffers the request body, which the response hook reads
      ...respond(
        (_res, req) => isPatch(req) && tokenOf(req) !== undefined && (updateQuantity(req) as number) < 0,
        (res) => crash('out of range value for column quantity', res.headers),
      ),
    }),
  },
  {
    name: 'update-null-quantity-500',
    extended: true,
    description: '`{"quantity": null}` or a non-object body reaches the database layer: 500 instead of 400.',
    expect: ['UPD-03'],
    proxy: () => ({
      request(req) {
        if (!isPatch(req) || tokenOf(req) === undefined) return req;
        const b = readJson(req.body) as any;
        if (b === undefined) return req;
        if (b === null || typeof b !== 'object' || Array.isArray(b) || b.quantity === null) {
          return crash('TypeError: cannot read properties of null');
        }
        return req;
      },
    }),
  },
  {
    name: 'update-404-html',
    description: 'An unknown pet gets the web framework\'s HTML "Not Found" page instead of an Error body.',
    expect: ['UPD-04', 'ERR-02'],
    proxy: () =>
      respond(
        (res, req) => isPatch(req) && res.status === 404,
        (res) => ({
          ...res,
          headers: headers.set(res.headers, 'Content-Type', 'text/html; charset=utf-8'),
          body: Buffer.from('<!DOCTYPE html><html><body><h1>Not Found</h1></body></html>'),
        }),
      ),
  },
  {
    name: 'update-path-id-500',
    description: 'A path id that is not an int64 (`/inventory/abc`) reaches the database: 500.',
    expect: ['UPD-05'],
    proxy: () => ({
      request(req) {
        if (!isPatch(req) || tokenOf(req) === undefined) return req;
        const id = petIdOf(req);
        const valid = /^-?\d{1,19}$/.test(id) && BigInt(id) <= 2n ** 63n - 1n && BigInt(id) >= -(2n ** 63n);
        return valid ? req : crash('invalid input syntax for type bigint');
      },
    }),
  },
  {
    name: 'update-hangs-on-invalid-json',
    description: 'A PATCH whose body is not JSON is never answered (the handler waits for a body it cannot parse): the client hangs.',
    expect: ['UPD-03'],
    env: { REQUEST_TIMEOUT_MS: '3000' },
    proxy: () => ({
      request: (req) =>
        isPatch(req) && tokenOf(req) !== undefined && req.body.length > 0 && readJson(req.body) === undefined ? 'swallow' : req,
    }),
  },
];
