// Where Linear sends the person back after they approve Factory's OAuth app (issue 27.1): the route
// GET /oauth/linear/callback on the remote-access server, or, on the desktop without remote
// access, a one-time listener on 127.0.0.1 (a random port; it closes after one callback or ten
// minutes). Both hand the query to the installation (triggers/linear-oauth.ts), which checks the
// single-use `state`: that state, not a session cookie, is what authenticates the request (the
// browser arrives by Linear's redirect). The page says in words what happened, and keeps the
// code out of every Referer.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimer } from '../core/timers';
import type { CallbackHandler, CallbackResult } from '../api';
import type { Route } from './router';

/** The callback's path, on the remote-access server and on the loopback listener alike. */
export const linearCallbackPath = '/oauth/linear/callback';

const pageHeaders = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
  'X-Content-Type-Options': 'nosniff',
};

const htmlEscapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => htmlEscapes[character]!);
}

/** The page after the callback: connected (200), or why not (400), in words, and that it can be closed; phone-wide and in the system's light or dark. */
function callbackPage(result: CallbackResult): string {
  const title = result.ok ? 'Linear is connected' : 'Linear is not connected';
  return `<!doctype html><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark"><title>Factory: ${title}</title>
<body style="font:16px system-ui;margin:3em auto;max-width:32em;padding:0 1em">
<h1>${title}</h1><p>${escapeHtml(result.message)}</p><p>You can close this page.</p></body>`;
}

async function answer(response: ServerResponse, complete: CallbackHandler, url: URL): Promise<void> {
  const result = await complete(url.searchParams);
  response.writeHead(result.ok ? 200 : 400, pageHeaders).end(callbackPage(result));
}

/** The route of the remote-access server: reachable without signing in, authenticated by the state. */
export function linearCallbackRoute(complete: CallbackHandler): Route<undefined> {
  return {
    method: 'GET',
    pattern: linearCallbackPath,
    handler: (_request, response, _params, _context, url) => answer(response, complete, url),
  };
}

/**
 * A listener on 127.0.0.1 for one callback: answers the first request to the callback path and
 * closes, or closes unused after `lifetimeMs` (a state's lifetime) or `close()`. Other paths get
 * 404. Resolves with the redirect URI once it listens.
 */
export async function openLoopbackCallback(complete: CallbackHandler, lifetimeMs: number): Promise<{ redirectUri: string; close: () => void }> {
  let used = false;
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (request.method !== 'GET' || url.pathname !== linearCallbackPath || used) {
      response.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('not found');
      return;
    }
    used = true;
    answer(response, complete, url).catch(() => response.destroy()).finally(close);
  });
  let closed = false;
  const timer = setTimer(close, lifetimeMs);
  timer.unref();
  function close(): void {
    if (closed) return;
    closed = true;
    clearTimeout(timer);
    server.close();
    server.closeIdleConnections();
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return { redirectUri: `http://127.0.0.1:${(server.address() as AddressInfo).port}${linearCallbackPath}`, close };
}
