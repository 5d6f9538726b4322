// One node:http server with timeouts that keep slow clients from holding sockets, errors that
// never escape as a crash or a stack trace, and a close() that does not wait for open streams.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIPv6, type Socket } from 'node:net';
import { FactoryError } from '../core/errors';
import { sendError } from './respond';

export type RequestHandler = (request: IncomingMessage, response: ServerResponse) => void | Promise<void>;
type ErrorHandler = (error: unknown, request: IncomingMessage, response: ServerResponse) => void;

interface HttpServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  handler: RequestHandler;
  /** Answers an error the handler threw; default sendError. If it throws too, sendError answers. */
  onError?: ErrorHandler;
  /** Milliseconds a client has to send all request headers; default 10 s. */
  headersTimeout?: number;
  /** Milliseconds a client has to send the whole request, body included; default 30 s, never below headersTimeout (0: no limit). */
  requestTimeout?: number;
  /** Milliseconds an idle keep-alive connection stays open; default 5 s. */
  keepAliveTimeout?: number;
}

export interface RunningHttpServer {
  server: Server;
  /** `http://<host>:<port>`, the host as given (an IPv6 address in brackets). */
  url: string;
  /** Stops listening and destroys every open connection, event streams included. */
  close(): Promise<void>;
}

/** The server could not listen; `code` is Node's (EADDRINUSE, EADDRNOTAVAIL, EACCES, ...). */
export class ListenError extends FactoryError {
  override name = 'ListenError';
  readonly code: string;
  constructor(message: string, code: string) {
    super(message);
    this.code = code;
  }
}

function listenError(error: NodeJS.ErrnoException, host: string, port: number): ListenError {
  const code = error.code ?? 'UNKNOWN';
  const messages: Record<string, string> = {
    EADDRINUSE: `Port ${port} on ${host} is already in use`,
    EADDRNOTAVAIL: `Address ${host} is not available on this machine`,
    EACCES: `Not allowed to listen on port ${port} on ${host}`,
    ENOTFOUND: `Unknown host ${host}`,
  };
  return new ListenError(messages[code] ?? `Could not listen on ${host}:${port}: ${error.message}`, code);
}

/** Starts a server on `host`:`port`; rejects with ListenError when it cannot listen there. */
export async function startHttpServer(options: HttpServerOptions): Promise<RunningHttpServer> {
  const { host, port, handler, onError = (error, _request, response) => sendError(response, error) } = options;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ListenError(`Port ${port} is not a port number (0 to 65535)`, 'EINVAL');
  const headersTimeout = options.headersTimeout ?? 10_000;
  const requestTimeout = options.requestTimeout === 0 ? 0 : Math.max(options.requestTimeout ?? 30_000, headersTimeout);

  const answerError = (error: unknown, request: IncomingMessage, response: ServerResponse) => {
    try {
      onError(error, request, response);
    } catch (second) {
      sendError(response, second);
    }
  };
  const server = createServer({
    headersTimeout,
    requestTimeout,
    // How often Node looks for requests past those timeouts (its default, 30 s, would let them run long).
    connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(headersTimeout / 4))),
  }, (request, response) => {
    try {
      Promise.resolve(handler(request, response)).catch((error) => answerError(error, request, response));
    } catch (error) {
      answerError(error, request, response);
    }
  });
  server.keepAliveTimeout = options.keepAliveTimeout ?? 5_000;

  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    const onListenError = (error: NodeJS.ErrnoException) => reject(listenError(error, host, port));
    server.once('error', onListenError);
    server.listen(port, host, () => {
      server.off('error', onListenError);
      resolve();
    });
  });
  server.on('error', (error) => console.error(`HTTP server on ${host}:${port} failed:`, error));

  const address = server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  let closing: Promise<void> | undefined;
  return {
    server,
    url: `http://${isIPv6(host) ? `[${host}]` : host}:${boundPort}`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}
