// Request bodies, read whole but never past a limit: memory does not grow with what a client
// tries to send.

import type { IncomingMessage } from 'node:http';
import { BadRequestError, HttpError, PayloadTooLargeError, UnsupportedMediaTypeError } from './respond';

/** Webhook and remote-call bodies: about 2 MB (spec, Limits). */
export const defaultBodyLimit = 2 * 1024 * 1024;

/** The client went away before its body was complete; there is no one left to answer. */
export class RequestAbortedError extends HttpError {
  override name = 'RequestAbortedError';
  constructor() {
    super(400, 'The request was aborted before its body was complete');
  }
}

interface BodyOptions {
  /** Most bytes accepted; default defaultBodyLimit. */
  limit?: number;
}

/**
 * Reads the whole body. Rejects with PayloadTooLargeError as soon as the body is known to pass
 * `limit` (by Content-Length before reading, or while it streams) and drops the rest unread or
 * unbuffered; answer it with sendError, which closes the connection. Rejects with
 * RequestAbortedError when the client disconnects mid-body.
 */
export function readBody(request: IncomingMessage, options: BodyOptions = {}): Promise<Buffer> {
  const limit = options.limit ?? defaultBodyLimit;
  return new Promise((resolve, reject) => {
    // A late 'error' after we are done must not become an uncaught exception.
    request.on('error', () => undefined);
    if (Number(request.headers['content-length']) > limit) return reject(new PayloadTooLargeError(limit));
    if (request.readableEnded) return reject(new Error('readBody: the request body was already read'));

    let chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) finish(new PayloadTooLargeError(limit));
      else chunks.push(chunk);
    };
    const onEnd = () => finish(undefined, Buffer.concat(chunks, size));
    const onAbort = () => finish(new RequestAbortedError());
    function finish(error: Error | undefined, body?: Buffer): void {
      request.off('data', onData).off('end', onEnd).off('error', onAbort).off('close', onAbort);
      chunks = [];
      if (error) {
        request.resume(); // flowing with no listener: the rest is discarded as it arrives
        reject(error);
      } else {
        resolve(body!);
      }
    }
    request.on('data', onData).once('end', onEnd).once('error', onAbort).once('close', onAbort);
  });
}

/** True for `application/json` and `application/<anything>+json`, with or without parameters. */
function isJsonContentType(value: string | undefined): boolean {
  return typeof value === 'string' && /^application\/([\w.-]+\+)?json\s*(;|$)/i.test(value.trim());
}

/**
 * Reads a JSON body: UnsupportedMediaTypeError (415 `Expected JSON`) unless the Content-Type is
 * JSON, BadRequestError when the body is not UTF-8 JSON, and readBody's errors.
 */
export async function readJson(request: IncomingMessage, options: BodyOptions = {}): Promise<unknown> {
  if (!isJsonContentType(request.headers['content-type'])) throw new UnsupportedMediaTypeError('Expected JSON');
  const body = await readBody(request, options);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new BadRequestError('The body is not valid UTF-8');
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new BadRequestError('The body is not valid JSON');
  }
}
