/**
 * The store-order operation, named but not shown by the spec.
 *
 * Spec: [Other operations](spec/inventory-service.md#other-operations) — paths,
 * parameters and payloads "not shown". This server has no orders: `GET /v1/store/orders` is 200
 * with an empty JSON array.
 */
import type { Exchange } from '../http/exchange.ts';
import { send } from '../http/response.ts';

const EMPTY = Buffer.from('[]');

/** `GET /v1/store/orders`. */
export function listOrders(x: Exchange): void {
  send(x.res, 200, EMPTY, x.decision);
}
