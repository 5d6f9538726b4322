// The renderer's files (dist/ui) over HTTP: only regular files that really lie under the root,
// whatever the path says; anything else is 404.

import { constants } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, isAbsolute, join, relative, sep } from 'node:path';
import { MethodNotAllowedError, NotFoundHttpError } from './respond';

export const contentSecurityPolicy = [
  "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "connect-src 'self'",
  "base-uri 'none'", "frame-ancestors 'none'", "form-action 'self'",
].join('; ');

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml; charset=utf-8',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
};

/** A decoded segment we refuse: empty, a dot file or dot segment, or holding a separator, NUL, a control character or a colon. */
const unsafeSegment = /^$|^\.|[/\\:\0-\x1f\x7f]/;

interface StaticOptions {
  /** The folder served; it may appear only later (a build in progress answers 404 until then). */
  root: string;
  /** Added to every file answer. */
  headers?: Record<string, string>;
}

type StaticHandler = (request: IncomingMessage, response: ServerResponse) => Promise<void>;

function notFound(): NotFoundHttpError {
  return new NotFoundHttpError('not found');
}

/** The decoded path segments of a request target; `/` is `index.html`. Throws NotFoundHttpError for anything unsafe. */
function staticSegments(target: string): string[] {
  const path = target.split(/[?#]/, 1)[0]!;
  if (!path.startsWith('/')) throw notFound();
  if (path === '/') return ['index.html'];
  return path.slice(1).split('/').map((raw) => {
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      throw notFound();
    }
    if (unsafeSegment.test(segment)) throw notFound();
    return segment;
  });
}

/**
 * Serves GET and HEAD from `root`. Throws (for the caller's sendError) NotFoundHttpError for
 * anything but a regular file whose real path, symbolic links resolved, lies under the root's,
 * and MethodNotAllowedError for other methods.
 */
export function createStaticHandler(options: StaticOptions): StaticHandler {
  return async (request, response) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') throw new MethodNotAllowedError(['GET', 'HEAD']);
    const segments = staticSegments(request.url ?? '');
    let root: string;
    let path: string;
    try {
      root = await realpath(options.root);
      path = await realpath(join(root, ...segments));
    } catch {
      throw notFound();
    }
    const inside = relative(root, path);
    if (inside === '' || isAbsolute(inside) || inside === '..' || inside.startsWith('..' + sep)) throw notFound();

    const file = await open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0)).catch(() => {
      throw notFound();
    });
    try {
      const stats = await file.stat();
      if (!stats.isFile()) throw notFound();
      const etag = `W/"${stats.size.toString(16)}-${Math.floor(stats.mtimeMs).toString(16)}"`;
      const headers: Record<string, string | number> = {
        'Content-Type': contentTypes[extname(path).toLowerCase()] ?? 'application/octet-stream',
        'Cache-Control': 'no-cache',
        ETag: etag,
        'Last-Modified': stats.mtime.toUTCString(),
        'Content-Security-Policy': contentSecurityPolicy,
        'X-Content-Type-Options': 'nosniff',
        'Referrer-Policy': 'no-referrer',
        ...options.headers,
      };
      const known = request.headers['if-none-match']?.split(',').map((tag) => tag.trim());
      if (known?.includes(etag) || known?.includes('*')) {
        response.writeHead(304, headers).end();
        return;
      }
      const body = request.method === 'HEAD' ? undefined : await file.readFile();
      response.writeHead(200, { ...headers, 'Content-Length': body?.length ?? stats.size }).end(body);
    } finally {
      await file.close();
    }
  };
}
