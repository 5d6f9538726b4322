// The webhook server end to end: a real server on a free port, real requests, a fake receiver.
import { createServer, type Server } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { DeliveryAnswer, IncomingWebhook } from '../../src/api';

/** What the door handed over: the trigger id and the request. */
type WebhookDelivery = IncomingWebhook & { triggerId: string };
type WebhookAnswer = DeliveryAnswer;
import { WebhookServer, webhookBodyLimit, type WebhookServerOptions } from '../../src/http/webhooks';
import { startTestFactory } from '../helpers/factory';
import { floodChunked, freePort, rawConnection, send, withTimeout } from '../helpers/net';

const webhooks = suite('webhooks');

/** What the fake receiver was handed, and what it answers next (a function: it may throw). */
const deliveries: WebhookDelivery[] = [];
let answerWith: (delivery: WebhookDelivery) => WebhookAnswer = () => ({ status: 201, body: { issue: 'K-1', created: true } });

let server: WebhookServer;
let base: string;
let port: number;

/** A webhook server that answers every delivery 202 ignored. */
function ignoringServer(options: WebhookServerOptions = {}): WebhookServer {
  return new WebhookServer(options).serve({ receive: async () => ({ status: 202, body: { ignored: true } }) });
}

webhooks.before(async () => {
  port = await freePort();
  server = new WebhookServer().serve({
    async receive(triggerId, webhook) {
      const delivery = { ...webhook, triggerId };
      deliveries.push(delivery);
      return answerWith(delivery);
    },
  });
  await server.apply({ enabled: true, host: '127.0.0.1', port });
  base = server.url()!;
});
webhooks.after(() => server.stop());
webhooks.before.each(() => {
  deliveries.length = 0;
  answerWith = () => ({ status: 201, body: { issue: 'K-1', created: true } });
});


/** The error a request to a port nobody listens on fails with. */
async function refusal(url: string): Promise<string | undefined> {
  try {
    await send(url);
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code;
  }
}

/** Runs `action` with console.error captured; returns what was logged. */
async function capturingErrors(action: () => Promise<void>): Promise<unknown[][]> {
  const logged: unknown[][] = [];
  const original = console.error;
  console.error = (...values: unknown[]) => logged.push(values);
  try {
    await action();
  } finally {
    console.error = original;
  }
  return logged;
}

const tooLarge = `{"error":"Request body is larger than the limit of ${webhookBodyLimit} bytes"}`;

webhooks('GET /health answers {"ok": true}', async () => {
  const answer = await send(`${base}/health`);
  assert.is(answer.status, 200);
  assert.equal(answer.json(), { ok: true });
  assert.match(String(answer.headers['content-type']), /^application\/json/);
});

webhooks('every other path or method is 404 not found, and the receiver is not called', async () => {
  const misses: [string, string][] = [
    ['GET', '/'], ['POST', '/'], ['POST', '/hooks'], ['POST', '/hooks/'], ['POST', '/hooks//'], ['POST', '/hooks/a/b'],
    ['GET', '/hooks/x'], ['PUT', '/hooks/x'], ['DELETE', '/hooks/x'], ['POST', '/health'], ['GET', '/health/more'], ['GET', '/api/events'],
  ];
  for (const [method, path] of misses) {
    const answer = await send(base + path, { method, body: method === 'POST' || method === 'PUT' ? '{}' : undefined });
    assert.equal([method, path, answer.status, answer.json()], [method, path, 404, { error: 'not found' }]);
  }
  assert.is(deliveries.length, 0);
});

webhooks('POST /hooks/<id> takes a trailing slash and decodes the id', async () => {
  for (const path of ['/hooks/trg_1', '/hooks/trg_1/', '/hooks/trg%5F1', '/hooks/trg_1?x=1', '/hooks/trg_1/?x=1']) {
    assert.is((await send(base + path, { method: 'POST', body: '{}' })).status, 201, path);
  }
  assert.equal(deliveries.map((delivery) => delivery.triggerId), ['trg_1', 'trg_1', 'trg_1', 'trg_1', 'trg_1']);
});

webhooks('the delivery carries the exact raw bytes, lower-cased headers and the first query values', async () => {
  const bytes = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0x7b, 0x22, 0xc3, 0x28, 0x0a, 0x0d]);
  await send(`${base}/hooks/trg_raw?token=s3cret&title=Hello%20world&token=second&empty=`, {
    method: 'POST',
    headers: { 'X-Factory-Token': 'abc', 'Content-Type': 'application/octet-stream', 'X-Hub-Signature-256': 'sha256=00' },
    body: bytes,
  });
  const [delivery] = deliveries;
  assert.ok(delivery, 'delivered');
  assert.ok(Buffer.isBuffer(delivery.body));
  assert.ok(delivery.body.equals(bytes), delivery.body.toString('hex'));
  assert.is(delivery.headers['x-factory-token'], 'abc');
  assert.is(delivery.headers['content-type'], 'application/octet-stream');
  assert.is(delivery.headers['x-hub-signature-256'], 'sha256=00');
  assert.is(delivery.headers['content-length'], String(bytes.length));
  assert.is(delivery.headers['X-Factory-Token'], undefined);
  assert.ok(Object.keys(delivery.headers).every((name) => name === name.toLowerCase()));
  assert.equal(delivery.query, { token: 's3cret', title: 'Hello world', empty: '' });
});

webhooks('a repeated header arrives as one value', async () => {
  const { socket, closed } = rawConnection(port);
  socket.end('POST /hooks/trg_1 HTTP/1.1\r\nHost: x\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nX-Tag: one\r\nX-Tag: two\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
  await withTimeout(closed, 'the answer');
  assert.is(deliveries[0]?.headers['set-cookie'], 'a=1, b=2');
  assert.is(deliveries[0]?.headers['x-tag'], 'one, two');
});

webhooks('the answer is sent with its status and JSON body as given', async () => {
  const answers: WebhookAnswer[] = [
    { status: 201, body: { issue: 'ENG-1', created: true } },
    { status: 200, body: { issue: 'ENG-1', created: false } },
    { status: 202, body: { ignored: true } },
    { status: 400, body: { error: 'The payload is not a tracker event' } },
    { status: 401, body: { error: 'invalid signature' } },
    { status: 404, body: { error: 'unknown trigger' } },
    { status: 409, body: { error: 'trigger disabled' } },
  ];
  for (const expected of answers) {
    answerWith = () => expected;
    const answer = await send(`${base}/hooks/trg_1`, { method: 'POST', body: '{"title":"x"}' });
    assert.equal({ status: answer.status, body: answer.json() }, expected);
    assert.match(String(answer.headers['content-type']), /^application\/json/);
  }
});

webhooks('a body of exactly 2 MB is delivered, with Content-Length', async () => {
  const answer = await send(`${base}/hooks/trg_big`, { method: 'POST', body: Buffer.alloc(webhookBodyLimit, 1) });
  assert.is(answer.status, 201);
  assert.is(deliveries[0]?.body.length, webhookBodyLimit);
});

webhooks('a body of exactly 2 MB is delivered, chunked', async () => {
  const { socket, received, closed } = rawConnection(port);
  socket.write('POST /hooks/trg_big HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n');
  const piece = Buffer.alloc(64 * 1024, 2);
  for (let sent = 0; sent < webhookBodyLimit; sent += piece.length) socket.write(Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]));
  socket.end('0\r\n\r\n');
  await withTimeout(closed, 'the answer');
  assert.match(received(), /^HTTP\/1\.1 201 /);
  assert.is(deliveries[0]?.body.length, webhookBodyLimit);
});

webhooks('a declared Content-Length of 2 MB + 1 is answered 413 before the body is read, and the connection closes', async () => {
  const { socket, received, closed } = rawConnection(port);
  socket.write(`POST /hooks/trg_big HTTP/1.1\r\nHost: x\r\nContent-Length: ${webhookBodyLimit + 1}\r\n\r\n`);
  await withTimeout(closed, 'the server to close the connection');
  assert.match(received(), /^HTTP\/1\.1 413 /);
  assert.match(received(), /\r\nConnection: close\r\n/i);
  assert.ok(received().endsWith(tooLarge), received());
  assert.is(deliveries.length, 0);
});

webhooks('a chunked body of 2 MB + 1 is answered 413, and the connection closes', async () => {
  const { socket, received, closed } = rawConnection(port);
  // One chunk of limit + 1 bytes, without its closing CRLF: the server has read all we sent when it answers.
  socket.write(`POST /hooks/trg_big HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${(webhookBodyLimit + 1).toString(16)}\r\n`);
  socket.write(Buffer.alloc(webhookBodyLimit + 1, 3));
  await withTimeout(closed, 'the server to close the connection');
  assert.match(received(), /^HTTP\/1\.1 413 /);
  assert.ok(received().endsWith(tooLarge), received());
  assert.is(deliveries.length, 0);
});

webhooks('a 50 MB chunked upload is cut off early, and the heap does not grow with it', async () => {
  const memory = () => { const usage = process.memoryUsage(); return usage.heapUsed + usage.arrayBuffers; };
  const before = memory();
  const attempted = 50 * 1024 * 1024;
  const { sent, received } = await floodChunked(port, '/hooks/trg_huge', attempted);
  const growth = memory() - before;
  assert.ok(sent < attempted / 2, `the server took ${sent} bytes before closing`);
  // The client may lose the answer to a reset while it is still sending; if it arrived, it is a 413.
  if (received) assert.match(received, /^HTTP\/1\.1 413 /);
  assert.ok(growth < attempted / 4, `heap and buffers grew by ${growth} bytes`);
  assert.is(deliveries.length, 0);
  assert.is((await send(`${base}/health`)).status, 200);
});

webhooks('a receiver that throws gets 500 Internal error, is logged, and the server keeps serving', async () => {
  answerWith = () => {
    throw new TypeError('secret detail at line 12');
  };
  let answer: Awaited<ReturnType<typeof send>> | undefined;
  const logged = await capturingErrors(async () => {
    answer = await send(`${base}/hooks/trg_1`, { method: 'POST', body: '{}' });
  });
  assert.is(answer!.status, 500);
  assert.equal(answer!.json(), { error: 'Internal error' });
  assert.not.match(answer!.text, /secret detail/);
  assert.ok(logged.some((values) => values.some((value) => String(value).includes('trg_1'))), 'logged with the trigger id');
  answerWith = () => ({ status: 200, body: { issue: 'K-2', created: false } });
  const next = await send(`${base}/hooks/trg_1`, { method: 'POST', body: '{}' });
  assert.equal([next.status, next.json()], [200, { issue: 'K-2', created: false }]);
});

webhooks('a taken port: apply resolves, url() is null, error() and onStartFailed name the port; a later apply starts it', async () => {
  const takenPort = await freePort();
  const blocker: Server = createServer();
  await new Promise<void>((resolve) => blocker.listen(takenPort, '127.0.0.1', resolve));
  const failures: [string, number][] = [];
  const hooks = ignoringServer({ onStartFailed: (message, failedPort) => failures.push([message, failedPort]) });
  try {
    await hooks.apply({ enabled: true, host: '127.0.0.1', port: takenPort });
    assert.is(hooks.url(), null);
    assert.is(hooks.error(), `Port ${takenPort} on 127.0.0.1 is already in use`);
    assert.equal(failures, [[`Port ${takenPort} on 127.0.0.1 is already in use`, takenPort]]);
    await new Promise<void>((resolve) => blocker.close(() => resolve()));
    await hooks.apply({ enabled: true, host: '127.0.0.1', port: takenPort });
    assert.is(hooks.url(), `http://127.0.0.1:${takenPort}`);
    assert.is(hooks.error(), undefined);
    assert.is((await send(`${hooks.url()}/health`)).status, 200);
    assert.is(failures.length, 1);
  } finally {
    blocker.close();
    await hooks.stop();
  }
});

webhooks('an onStartFailed that throws does not make apply reject', async () => {
  const takenPort = await freePort();
  const blocker: Server = createServer();
  await new Promise<void>((resolve) => blocker.listen(takenPort, '127.0.0.1', resolve));
  const hooks = ignoringServer({ onStartFailed: () => { throw new Error('inbox is down'); } });
  try {
    const logged = await capturingErrors(() => hooks.apply({ enabled: true, host: '127.0.0.1', port: takenPort }));
    assert.is(logged.length, 1);
    assert.match(hooks.error()!, String(takenPort));
  } finally {
    await new Promise<void>((resolve) => blocker.close(() => resolve()));
    await hooks.stop();
  }
});

webhooks('apply with a new port moves the server; the same settings keep it; enabled false stops it', async () => {
  const [first, second] = [await freePort(), await freePort()];
  const hooks = ignoringServer();
  try {
    assert.is(hooks.url(), null);
    await hooks.apply({ enabled: true, host: '127.0.0.1', port: first });
    assert.is(hooks.url(), `http://127.0.0.1:${first}`);
    // The same address keeps the running server: an open connection survives.
    const { socket, closed } = rawConnection(first);
    let survived = true;
    void closed.then(() => (survived = false));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    await hooks.apply({ enabled: true, host: '127.0.0.1', port: first });
    assert.ok(survived, 'the connection survived');
    socket.destroy();

    await hooks.apply({ enabled: true, host: '127.0.0.1', port: second });
    assert.is(hooks.url(), `http://127.0.0.1:${second}`);
    assert.equal((await send(`http://127.0.0.1:${second}/hooks/trg_1`, { method: 'POST', body: '{}' })).json(), { ignored: true });
    assert.is(await refusal(`http://127.0.0.1:${first}/health`), 'ECONNREFUSED');

    await hooks.apply({ enabled: false, host: '127.0.0.1', port: second });
    assert.is(hooks.url(), null);
    assert.is(hooks.error(), undefined);
    assert.is(await refusal(`http://127.0.0.1:${second}/health`), 'ECONNREFUSED');
  } finally {
    await hooks.stop();
  }
});

webhooks('applies made at once take effect in order, leaving one server', async () => {
  const [first, second] = [await freePort(), await freePort()];
  const hooks = ignoringServer();
  try {
    await Promise.all([
      hooks.apply({ enabled: true, host: '127.0.0.1', port: first }),
      hooks.apply({ enabled: true, host: '127.0.0.1', port: second }),
    ]);
    assert.is(hooks.url(), `http://127.0.0.1:${second}`);
    assert.is(await refusal(`http://127.0.0.1:${first}/health`), 'ECONNREFUSED');
    await Promise.all([hooks.apply({ enabled: true, host: '127.0.0.1', port: first }), hooks.stop()]);
    assert.is(hooks.url(), null);
    assert.is(await refusal(`http://127.0.0.1:${first}/health`), 'ECONNREFUSED');
  } finally {
    await hooks.stop();
  }
});

webhooks('a port out of range is reported, not thrown', async () => {
  const failures: number[] = [];
  const hooks = ignoringServer({ onStartFailed: (_message, failedPort) => failures.push(failedPort) });
  await hooks.apply({ enabled: true, host: '127.0.0.1', port: 70000 });
  assert.is(hooks.url(), null);
  assert.match(hooks.error()!, '70000');
  assert.equal(failures, [70000]);
});

webhooks.run();

const testEvent = suite('send test event');

/** The message `promise` rejects with (fails when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<string> {
  return promise.then(() => assert.unreachable('it resolved'), (error: Error) => error.message) as Promise<string>;
}

testEvent('a test event goes through the webhook server with the trigger\'s token and starts a run', async () => {
  const port = await freePort();
  const factory = await startTestFactory();
  try {
    const pipeline = (await factory.api.snapshot()).pipelines[0]!;
    const trigger = await factory.api.saveTrigger({ name: 'Hook', kind: 'webhook', enabled: true, pipelineId: pipeline.id });
    assert.match(await rejection(factory.api.sendTestEvent(trigger.id)), /The webhook server is off/);
    await factory.api.saveSettings({ webhookServer: { enabled: true, port } });
    assert.equal(await factory.api.sendTestEvent(trigger.id), { ok: true, status: 201 });
    const [entry] = (await factory.api.snapshot()).triggerStates[trigger.id]!.ledger;
    assert.is(entry!.source, 'webhook', 'the ledger records it as a webhook delivery');
    assert.match(entry!.decision, /^started run_/);
    const run = (await factory.api.snapshot()).runs.find((candidate) => candidate.id === entry!.runId)!;
    assert.is(run.issue!.title, 'Test event from Factory');
    await factory.api.saveTrigger({ ...trigger, enabled: false });
    assert.equal(await factory.api.sendTestEvent(trigger.id), { ok: false, status: 409, error: 'trigger disabled' }, 'the server\'s answer, as a sender gets it');
    assert.match(await rejection(factory.api.sendTestEvent('trg_missing')), /No trigger with id/);
  } finally {
    await factory.close();
  }
});

testEvent.run();
