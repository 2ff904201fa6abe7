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

/** How many recent matches a router keeps (then it starts afresh), and of targets up to what length. */
const RECENT_MATCHES = 1024;
const RECENT_TARGET_LENGTH = 256;

export class Router {
  private readonly routes: CompiledRoute[];
  /** Recent matches by method, then target: clients repeat their targets, and a match is immutable. */
  private readonly recent = new Map<string, Map<string, RouteMatch | undefined>>();
  private recentCount = 0;

  constructor(routes: readonly RouteDef[]) {
    this.routes = routes.map((def) => {
      const methods = Object.keys(def.operations);
      if (methods.includes('GET')) methods.push('HEAD');
      return {
        def,
        segments: def.path
          .slice(1)
          .split('/')
          .map((s) => (s.startsWith('{') ? null : s)),
        allow: methods.join(', '),
      };
    });
  }

  /** The match for `method` and `target`, undefined for an unknown path; throws 400/414 on a bad target. */
  match(method: string, target: string): RouteMatch | undefined {
    let recent = this.recent.get(method);
    if (recent === undefined) this.recent.set(method, (recent = new Map()));
    const known = recent.get(target);
    if (known !== undefined || recent.has(target)) return known;
    const match = this.matchSegments(method, pathSegments(target));
    if (target.length > RECENT_TARGET_LENGTH) return match;
    if (this.recentCount++ >= RECENT_MATCHES) {
      for (const targets of this.recent.values()) targets.clear();
      this.recentCount = 1;
    }
    recent.set(target, match);
    return match;
  }

  private matchSegments(method: string, segments: readonly string[]): RouteMatch | undefined {
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
      return Object.freeze({ route: route.def, handler: op?.handler, allow: route.allow, params: Object.freeze(params) });
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
  let end = path.indexOf('?');
  const hash = path.indexOf('#');
  if (end < 0 || (hash >= 0 && hash < end)) end = hash;
  const segments = (end < 0 ? path.slice(1) : path.slice(1, end)).split('/');
  for (let i = 0; i < segments.length; i++) {
    if (!segments[i].includes('%')) continue;
    try {
      segments[i] = decodeURIComponent(segments[i]);
    } catch {
      throw new ApiError(400, ErrorCode.invalidRequest, 'The request path has invalid percent-encoding.');
    }
  }
  return segments;
}
