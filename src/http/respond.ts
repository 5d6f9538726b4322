// Answers in JSON, and the one funnel every error on an HTTP door goes through: a status and
// `{ "error": message }` (with `fields` beside it for refused input), never a stack trace.

import type { ServerResponse } from 'node:http';
import { FactoryError, UnavailableError, withFields } from '../core/errors';

/** An error that carries its own HTTP status (and headers, such as `Allow`); its message is shown. */
export class HttpError extends FactoryError {
  override name = 'HttpError';
  readonly status: number;
  readonly headers: Record<string, string>;
  constructor(status: number, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.headers = headers;
  }
}

export class BadRequestError extends HttpError {
  override name = 'BadRequestError';
  constructor(message = 'Bad request') {
    super(400, message);
  }
}

export class UnauthorizedError extends HttpError {
  override name = 'UnauthorizedError';
  constructor(message = 'Not signed in') {
    super(401, message);
  }
}

export class ForbiddenError extends HttpError {
  override name = 'ForbiddenError';
  constructor(message = 'Forbidden') {
    super(403, message);
  }
}

export class NotFoundHttpError extends HttpError {
  override name = 'NotFoundHttpError';
  constructor(message = 'not found') {
    super(404, message);
  }
}

/** A known path asked with a method it does not take; `Allow` lists the ones it does. */
export class MethodNotAllowedError extends HttpError {
  override name = 'MethodNotAllowedError';
  constructor(allowedMethods: string[], message = 'Method not allowed') {
    super(405, message, { Allow: allowedMethods.join(', ') });
  }
}

/** A body over the limit. The answer closes the connection: the rest of the body is never read. */
export class PayloadTooLargeError extends HttpError {
  override name = 'PayloadTooLargeError';
  constructor(limit: number) {
    super(413, `Request body is larger than the limit of ${limit} bytes`, { Connection: 'close' });
  }
}

export class UnsupportedMediaTypeError extends HttpError {
  override name = 'UnsupportedMediaTypeError';
  constructor(message = 'Expected JSON') {
    super(415, message);
  }
}

const internalErrorMessage = 'Internal error';

/**
 * The status an error is answered with: an HttpError's own; 403 for a desktop-only function;
 * 400 for any other FactoryError (the spec answers every method failure with 400); 500 for
 * anything else, which is a bug and whose message is not shown.
 */
function errorStatus(error: unknown): number {
  if (error instanceof HttpError) return error.status;
  if (error instanceof UnavailableError) return 403;
  if (error instanceof FactoryError) return 400;
  return 500;
}

/** Sends `value` as JSON with `status`; never cached, never sniffed. */
export function sendJson(response: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(value) ?? 'null';
  response.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...headers,
  });
  response.end(body);
}

/**
 * Answers `error` as `{ "error": message }` with its status (see errorStatus); a ValidationError
 * adds `"fields": [{ field, message }]`, the path of each problem that names a field, so a form can
 * put it there (the message says every problem in words, without paths). Unexpected errors
 * are logged with their stack and answered 500 `Internal error`. Headers set before the error
 * are dropped. When the answer has already begun, the response is cut off instead; when it
 * says `Connection: close`, the socket is destroyed once the answer is flushed.
 */
export function sendError(response: ServerResponse, error: unknown): void {
  const status = errorStatus(error);
  if (status >= 500) console.error('Internal error while answering a request:', error);
  if (response.writableEnded || response.destroyed) return;
  if (response.headersSent) {
    response.destroy();
    return;
  }
  const headers = error instanceof HttpError ? error.headers : {};
  const message = status >= 500 ? internalErrorMessage : (error as FactoryError).message || (error as FactoryError).name;
  for (const name of response.getHeaderNames()) response.removeHeader(name);
  if (headers.Connection === 'close') {
    const socket = response.socket;
    response.once('finish', () => socket?.destroy());
  }
  sendJson(response, status, status >= 500 ? { error: message } : withFields({ error: message }, error), headers);
}
