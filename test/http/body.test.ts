import type { IncomingMessage, ServerResponse } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultBodyLimit, readBody, readJson, RequestAbortedError } from '../../src/http/body';
import { PayloadTooLargeError, sendError, sendJson } from '../../src/http/respond';
import { startHttpServer, type RunningHttpServer } from '../../src/http/server';
import { floodChunked, rawConnection, withTimeout } from '../helpers/net';
import { waitFor } from '../helpers/temp';

const body = suite('body');

let server: RunningHttpServer;
let port: number;
/** What the last request's readBody / readJson settled with. */
const outcomes: { error?: unknown; size?: number }[] = [];
/** Requests whose handler has begun (their headers were read). */
let requestsSeen = 0;

body.before(async () => {
  server = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    async handler(request: IncomingMessage, response: ServerResponse) {
      requestsSeen += 1;
      try {
        if (request.url === '/json') {
          const value = await readJson(request);
          outcomes.push({});
          return sendJson(response, 200, { value });
        }
        const data = await readBody(request, { limit: defaultBodyLimit });
        outcomes.push({ size: data.length });
        sendJson(response, 200, { size: data.length });
      } catch (error) {
        outcomes.push({ error });
        sendError(response, error);
      }
    },
  });
  port = Number(new URL(server.url).port);
});
body.after(() => server.close());
body.before.each(() => {
  outcomes.length = 0;
  requestsSeen = 0;
});


body('accepts a body of exactly the limit', async () => {
  const response = await fetch(server.url + '/raw', { method: 'POST', body: Buffer.alloc(defaultBodyLimit, 1) });
  assert.is(response.status, 200);
  assert.equal(await response.json(), { size: defaultBodyLimit });
});

body('accepts a chunked body of exactly the limit', async () => {
  const { socket, received, closed } = rawConnection(port);
  socket.write('POST /raw HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n');
  const piece = Buffer.alloc(64 * 1024, 1);
  for (let sent = 0; sent < defaultBodyLimit; sent += piece.length) socket.write(`${piece.length.toString(16)}\r\n`), socket.write(piece), socket.write('\r\n');
  socket.end('0\r\n\r\n');
  await withTimeout(closed, 'the answer');
  assert.match(received(), /^HTTP\/1\.1 200/);
  assert.equal(outcomes, [{ size: defaultBodyLimit }]);
});

body('refuses a declared Content-Length of one byte over the limit before reading, and closes the connection', async () => {
  const { socket, received, closed } = rawConnection(port);
  socket.write(`POST /raw HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: ${defaultBodyLimit + 1}\r\n\r\n`);
  await withTimeout(closed, 'the server to close the connection');
  const text = received();
  assert.match(text, /^HTTP\/1\.1 413 /);
  assert.match(text, /\r\nConnection: close\r\n/i);
  assert.ok(text.endsWith(`{"error":"Request body is larger than the limit of ${defaultBodyLimit} bytes"}`), text);
  assert.ok(outcomes[0]?.error instanceof PayloadTooLargeError);
});

body('refuses a body one byte over the limit with Content-Length, sent whole', async () => {
  const { socket, received, closed } = rawConnection(port);
  socket.write(`POST /raw HTTP/1.1\r\nHost: x\r\nContent-Length: ${defaultBodyLimit + 1}\r\n\r\n`);
  socket.write(Buffer.alloc(defaultBodyLimit + 1, 1));
  await withTimeout(closed, 'the server to close the connection');
  // The client may lose the answer to a reset while it is still sending; if it arrived, it is a 413.
  if (received()) assert.match(received(), /^HTTP\/1\.1 413 /);
  assert.ok(outcomes[0]?.error instanceof PayloadTooLargeError);
});

body('stops a 50 MB chunked upload early, without buffering it', async () => {
  const before = process.memoryUsage();
  const attempted = 50 * 1024 * 1024;
  const { sent, received } = await floodChunked(port, '/raw', attempted);
  const after = process.memoryUsage();
  assert.ok(sent < attempted / 2, `the server took ${sent} bytes before closing`);
  if (received) assert.match(received, /^HTTP\/1\.1 413 /);
  assert.ok(outcomes[0]?.error instanceof PayloadTooLargeError);
  const growth = after.rss - before.rss;
  assert.ok(growth < attempted / 2, `rss grew by ${growth} bytes`);
});

body('an upload the client abandons midway rejects without crashing the server', async () => {
  const { socket, closed } = rawConnection(port);
  socket.write('POST /raw HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nonly part of it');
  await waitFor(() => requestsSeen === 1, 5000, 'the handler to begin reading the body');
  socket.destroy();
  await closed;
  await waitFor(() => outcomes.length === 1, 5000, 'the handler to see the abort');
  assert.ok(outcomes[0]!.error instanceof RequestAbortedError);
  const response = await fetch(server.url + '/raw', { method: 'POST', body: 'fine' });
  assert.equal(await response.json(), { size: 4 });
});

body('readJson parses a JSON body', async () => {
  const response = await fetch(server.url + '/json', { method: 'POST', headers: { 'Content-Type': 'application/json; charset=utf-8' }, body: '{"a":[1,"é"]}' });
  assert.is(response.status, 200);
  assert.equal(await response.json(), { value: { a: [1, 'é'] } });
});

body('readJson answers invalid JSON with 400 and a short message', async () => {
  for (const text of ['{"a":', '', 'nope']) {
    const response = await fetch(server.url + '/json', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: text });
    assert.is(response.status, 400);
    assert.equal(await response.json(), { error: 'The body is not valid JSON' });
  }
  const invalidUtf8 = await fetch(server.url + '/json', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: Buffer.from([0x22, 0xff, 0x22]) });
  assert.is(invalidUtf8.status, 400);
});

body('readJson answers a body that is not JSON content with 415', async () => {
  const response = await fetch(server.url + '/json', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: '{}' });
  assert.is(response.status, 415);
  assert.equal(await response.json(), { error: 'Expected JSON' });
});

body.run();
