// Routes as data: `{ method, pattern, handler }` compiled once to anchored RegExps, and one
// fallback for every request no route takes.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { quote } from '../core/errors';
import { BadRequestError } from './respond';

/**
 * Answers a request that matched a route. `params` holds the percent-decoded `:name` segments
 * (`%2F` decodes to `/`, so check them before using one in a file path); `url` is the parsed
 * request target, for its query (its origin means nothing).
 */
type RouteHandler<C> = (
  request: IncomingMessage, response: ServerResponse, params: Record<string, string>, context: C, url: URL,
) => void | Promise<void>;

export interface Route<C> {
  /** Matched exactly: 'GET', 'POST'. */
  method: string;
  /** Starts with `/`; `:name` matches one non-empty segment, anything else matches itself. */
  pattern: string;
  /** Also match the path followed by one `/`. */
  trailingSlash?: boolean;
  handler: RouteHandler<C>;
}

/** What the fallback is told: the parsed URL, and the methods of the routes whose pattern matched the path (none: an unknown path). */
interface RouteMiss {
  url: URL;
  allowedMethods: string[];
}

type FallbackHandler<C> = (request: IncomingMessage, response: ServerResponse, context: C, miss: RouteMiss) => void | Promise<void>;

type Router<C> = (request: IncomingMessage, response: ServerResponse, context: C) => Promise<void>;

const parameterSegment = /^:([A-Za-z_][A-Za-z0-9_]*)$/;

/** Compiles a pattern to an anchored RegExp and its parameter names; throws TypeError for a malformed pattern. */
export function compilePattern(pattern: string, trailingSlash = false): { regexp: RegExp; names: string[] } {
  if (!pattern.startsWith('/')) throw new TypeError(`Route pattern ${quote(pattern)} does not start with /`);
  const names: string[] = [];
  const source = pattern.slice(1).split('/').map((segment) => {
    if (!segment.startsWith(':')) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const name = parameterSegment.exec(segment)?.[1];
    if (!name || names.includes(name)) throw new TypeError(`Route pattern ${quote(pattern)} has a bad or repeated parameter ${quote(segment)}`);
    names.push(name);
    return '([^/]+)';
  }).join('/');
  return { regexp: new RegExp(`^/${source}${trailingSlash && source && !source.endsWith('/') ? '/?' : ''}$`), names };
}

/** A path segment percent-decoded; BadRequestError when its encoding is malformed. */
export function decodeSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new BadRequestError(`Malformed percent-encoding in the path segment ${quote(raw)}`);
  }
}

/** The raw path (matched undecoded, so `%2F` stays inside one segment) and the parsed URL. */
export function parseTarget(target: string): { path: string; url: URL } {
  const absolutePath = target.startsWith('/');
  try {
    return { path: absolutePath ? target.split(/[?#]/, 1)[0]! : '', url: new URL(`http://localhost${absolutePath ? target : '/'}`) };
  } catch {
    throw new BadRequestError('Malformed request target');
  }
}

/** A request handler trying `routes` in order; throws BadRequestError for a malformed path parameter. */
export function createRouter<C>(routes: Route<C>[], fallback: FallbackHandler<C>): Router<C> {
  const compiled = routes.map((route) => ({ route, ...compilePattern(route.pattern, route.trailingSlash) }));
  return async (request, response, context) => {
    const { path, url } = parseTarget(request.url ?? '/');
    const allowedMethods: string[] = [];
    for (const { route, regexp, names } of compiled) {
      const match = regexp.exec(path);
      if (!match) continue;
      if (route.method !== request.method) {
        if (!allowedMethods.includes(route.method)) allowedMethods.push(route.method);
        continue;
      }
      const params = Object.fromEntries(names.map((name, index) => [name, decodeSegment(match[index + 1]!)]));
      return route.handler(request, response, params, context, url);
    }
    return fallback(request, response, context, { url, allowedMethods });
  };
}
