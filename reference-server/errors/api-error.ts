/**
 * The spec's Error object and the codes this server uses.
 *
 * Spec: [Errors](spec/inventory-service.md#errors) — "Error responses use the Error
 * object (`code`, `message`, `status`), content type `application/json`". The values of `code` are
 * "not shown" by the spec; the table below is this server's choice.
 */
export const ErrorCode = {
  /** 400: the request body is not valid JSON. */
  invalidJson: 'invalid_json',
  /** 400: the body is JSON but lacks a required field or has an invalid value. */
  invalidBody: 'invalid_body',
  /** 400: `{petId}` is not a decimal integer within int64. */
  invalidPetId: 'invalid_pet_id',
  /** 400: the request target cannot be decoded (bad percent-encoding) or is malformed. */
  invalidRequest: 'invalid_request',
  /** 400: the quickstart requires `Content-Type: application/json` and it is missing or another type. */
  invalidContentType: 'invalid_content_type',
  /** 401: no credentials were sent. */
  missingCredentials: 'missing_credentials',
  /** 401: credentials were sent but are not a known bearer key (other scheme, malformed, unknown). */
  invalidCredentials: 'invalid_credentials',
  /** 404: no resource (pet) with this id. */
  notFound: 'not_found',
  /** 404: no route with this path. */
  routeNotFound: 'route_not_found',
  /** 405: the path exists, the method does not (see `Allow`). */
  methodNotAllowed: 'method_not_allowed',
  /** 408: the request (headers or body) did not arrive in time. */
  requestTimeout: 'request_timeout',
  /** 413: the body is larger than `maxBodyBytes`. */
  payloadTooLarge: 'payload_too_large',
  /** 414 / 431: request target or header section too large. */
  uriTooLong: 'uri_too_long',
  headersTooLarge: 'headers_too_large',
  /** 415: PATCH with a body whose Content-Type is not JSON. */
  unsupportedMediaType: 'unsupported_media_type',
  /** 417: an `Expect` other than `100-continue`. */
  expectationFailed: 'expectation_failed',
  /** 429: over the plan's limit; wait `Retry-After`. */
  rateLimited: 'rate_limited',
  /** 429: temporarily banned for retrying before `Retry-After` passed; `Retry-After` covers the ban. */
  keyBanned: 'key_banned',
  /** 500: a defect of the server itself (never caused by input). */
  internal: 'internal_error',
  /** 503: the shared store (Redis) of a multi-instance deployment cannot be reached; retry after `Retry-After`. */
  serviceUnavailable: 'service_unavailable',
} as const;

export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];

/** The Error object of the spec. `status` always equals the HTTP status of the response. */
export interface ErrorBody {
  code: ErrorCodeValue;
  message: string;
  status: number;
}

/**
 * A request that ends in an Error response. Thrown (or passed) anywhere in a handler; the central
 * error handler (`errors/handler.ts`) turns it into the response.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCodeValue;
  /** Extra response headers, e.g. `Allow` on 405 or `Retry-After` on 429. */
  readonly headers: Readonly<Record<string, string>>;

  constructor(status: number, code: ErrorCodeValue, message: string, headers: Readonly<Record<string, string>> = {}) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.headers = headers;
  }

  toBody(): ErrorBody {
    return { code: this.code, message: this.message, status: this.status };
  }
}

/**
 * The shared store (rate-limit counters or inventory on Redis) cannot be reached: 503 with
 * `Retry-After` (RFC 9110 §15.6.4). Never admission without counting, never a hang.
 */
export class StoreUnavailableError extends ApiError {
  constructor(what: string, retryAfterSeconds = 1) {
    super(503, ErrorCode.serviceUnavailable, `The ${what} is unavailable; retry after ${retryAfterSeconds} s.`, {
      'Retry-After': String(retryAfterSeconds),
    });
  }
}
