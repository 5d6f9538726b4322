// Remote access (spec section B): the FactoryApi over HTTP, its events as a server-sent stream,
// the sign-in link, and the renderer's files, for a browser or a phone.
//
//   GET  /pair?t=<token>        sign in (the access token or a one-time invite): a session cookie, then 303 to
//                               /#/waiting (the renderer opens what waits for approval, else Runs)
//   POST /api/pairing-invite    signed in: a one-time sign-in link for another device → {"url", "qrSvg"}
//   POST /api/call/<method>     body: JSON array of the arguments → {"result": …}
//   GET  /api/events            server-sent events (every event but `navigate`)
//   GET  /api/log/<run>/<step>/<attempt>   the whole log of a step attempt as text (`_setup/0`: the setup log)
//   GET  /oauth/linear/callback Linear's OAuth redirect (oauth-callback.ts): authenticated by its single-use state
//   GET  /…                     the renderer (dist/ui), readable before sign-in
//
// Every request must name this server by an allowed Host (DNS rebinding); API requests must be
// signed in (Bearer token, or the session cookie from our own origin).

import { createReadStream } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { networkInterfaces } from 'node:os';
import type { FactoryApi, RemotePairing, RemoteStatus, ServerSettings } from '../core/api';
import { factoryEventNames, isMethodName, methods } from '../core/api';
import { invokeMethod, type CallbackHandler, type Doors } from '../api';
import { ConflictError, FactoryError } from '../core/errors';
import { encodeQr } from '../core/qr';
import { qrToSvg } from '../core/qr-svg';
import { hostName, isAllowedHost, isLoopbackHost, sessionCookie, type RemoteAuth } from './auth';
import { readJson } from './body';
import { ForbiddenError, NotFoundHttpError, UnauthorizedError, sendJson } from './respond';
import { createRouter, type Route } from './router';
import { ManagedServer } from './managed-server';
import { EventStreamHub } from './sse';
import { createStaticHandler } from './static';
import { linearCallbackRoute } from './oauth-callback';

const callBodyLimit = 2 * 1024 * 1024;

interface RemoteOptions {
  auth: RemoteAuth;
  /** The built renderer (dist/ui). */
  uiRoot: string;
  /** Host names allowed besides IP literals and localhost (settings.remoteAccess.allowedHosts). */
  allowedHosts: () => readonly string[];
  /** Completes a Linear app installation (GET /oauth/linear/callback). */
  linearCallback?: CallbackHandler;
}

/** What the handler serves: the API and its event stream, and where invite links point. */
interface Served {
  api: FactoryApi & Pick<Doors, 'logDownload'>;
  hub: EventStreamHub;
  /** The server's public base URL while it listens. */
  publicUrl: () => string | undefined;
}

/**
 * Where an invite link points: the origin this browser reached us by (a tunnel, the LAN address),
 * unless that is this machine only, which a phone cannot open: then the server's public URL.
 */
function inviteBase(request: IncomingMessage, publicUrl: string | undefined): string {
  const host = request.headers.host ?? '';
  const origin = request.headers.origin;
  const sameOrigin = origin === `http://${host}` || origin === `https://${host}`;
  if (origin && sameOrigin && !isLoopbackHost(hostName(host) ?? '')) return origin;
  return publicUrl ?? `http://${host}`;
}

const pairingFailedPage = `<!doctype html><meta charset="utf-8"><title>Factory</title>
<body style="font:16px system-ui;margin:3em auto;max-width:32em;padding:0 1em">
<h1>This sign-in link does not work</h1><p>It may be old: the access token changes when it is reset on the desktop,
and a link made in a browser works once, for ten minutes.
Open the sign-in link or scan the QR code shown in Factory on the desktop again.</p></body>`;

/** The request handler of the remote access server. */
function createRemoteHandler(options: RemoteOptions & Served) {
  const { api, auth, hub } = options;
  const serveStatic = createStaticHandler({ root: options.uiRoot });

  const requireAuth = (request: IncomingMessage) => {
    const result = auth.authenticate(request);
    if (!result.ok) throw new UnauthorizedError('Not signed in');
  };

  const routes: Route<undefined>[] = [
    {
      method: 'GET',
      pattern: '/pair',
      async handler(request, response, _params, _context, url) {
        const sessionId = await auth.signIn(url?.searchParams.get('t') ?? '');
        const headers = { 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' };
        if (!sessionId) {
          response.writeHead(401, { ...headers, 'Content-Type': 'text/html; charset=utf-8' }).end(pairingFailedPage);
          return;
        }
        // A phone signing in goes to what waits for it (ui/views/waiting.ts).
        response.writeHead(303, { ...headers, Location: '/#/waiting', 'Set-Cookie': sessionCookie(sessionId) }).end();
      },
    },
    {
      method: 'POST',
      pattern: '/api/pairing-invite',
      handler(request, response) {
        requireAuth(request);
        const url = `${inviteBase(request, options.publicUrl())}/pair?t=${auth.createInvite()}`;
        sendJson(response, 200, { url, qrSvg: qrToSvg(encodeQr(url)) });
      },
    },
    {
      method: 'POST',
      pattern: '/api/call/:method',
      async handler(request, response, params) {
        requireAuth(request);
        if (!isMethodName(params.method!)) throw new NotFoundHttpError(`Unknown method ${params.method}`);
        if (methods[params.method as keyof typeof methods].desktopOnly) throw new ForbiddenError(`${params.method} is only available on the desktop`);
        const args = await readJson(request, { limit: callBodyLimit });
        const result = await invokeMethod(api, params.method!, args);
        sendJson(response, 200, { result: result === undefined ? null : result });
      },
    },
    {
      method: 'GET',
      pattern: '/api/events',
      handler(request, response) {
        requireAuth(request);
        hub.attach(request, response);
      },
    },
    {
      method: 'GET',
      pattern: '/api/log/:runId/:stepId/:attempt',
      async handler(request, response, params) {
        requireAuth(request);
        const stepId = params.stepId === '_setup' ? '' : params.stepId!;
        const log = await api.logDownload(params.runId!, stepId, Number(params.attempt)).catch((error: unknown) => {
          if (error instanceof FactoryError) return undefined;
          throw error;
        });
        if (!log) throw new NotFoundHttpError('No such log');
        response.writeHead(200, {
          'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff',
          'Content-Disposition': `attachment; filename="${params.runId}-${params.stepId}-${params.attempt}.log"`,
        });
        // The file as it is, streamed: a log of any size costs a buffer, not its size.
        if ('path' in log) await pipeline(createReadStream(log.path), response);
        else response.end(log.lines.join('\n') + (log.lines.length ? '\n' : ''));
      },
    },
    ...(options.linearCallback ? [linearCallbackRoute(options.linearCallback)] : []),
  ];

  const router = createRouter<undefined>(routes, async (request, response) => {
    if (request.method === 'GET' || request.method === 'HEAD') {
      if (request.url?.startsWith('/api/')) throw new NotFoundHttpError('not found');
      return serveStatic(request, response);
    }
    throw new NotFoundHttpError('not found');
  });

  return async (request: IncomingMessage, response: ServerResponse) => {
    if (!isAllowedHost(request.headers.host, options.allowedHosts())) {
      throw new ForbiddenError('This address is not allowed: add it to the allowed hosts in Settings to reach Factory through it');
    }
    await router(request, response, undefined);
  };
}

/** A URL other devices can use: a LAN address instead of 0.0.0.0 / ::. */
function publicBaseUrl(host: string, port: number): string {
  let name = host;
  if (host === '0.0.0.0' || host === '::') {
    const lan = Object.values(networkInterfaces()).flat().find((address) => address && address.family === 'IPv4' && !address.internal);
    name = lan?.address ?? '127.0.0.1';
  }
  return `http://${name.includes(':') ? `[${name}]` : name}:${port}`;
}

/** Starts, stops and restarts the remote access server as settings change, and reports its state. */
export class RemoteAccess {
  private readonly server: ManagedServer;
  /** The event stream, from `serve` on. */
  private hub: EventStreamHub | undefined;

  constructor(private readonly options: RemoteOptions) {
    this.server = new ManagedServer({
      name: 'Remote access',
      publicUrl: (settings, boundUrl) => publicBaseUrl(settings.host, Number(new URL(boundUrl).port)),
      beforeClose: () => this.hub?.closeAll(),
    });
  }

  /**
   * Serves `api`: its methods, and every event but `navigate` on the event stream (a client that
   * comes back too late is resynced with the current snapshot). Before the first `apply`.
   */
  serve(api: FactoryApi & Pick<Doors, 'currentSnapshot' | 'logDownload'>): void {
    const hub = new EventStreamHub({ snapshot: () => api.currentSnapshot() });
    for (const name of factoryEventNames) if (name !== 'navigate') api.on(name, (payload) => hub.publish(name, payload));
    this.hub = hub;
    this.server.handleWith(createRemoteHandler({ ...this.options, api, hub, publicUrl: () => this.server.url() ?? undefined }));
  }

  /** Brings the server in line with the settings: started, stopped or restarted on a new address. */
  apply(settings: ServerSettings): Promise<void> {
    return this.server.apply(settings);
  }

  stop(): Promise<void> {
    return this.server.stop();
  }

  status(): RemoteStatus {
    const url = this.server.url();
    const error = this.server.error();
    return { enabled: this.server.enabled, running: url !== null, ...(url ? { url } : {}), ...(error ? { error } : {}) };
  }

  /** The sign-in link, or undefined while the server is not running. */
  pairingLink(): string | undefined {
    const url = this.server.url();
    return url ? `${url}/pair?t=${this.options.auth.token}` : undefined;
  }

  /**
   * For the headless server's terminal, under the QR code of the sign-in link: whether a phone can
   * open it, and how to make it so. `listenHost` is the address remote access listens on.
   */
  reachNote(listenHost: string): string {
    const link = this.pairingLink();
    if (link && !isLoopbackHost(hostName(new URL(link).host) ?? '')) return 'Anyone on your network who has this link can use Factory: share it with no one.';
    if (!isLoopbackHost(listenHost)) return 'No network address was found on this machine: the link works on this machine only.';
    return [
      `This link works on this machine only: remote access listens on ${listenHost}.`,
      'To sign in from a phone on your network, start with --remote-host 0.0.0.0. Then anyone on the network',
      'who has the link can use Factory (the link is the key: share it with no one).',
      'Through a tunnel, add its host name under Settings → Remote access → Allowed host names.',
    ].join('\n');
  }

  /** What `remotePairing` returns: the sign-in link, the token and the link as a QR code (SVG). */
  pairing(): RemotePairing {
    const url = this.pairingLink();
    const error = this.server.error();
    if (!url) throw new ConflictError(`Remote access is not running${error ? `: ${error}` : ''}; switch it on in Settings first`);
    return { url, token: this.options.auth.token, qrSvg: qrToSvg(encodeQr(url)) };
  }

  /** A new token: every device is signed out and every open event stream closes. */
  async resetToken(): Promise<void> {
    await this.options.auth.reset();
    this.hub?.closeAll();
  }
}
