// Ports and plain HTTP requests for tests.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';

/** A port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json<T = any>(): T;
}

/** One HTTP request with a full answer; never throws for an HTTP status. */
export function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: options.method ?? 'GET', headers: options.headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: response.statusCode!, headers: response.headers, text, json: () => JSON.parse(text) });
      });
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(options.body);
  });
}

/** A raw connection to `port` collecting everything the server sends, until it closes the connection. */
export function rawConnection(port: number): { socket: Socket; received: () => string; closed: Promise<void> } {
  const socket = connect(port, '127.0.0.1');
  let text = '';
  socket.on('data', (chunk) => (text += chunk.toString('latin1')));
  socket.on('error', () => undefined); // EPIPE / ECONNRESET once the server hangs up
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, received: () => text, closed };
}

/**
 * Sends a chunked POST to `path` of up to `attempted` bytes, 256 KiB a chunk, until the server
 * closes the connection; resolves once it has, with how much was sent and what came back.
 */
export async function floodChunked(port: number, path: string, attempted: number): Promise<{ sent: number; received: string }> {
  const { socket, received, closed } = rawConnection(port);
  let open = true;
  void closed.then(() => (open = false));
  socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n`);
  const piece = Buffer.alloc(256 * 1024, 7);
  const frame = Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]);
  let sent = 0;
  while (open && sent < attempted) {
    const more = socket.write(frame);
    sent += piece.length;
    if (!more) await new Promise((resolve) => { socket.once('drain', resolve); socket.once('close', resolve); });
  }
  await withTimeout(closed, 'the server to close the connection');
  return { sent, received: received() };
}

/** `promise`, or a rejection naming `what` after `ms`. */
export function withTimeout<T>(promise: Promise<T>, what: string, ms = 10_000): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`Timed out waiting for ${what}`)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
