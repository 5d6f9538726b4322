import { connect } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { NotFoundError, ValidationError } from '../../src/core/errors';
import { sendJson } from '../../src/http/respond';
import { ListenError, startHttpServer } from '../../src/http/server';

const server = suite('server');

function withTimeout<T>(promise: Promise<T>, what: string, ms = 10_000): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`Timed out waiting for ${what}`)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Runs `body` with console.error captured. */
async function capturingErrors<T>(body: () => Promise<T>): Promise<{ result: T; logged: unknown[][] }> {
  const original = console.error;
  const logged: unknown[][] = [];
  console.error = (...args: unknown[]) => void logged.push(args);
  try {
    return { result: await body(), logged };
  } finally {
    console.error = original;
  }
}

server('resolves with the bound URL', async () => {
  const running = await startHttpServer({ host: '127.0.0.1', port: 0, handler: (_request, response) => sendJson(response, 200, { ok: true }) });
  try {
    assert.match(running.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const response = await fetch(running.url + '/health');
    assert.equal(await response.json(), { ok: true });
    assert.is(response.headers.get('cache-control'), 'no-store');
    assert.is(response.headers.get('content-type'), 'application/json; charset=utf-8');
  } finally {
    await running.close();
  }
});

server('puts an IPv6 host in brackets', async () => {
  let running;
  try {
    running = await startHttpServer({ host: '::1', port: 0, handler: (_request, response) => sendJson(response, 200, {}) });
  } catch (error) {
    if (error instanceof ListenError && error.code === 'EADDRNOTAVAIL') return; // no IPv6 loopback here
    throw error;
  }
  try {
    assert.match(running.url, /^http:\/\/\[::1\]:\d+$/);
    assert.is((await fetch(running.url)).status, 200);
  } finally {
    await running.close();
  }
});

server('says so when the port is taken', async () => {
  const first = await startHttpServer({ host: '127.0.0.1', port: 0, handler: () => undefined });
  const port = Number(new URL(first.url).port);
  try {
    await startHttpServer({ host: '127.0.0.1', port, handler: () => undefined });
    assert.unreachable('the second server should not start');
  } catch (error) {
    assert.instance(error, ListenError);
    assert.is((error as Error).message, `Port ${port} on 127.0.0.1 is already in use`);
    assert.is((error as ListenError).code, 'EADDRINUSE');
  } finally {
    await first.close();
  }
});

server('says so when the address is not on this machine', async () => {
  try {
    await startHttpServer({ host: '192.0.2.1', port: 0, handler: () => undefined });
    assert.unreachable('should not listen on a TEST-NET address');
  } catch (error) {
    assert.instance(error, ListenError);
    assert.is((error as Error).message, 'Address 192.0.2.1 is not available on this machine');
  }
});

server('refuses a port out of range', async () => {
  try {
    await startHttpServer({ host: '127.0.0.1', port: 70000, handler: () => undefined });
    assert.unreachable();
  } catch (error) {
    assert.instance(error, ListenError);
    assert.match((error as Error).message, /70000/);
  }
});

server('close() ends a never-ending response and stops listening', async () => {
  let opened!: () => void;
  const streamOpen = new Promise<void>((resolve) => (opened = resolve));
  const running = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    handler(_request, response) {
      response.writeHead(200, { 'Content-Type': 'text/event-stream' });
      response.write(': ping\n\n');
      opened();
    },
  });
  const response = await fetch(running.url + '/api/events');
  const reader = response.body!.getReader();
  await reader.read();
  await streamOpen;
  const streamEnded = reader.read().then(() => 'ended', () => 'failed');
  await withTimeout(running.close(), 'close()');
  assert.ok(['ended', 'failed'].includes(await withTimeout(streamEnded, 'the stream to end')));
  assert.is(running.server.listening, false);
  await running.close(); // a second close is harmless
  await fetch(running.url).then(() => assert.unreachable('still listening'), () => undefined);
});

server('a handler that throws answers 500 Internal error and the server keeps serving', async () => {
  const running = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    handler(request, response) {
      if (request.url === '/sync') throw new TypeError('secret detail at /home/me');
      if (request.url === '/async') return Promise.reject(new Error('secret detail'));
      if (request.url === '/factory') throw new ValidationError('steps.build.command: is empty');
      if (request.url === '/missing') throw new NotFoundError('No run `run_x`');
      if (request.url === '/late') {
        response.writeHead(200);
        response.write('partial');
        throw new Error('after the headers');
      }
      sendJson(response, 200, { ok: true });
    },
  });
  try {
    const { logged } = await capturingErrors(async () => {
      for (const path of ['/sync', '/async']) {
        const response = await fetch(running.url + path);
        assert.is(response.status, 500, path);
        const text = await response.text();
        assert.is(text, '{"error":"Internal error"}');
      }
      await fetch(running.url + '/late').then((response) => response.text()).catch(() => undefined);
    });
    assert.is(logged.length, 3, 'each internal error is logged');
    assert.ok(logged.some((args) => args.some((arg) => arg instanceof TypeError)), 'with the error and its stack');

    const factory = await fetch(running.url + '/factory');
    assert.is(factory.status, 400);
    assert.equal(await factory.json(), { error: 'steps.build.command: is empty' });
    assert.is((await fetch(running.url + '/missing')).status, 400, 'a method failure is 400 (spec)');
    assert.equal(await (await fetch(running.url + '/ok')).json(), { ok: true });
  } finally {
    await running.close();
  }
});

server('an onError hook answers instead, and sendError still catches it if it throws', async () => {
  const running = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    handler(request) {
      throw new Error(request.url === '/hook-throws' ? 'twice' : 'once');
    },
    onError(error, _request, response) {
      if ((error as Error).message === 'twice') throw new Error('the hook failed');
      sendJson(response, 418, { error: 'handled' });
    },
  });
  try {
    assert.is((await fetch(running.url + '/x')).status, 418);
    const { result } = await capturingErrors(() => fetch(running.url + '/hook-throws'));
    assert.is(result.status, 500);
  } finally {
    await running.close();
  }
});

server('cuts a client that sends its headers too slowly', async () => {
  const running = await startHttpServer({ host: '127.0.0.1', port: 0, headersTimeout: 300, requestTimeout: 1000, handler: (_request, response) => sendJson(response, 200, {}) });
  try {
    const socket = connect(Number(new URL(running.url).port), '127.0.0.1');
    let received = '';
    let closed = false;
    socket.on('data', (chunk) => (received += chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => (closed = true));
    const request = `GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ${'a'.repeat(400)}\r\n\r\n`;
    let sent = 0;
    while (!closed && sent < request.length) {
      socket.write(request[sent++]!);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.ok(closed, 'the server closed the connection before the headers were complete');
    assert.ok(sent < request.length);
    if (received) assert.match(received, /^HTTP\/1\.1 408/);
    socket.destroy();
  } finally {
    await running.close();
  }
});

server.run();
