/**
 * Routing: the request target to a route and a handler.
 *
 * Spec: [Endpoints](spec/inventory-service.md#endpoints) and
 * [Versioning](spec/inventory-service.md#versioning). Unknown paths are 404
 * `route_not_found`; a known path with another method is 405 with `Allow` (RFC 9110 §15.5.6); GET
 * routes also answer HEAD. The query string is ignored. Path segments are percent-decoded; bad
 * percent-encoding is a 400, a target longer than `MAX_TARGET_LENGTH` a 414.
 */
import { ApiError, ErrorCode } from '../errors/api-error.ts';
import type { Handler } from './exchange.ts';

export const MAX_TARGET_LENGTH = 8192;

export interface RouteDef {
  /** Path template, e.g. `/v1/inventory/{petId}`. */
  readonly path: string;
  /** Operation id per method. */
  readonly operations: Readonly<Record<string, { readonly id: string; readonly handler: Handler }>>;
  /** Headers on every response of this route, including its 401/404/405 (e.g. deprecation). */
  readonly headers?: readonly string[];
}

export interface RouteMatch {
  readonly route: RouteDef;
  /** The handler, or undefined when the method is not allowed (see `allow`). */
  readonly handler: Handler | undefined;
  readonly allow: string;
  readonly params: readonly string[];
}

interface CompiledRoute {
  readonly def: RouteDef;
  readonly segments: readonly (string | null)[];
  readonly allow: string;
}

export class Router {
  private readonly routes: CompiledRoute[];

  constructor(routes: readonly RouteDef[]) {
    this.routes = routes.map((def) => {
      const methods = Object.keys(def.operations);
      if (methods.includes('GET')) methods.push('HEAD');
      return {
        def,
        segments: def.path.slice(1).split('/').map((s) => (s.startsWith('{') ? null : s)),
        allow: methods.join(', '),
      };
    });
  }

  /** The match for `method` and `target`, undefined for an unknown path; throws 400/414 on a bad target. */
  match(method: string, target: string): RouteMatch | undefined {
    const segments = pathSegments(target);
    for (const route of this.routes) {
      if (route.segments.length !== segments.length) continue;
      const params: string[] = [];
      let ok = true;
      for (let i = 0; i < segments.length && ok; i++) {
        const expected = route.segments[i];
        if (expected === null) {
          if (segments[i] === '') ok = false;
          else params.push(segments[i]);
        } else if (expected !== segments[i]) ok = false;
      }
      if (!ok) continue;
      const op = route.def.operations[method] ?? (method === 'HEAD' ? route.def.operations.GET : undefined);
      return { route: route.def, handler: op?.handler, allow: route.allow, params };
    }
    return undefined;
  }
}

/** Decoded path segments of an origin-form or absolute-form request target. */
export function pathSegments(target: string): string[] {
  if (target.length > MAX_TARGET_LENGTH) {
    throw new ApiError(414, ErrorCode.uriTooLong, `The request target is longer than ${MAX_TARGET_LENGTH} characters.`);
  }
  let path = target;
  if (!path.startsWith('/')) {
    try {
      path = new URL(target).pathname;
    } catch {
      throw new ApiError(400, ErrorCode.invalidRequest, 'The request target is not a valid path.');
    }
  }
  const end = path.search(/[?#]/);
  if (end >= 0) path = path.slice(0, end);
  return path
    .slice(1)
    .split('/')
    .map((segment) => {
      if (!segment.includes('%')) return segment;
      try {
        return decodeURIComponent(segment);
      } catch {
        throw new ApiError(400, ErrorCode.invalidRequest, 'The request path has invalid percent-encoding.');
      }
    });
}
