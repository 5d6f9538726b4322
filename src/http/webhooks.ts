// The webhook server (spec section C): a separate door, off by default, that hands each
// delivery to the trigger service and sends back what it answers.
//
//   GET  /health               {"ok": true}
//   POST /hooks/<trigger-id>   the raw body (at most 2 MB) → the receiver → its status and JSON
//   anything else              404 {"error":"not found"}
//
// No authentication here: the trigger service checks each trigger's secret or signature over the
// raw bytes and answers 401, 404 or 409 itself.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DeliveryAnswer, IncomingWebhook } from '../api';
import { errorMessage } from '../core/errors';
import { readBody } from './body';
import { NotFoundHttpError, sendJson } from './respond';
import { ManagedServer } from './managed-server';
import { decodeSegment, parseTarget } from './router';

/** Answers each delivery (the trigger service's admission); throwing is a bug, answered 500 `Internal error`. */
interface WebhookReceiver {
  receive(triggerId: string, webhook: IncomingWebhook): Promise<DeliveryAnswer>;
}

/** Webhook request bodies: about 2 MB (spec, Limits); larger ones are answered 413 and dropped. */
export const webhookBodyLimit = 2 * 1024 * 1024;

/** The receiver threw instead of answering: a bug, answered 500 `Internal error` and logged with its cause. */
class WebhookReceiverError extends Error {
  override name = 'WebhookReceiverError';
  constructor(triggerId: string, cause: unknown) {
    super(`The trigger service failed on a webhook for trigger ${triggerId}: ${errorMessage(cause)}`, { cause });
  }
}

/** One value per header name (Node already lower-cases names; repeated `set-cookie` is joined). */
function singleValueHeaders(request: IncomingMessage): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {};
  // Node's own keys, lower-cased already; never `__proto__` (Node assigns them the same way and so drops that one).
  for (const name of Object.keys(request.headers)) {
    const value = request.headers[name];
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/** The first value of each query parameter. */
function firstQueryValues(url: URL): Record<string, string> {
  const first = new Map<string, string>();
  for (const [name, value] of url.searchParams) if (!first.has(name)) first.set(name, value);
  return Object.fromEntries(first);
}

/** `/hooks/<trigger-id>`, with or without one trailing slash: the id as sent (still percent-encoded). */
const hookPath = /^\/hooks\/([^/]+)\/?$/;

/**
 * The request handler of the webhook server: two fixed routes, matched here. Errors it throws (400
 * for a malformed target, 413 for a body over the limit, 404, a receiver that threw) are meant for
 * sendError, startHttpServer's default funnel.
 */
function createWebhookHandler(receiver: WebhookReceiver): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  return async (request, response) => {
    const { path, url } = parseTarget(request.url ?? '/');
    if (request.method === 'GET' && path === '/health') return sendJson(response, 200, { ok: true });
    const encodedId = request.method === 'POST' ? hookPath.exec(path)?.[1] : undefined;
    // Spec: any other request, another method on a known path included, is 404 `not found`.
    if (encodedId === undefined) throw new NotFoundHttpError('not found');
    const triggerId = decodeSegment(encodedId);
    const body = await readBody(request, { limit: webhookBodyLimit });
    const webhook: IncomingWebhook = { body, headers: singleValueHeaders(request), query: firstQueryValues(url), receivedAt: Date.now() };
    let answer: DeliveryAnswer;
    try {
      answer = await receiver.receive(triggerId, webhook);
    } catch (error) {
      throw new WebhookReceiverError(triggerId, error);
    }
    sendJson(response, answer.status, answer.body);
  };
}

export interface WebhookServerOptions {
  /** Called when an enabled server cannot start, with error()'s text and the port; the app shows it as "Trigger errors". A throw is logged and ignored. */
  onStartFailed?: (message: string, port: number) => void;
}

/** Starts, stops and restarts the webhook server as settings change, and reports its state. */
export class WebhookServer extends ManagedServer {
  constructor(options: WebhookServerOptions = {}) {
    super({ name: 'Webhook server', ...(options.onStartFailed ? { onStartFailed: options.onStartFailed } : {}) });
  }

  /** Hands each delivery to `receiver` (the trigger service's admission); before the first `apply`. */
  serve(receiver: WebhookReceiver): this {
    this.handleWith(createWebhookHandler(receiver));
    return this;
  }
}
