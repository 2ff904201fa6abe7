/**
 * What a route handler gets: the request, the response, the authenticated key, the rate-limit
 * decision already taken for this request, the path parameters and the server's state.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiKeyRecord } from '../auth/keys.ts';
import type { InventoryStore } from '../inventory/store.ts';
import type { RateDecision } from '../rate-limit/policy.ts';

/** What reads a body: a module function (no closure per request) and the context it needs. */
export type BodyHandler<C> = (x: Exchange, body: Buffer, context: C) => void;

/** Reads request bodies within the server's size and time limits (`BodyReader`, http/body.ts). */
export interface BodyReading {
  read<C>(x: Exchange, onBody: BodyHandler<C>, context: C): void;
  /** Bodies being read now. */
  readonly pending: number;
  /** Bodies read through listeners so far (the others were complete when read and taken at once). */
  readonly listened: number;
}

export interface AppState {
  readonly inventory: InventoryStore;
  /** Reads request bodies within the server's size and time limits. */
  readonly body: BodyReading;
  /** Answers `exchange` with `error` through the central error handler (for work that ends in a callback). */
  readonly fail: (exchange: Exchange, error: unknown) => void;
}

export interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly key: ApiKeyRecord;
  readonly decision: RateDecision;
  /** Decoded path segments matched by `{param}` placeholders, in order. */
  readonly params: readonly string[];
  /** Headers every response of the route carries (e.g. `Deprecation`), flat name/value list. */
  readonly routeHeaders: readonly string[] | undefined;
  readonly app: AppState;
}

/** A route handler; it sends the response or throws an `ApiError` for the central error handler. */
export type Handler = (exchange: Exchange) => void | Promise<void>;
