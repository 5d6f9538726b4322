// Server-sent events: the pure framing, the test reader's parsing, and the hub against a real
// node:http server on an ephemeral port with real stream clients.
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EventStreamHub, type EventStreamOptions } from '../../src/http/sse';
import { stringifyEvent } from '../../src/http/sse-format';
import { connectEventStream, EventStreamParser, type ReceivedEvent } from '../helpers/sse-client';

/** Parses a whole stream text, fed in one chunk or one character at a time. */
function parse(text: string, byCharacter = false): { events: ReceivedEvent[]; comments: string[] } {
  const events: ReceivedEvent[] = [];
  const comments: string[] = [];
  const parser = new EventStreamParser((event) => events.push(event), (comment) => comments.push(comment));
  if (byCharacter) for (const character of text) parser.feed(character);
  else parser.feed(text);
  return { events, comments };
}

interface Harness {
  hub: EventStreamHub;
  url: string;
  port: number;
  /** The server side of every stream, in the order the requests came. */
  responses: ServerResponse[];
  /** How many 'close' listeners each response had before the hub saw it. */
  closeListenersBefore: number[];
}

/** Runs `body` against a hub behind a real server on 127.0.0.1, and closes it all afterwards. */
async function withHub(options: EventStreamOptions, body: (harness: Harness) => Promise<void>): Promise<void> {
  // Events are kept from the start here (the default keeps none before a client first attaches).
  const hub = new EventStreamHub({ initialId: 0, replayWindowMs: Number.POSITIVE_INFINITY, ...options });
  const responses: ServerResponse[] = [];
  const closeListenersBefore: number[] = [];
  const server = createServer((request, response) => {
    responses.push(response);
    closeListenersBefore.push(response.listenerCount('close'));
    hub.attach(request, response);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  try {
    await body({ hub, url: `http://127.0.0.1:${port}/api/events`, port, responses, closeListenersBefore });
  } finally {
    hub.closeAll();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** Polls `predicate` every few milliseconds; rejects after `timeoutMs`. */
async function until(predicate: () => boolean, timeoutMs = 2000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function payloads(events: ReceivedEvent[]): unknown[] {
  return events.map((event) => JSON.parse(event.data));
}

// ───────────────────────────── framing ─────────────────────────────

const framing = suite('stringifyEvent');

framing('writes the event line, then the data line, then a blank line', () => {
  assert.is(stringifyEvent({ event: 'run', data: '{"id":"run_1"}' }), 'event: run\ndata: {"id":"run_1"}\n\n');
});

framing('writes the id before the event and accepts numbers and strings', () => {
  assert.is(stringifyEvent({ id: 7, event: 'logs', data: '[]' }), 'id: 7\nevent: logs\ndata: []\n\n');
  assert.is(stringifyEvent({ id: 'abc', data: 'x' }), 'id: abc\ndata: x\n\n');
  assert.is(stringifyEvent({ id: '', data: 'x' }), 'id:\ndata: x\n\n');
});

framing('splits data on LF, CRLF and lone CR into several data lines', () => {
  assert.is(stringifyEvent({ data: 'a\nb\r\nc\rd' }), 'data: a\ndata: b\ndata: c\ndata: d\n\n');
  assert.is(stringifyEvent({ data: '\r\n' }), 'data:\ndata:\n\n');
  assert.is(stringifyEvent({ data: 'a\n' }), 'data: a\ndata:\n\n');
});

framing('writes one empty data line for empty data, so the event is still dispatched', () => {
  const text = stringifyEvent({ event: 'tick', data: '' });
  assert.is(text, 'event: tick\ndata:\n\n');
  assert.equal(parse(text).events, [{ event: 'tick', data: '' }]);
});

framing('writes no data line when there is no data', () => {
  assert.is(stringifyEvent({ event: 'tick' }), 'event: tick\n\n');
  assert.is(stringifyEvent({}), '\n');
});

framing('keeps a leading space of the data, which the reader strips only once', () => {
  assert.is(stringifyEvent({ data: ' x' }), 'data:  x\n\n');
  assert.is(parse(stringifyEvent({ data: ' x' })).events[0]!.data, ' x');
});

framing('passes unicode through, and does not treat U+2028, U+2029 or NEL as line breaks', () => {
  const data = 'é 日本語 🚀 \u2028 \u2029 \u0085 \uFEFF';
  assert.is(stringifyEvent({ event: 'ünïcode', data }), `event: ünïcode\ndata: ${data}\n\n`);
  assert.equal(parse(stringifyEvent({ event: 'ünïcode', data }), true).events, [{ event: 'ünïcode', data }]);
});

framing('refuses a line break in the event name with a RangeError naming the field', () => {
  for (const event of ['a\nb', 'a\rb', 'a\r\nb', '\n']) {
    assert.throws(() => stringifyEvent({ event, data: 'x' }), (error: unknown) => error instanceof RangeError && /Event name/.test(error.message));
  }
});

framing('refuses CR, LF or NUL in an id, and a non-finite numeric id', () => {
  for (const id of ['1\n', '1\r', '\r\n', 'a\0b']) {
    assert.throws(() => stringifyEvent({ id, data: 'x' }), (error: unknown) => error instanceof RangeError && /Event id/.test(error.message));
  }
  for (const id of [Number.NaN, Number.POSITIVE_INFINITY]) {
    assert.throws(() => stringifyEvent({ id, data: 'x' }), (error: unknown) => error instanceof RangeError && /Event id/.test(error.message));
  }
});

framing('writes comments with a colon, one line each', () => {
  assert.is(stringifyEvent({ comment: 'ping' }), ': ping\n\n');
  assert.is(stringifyEvent({ comment: 'one\ntwo\r\nthree' }), ': one\n: two\n: three\n\n');
  assert.is(stringifyEvent({ comment: '' }), ':\n\n');
  assert.equal(parse(stringifyEvent({ comment: 'one\ntwo' })), { events: [], comments: ['one', 'two'] });
});

framing('writes retry as milliseconds and refuses anything but a non-negative integer', () => {
  assert.is(stringifyEvent({ retry: 3000 }), 'retry: 3000\n\n');
  for (const retry of [-1, 1.5, Number.NaN]) {
    assert.throws(() => stringifyEvent({ retry }), (error: unknown) => error instanceof RangeError && /retry/.test(error.message));
  }
});

framing('round-trips every string of up to four characters from a tricky alphabet', () => {
  const alphabet = ['a', '\r', '\n', ' ', ':', 'é'];
  let strings = [''];
  const all = [''];
  for (let length = 1; length <= 4; length += 1) {
    strings = strings.flatMap((prefix) => alphabet.map((character) => prefix + character));
    all.push(...strings);
  }
  assert.is(all.length, 1555);
  for (const data of all) {
    const text = stringifyEvent({ id: 1, event: 'e', data }) + stringifyEvent({ comment: data });
    const expected = { events: [{ id: '1', event: 'e', data: data.replace(/\r\n|\r/g, '\n') }], comments: data.split(/\r\n|\r|\n/) };
    assert.equal(parse(text), expected, JSON.stringify(data));
    assert.equal(parse(text, true), expected, JSON.stringify(data) + ' fed one character at a time');
  }
});

framing.run();

// ───────────────────────────── the test reader ─────────────────────────────

const reader = suite('EventStreamParser');

reader('joins CRLF split across two chunks, and accepts lone CR line ends', () => {
  assert.equal(parse('data: a\r\n\r\n', true).events, [{ event: 'message', data: 'a' }]);
  assert.equal(parse('data: a\r\rdata: b\r\r').events, [{ event: 'message', data: 'a' }, { event: 'message', data: 'b' }]);
});

reader('keeps the last event id for later events and drops an unfinished event at the end', () => {
  assert.equal(parse('id: 4\ndata: a\n\ndata: b\n\ndata: c').events, [{ id: '4', event: 'message', data: 'a' }, { id: '4', event: 'message', data: 'b' }]);
});

reader.run();

// ───────────────────────────── the hub ─────────────────────────────

const hub = suite('EventStreamHub');

hub('answers with the event stream headers', () => withHub({}, async ({ url }) => {
  const stream = await connectEventStream(url);
  assert.is(stream.status, 200);
  assert.is(stream.headers['content-type'], 'text/event-stream; charset=utf-8');
  assert.is(stream.headers['cache-control'], 'no-store');
  assert.is(stream.headers['connection'], 'keep-alive');
  assert.is(stream.headers['x-accel-buffering'], 'no');
  stream.close();
}));

hub('delivers every event to every client in order, with increasing ids and the same bytes', () => withHub({}, async ({ hub, url }) => {
  const streams = await Promise.all([connectEventStream(url), connectEventStream(url), connectEventStream(url)]);
  assert.is(hub.clientCount, 3);
  hub.publish('run', { id: 'run_1', status: 'running' });
  hub.publish('logs', [{ runId: 'run_1', stepId: 'build', attempt: 1, line: 'line one\nline two' }]);
  hub.publish('run-deleted', 'run_1');
  for (const stream of streams) {
    await stream.waitFor((received) => received.events.length === 3);
    assert.equal(stream.events.map((event) => [event.id, event.event]), [['1', 'run'], ['2', 'logs'], ['3', 'run-deleted']]);
    assert.equal(payloads(stream.events)[2], 'run_1');
    assert.is(stream.text, streams[0]!.text);
  }
  assert.ok(streams[0]!.text.startsWith('id: 1\nevent: run\ndata: {"id":"run_1","status":"running"}\n\n'));
  for (const stream of streams) stream.close();
}));

hub('carries unicode payloads intact across chunks', () => withHub({}, async ({ hub, url }) => {
  const stream = await connectEventStream(url);
  const line = '日本語 🚀 é\u2028'.repeat(20_000);
  hub.publish('logs', [{ line }]);
  await stream.waitFor((received) => received.events.length === 1);
  assert.equal(payloads(stream.events)[0], [{ line }]);
  stream.close();
}));

hub('never carries navigate, and spends no id on it', () => withHub({}, async ({ hub, url }) => {
  const stream = await connectEventStream(url);
  hub.publish('run', { n: 1 });
  hub.publish('navigate', '/runs/run_1');
  hub.publish('run', { n: 2 });
  await stream.waitFor((received) => received.events.length === 2);
  assert.equal(stream.events.map((event) => [event.id, event.event]), [['1', 'run'], ['2', 'run']]);
  assert.not.match(stream.text, 'navigate');
  assert.is(hub.lastId, 2);
  stream.close();
}));

hub('refuses an event name with a line break, and a payload JSON cannot hold, without spending an id', () => withHub({}, async ({ hub }) => {
  assert.throws(() => hub.publish('run\nevil', {}), (error: unknown) => error instanceof RangeError && /Event name/.test(error.message));
  const circular: Record<string, unknown> = {};
  circular.self = circular;
  assert.throws(() => hub.publish('run', circular), (error: unknown) => error instanceof TypeError);
  assert.is(hub.lastId, 0);
}));

hub('sends null for an undefined payload, so the event is still dispatched', () => withHub({}, async ({ hub, url }) => {
  const stream = await connectEventStream(url);
  hub.publish('run', undefined);
  await stream.waitFor((received) => received.events.length === 1);
  assert.is(stream.events[0]!.data, 'null');
  stream.close();
}));

hub('replays exactly the missed events to a client that comes back with Last-Event-ID, then live ones', () => withHub({ snapshot: () => ({ fresh: true }) }, async ({ hub, url }) => {
  const first = await connectEventStream(url);
  for (let n = 1; n <= 3; n += 1) hub.publish('run', { n });
  await first.waitFor((received) => received.events.length === 3);
  first.close();
  await until(() => hub.clientCount === 0, 2000, 'the first client to go');
  for (let n = 4; n <= 6; n += 1) hub.publish('run', { n });

  const again = await connectEventStream(url, { lastEventId: first.lastEventId });
  hub.publish('run', { n: 7 });
  await again.waitFor((received) => received.events.length === 4);
  assert.equal(again.events.map((event) => event.id), ['4', '5', '6', '7']);
  assert.equal(payloads(again.events), [{ n: 4 }, { n: 5 }, { n: 6 }, { n: 7 }]);
  again.close();
}));

hub('reads the id from the lastEventId query parameter when there is no header', () => withHub({}, async ({ hub, url }) => {
  for (let n = 1; n <= 5; n += 1) hub.publish('run', { n });
  const stream = await connectEventStream(`${url}?lastEventId=3`);
  await stream.waitFor((received) => received.events.length === 2);
  assert.equal(stream.events.map((event) => event.id), ['4', '5']);
  stream.close();
}));

hub('sends nothing extra to a client that missed nothing', () => withHub({ snapshot: () => ({ fresh: true }) }, async ({ hub, url }) => {
  for (let n = 1; n <= 3; n += 1) hub.publish('run', { n });
  const stream = await connectEventStream(url, { lastEventId: 3 });
  hub.publish('run', { n: 4 });
  await stream.waitFor((received) => received.events.length === 1);
  assert.equal(stream.events.map((event) => [event.id, event.event]), [['4', 'run']]);
  stream.close();
}));

hub('sends a fresh snapshot, under the latest id, to a client whose id is older than the buffer', () => withHub({ bufferSize: 3, snapshot: () => ({ fresh: true }) }, async ({ hub, url }) => {
  for (let n = 1; n <= 10; n += 1) hub.publish('run', { n });
  // Ids 8 to 10 are kept: 7 can still be served, 6 cannot.
  const served = await connectEventStream(url, { lastEventId: 7 });
  const resynced = await connectEventStream(url, { lastEventId: 6 });
  hub.publish('run', { n: 11 });
  await served.waitFor((received) => received.events.length === 4);
  assert.equal(served.events.map((event) => event.id), ['8', '9', '10', '11']);
  await resynced.waitFor((received) => received.events.length === 2);
  assert.equal(resynced.events.map((event) => [event.id, event.event]), [['10', 'snapshot'], ['11', 'run']]);
  assert.equal(payloads(resynced.events), [{ fresh: true }, { n: 11 }]);
  served.close();
  resynced.close();
}));

hub('bounds the resume buffer by bytes too: big old events give way, and their ids get a snapshot', () => withHub({ bufferSize: 1000, snapshot: () => ({ fresh: true }) }, async ({ hub, url }) => {
  const big = 'x'.repeat(100 * 1024);
  for (let n = 1; n <= 100; n += 1) hub.publish('logs', { n, big }); // about 10 MB in all, over the 8 MiB bound
  const recent = await connectEventStream(url, { lastEventId: 95 });
  const old = await connectEventStream(url, { lastEventId: 5 });
  await recent.waitFor((received) => received.events.length === 5);
  assert.equal(recent.events.map((event) => event.id), ['96', '97', '98', '99', '100']);
  await old.waitFor((received) => received.events.length === 1);
  assert.equal(old.events.map((event) => event.event), ['snapshot']);
  recent.close();
  old.close();
}));

hub('sends a snapshot for ids it never gave out: text, ids ahead of it, ids of an earlier process', async () => {
  await withHub({ initialId: 5000, snapshot: () => ({ fresh: true }) }, async ({ hub, url }) => {
    for (let n = 1; n <= 10; n += 1) hub.publish('run', { n }); // ids 5001 to 5010, all kept
    for (const lastEventId of ['abc', '-1', '5011', '99999999999999999999', '1003']) {
      const stream = await connectEventStream(url, { lastEventId });
      await stream.waitFor((received) => received.events.length === 1);
      assert.equal(stream.events.map((event) => [event.id, event.event]), [['5010', 'snapshot']], lastEventId);
      stream.close();
    }
  });
});

hub('starts its ids above any an earlier process gave out, by default', () => {
  const before = Date.now();
  const fresh = new EventStreamHub();
  assert.ok(fresh.lastId >= before * 1000 && fresh.lastId <= Date.now() * 1000);
  assert.ok(Number.isSafeInteger(fresh.lastId + 1_000_000));
});

hub('sends nothing but live events for an unservable id when it has no snapshot function', () => withHub({ bufferSize: 2 }, async ({ hub, url }) => {
  for (let n = 1; n <= 5; n += 1) hub.publish('run', { n });
  const stream = await connectEventStream(url, { lastEventId: 1 });
  hub.publish('run', { n: 6 });
  await stream.waitFor((received) => received.events.length === 1);
  assert.equal(stream.events.map((event) => event.id), ['6']);
  stream.close();
}));

hub('keeps events for a client that comes back within the replay window, and resyncs one that comes back after it', async () => {
  let clock = 0;
  await withHub({ replayWindowMs: 1000, now: () => clock, snapshot: () => ({ fresh: true }) }, async ({ hub, url }) => {
    const first = await connectEventStream(url);
    hub.publish('run', { n: 1 });
    await first.waitFor((received) => received.events.length === 1);
    first.close();
    await until(() => hub.clientCount === 0, 2000, 'the client to go');
    clock += 900;
    hub.publish('run', { n: 2 });
    const soon = await connectEventStream(url, { lastEventId: first.lastEventId });
    await soon.waitFor((received) => received.events.length === 1);
    assert.equal(payloads(soon.events), [{ n: 2 }], 'back within the window: replayed');
    soon.close();
    await until(() => hub.clientCount === 0, 2000, 'the client to go again');
    clock += 1001;
    hub.publish('run', { n: 3 });
    hub.publish('run', { n: 4 });
    const late = await connectEventStream(url, { lastEventId: soon.lastEventId });
    hub.publish('run', { n: 5 });
    await late.waitFor((received) => received.events.length === 2);
    assert.equal(late.events.map((event) => event.event), ['snapshot', 'run'], 'back after the window: a snapshot, then live events');
    assert.equal(payloads(late.events), [{ fresh: true }, { n: 5 }]);
    assert.is(Number(late.events[0]!.id), Number(soon.lastEventId) + 2, 'the ids went on meanwhile');
    late.close();
  });
});

hub('frames nothing before the first client attaches: nobody can come back to those events', async () => {
  await withHub({ replayWindowMs: 120_000, snapshot: () => ({ fresh: true }) }, async ({ hub, url }) => {
    let serialised = 0;
    const payload = { toJSON: () => (serialised += 1, { n: 1 }) };
    hub.publish('run', payload);
    hub.publish('run', payload);
    assert.is(serialised, 0, 'the payloads were not serialised');
    assert.throws(() => hub.publish('bad\nname', {}), RangeError);
    const stream = await connectEventStream(url, { lastEventId: hub.lastId - 1 });
    await stream.waitFor((received) => received.events.length === 1);
    assert.equal(stream.events.map((event) => event.event), ['snapshot']);
    hub.publish('run', payload);
    await stream.waitFor((received) => received.events.length === 2);
    assert.is(serialised, 1, 'with a client attached, events are framed again');
    stream.close();
  });
});

hub('sends a snapshot instead of a replay larger than maxUnsentBytes', () => withHub({ maxUnsentBytes: 1000, snapshot: () => ({ fresh: true }) }, async ({ hub, url }) => {
  for (let n = 1; n <= 5; n += 1) hub.publish('logs', { n, line: 'x'.repeat(400) });
  const large = await connectEventStream(url, { lastEventId: 1 });
  const small = await connectEventStream(url, { lastEventId: 4 });
  await large.waitFor((received) => received.events.length === 1);
  await small.waitFor((received) => received.events.length === 1);
  assert.equal(large.events.map((event) => [event.id, event.event]), [['5', 'snapshot']]);
  assert.equal(small.events.map((event) => [event.id, event.event]), [['5', 'logs']]);
  large.close();
  small.close();
}));

hub('the resync snapshot is taken when the client attaches, and live events follow it at once', async () => {
  let version = 0;
  await withHub({ bufferSize: 2, snapshot: () => ({ version }) }, async ({ hub, url }) => {
    for (let n = 1; n <= 5; n += 1) hub.publish('run', { n });
    version = 1;
    const stream = await connectEventStream(url, { lastEventId: 1 });
    version = 2;
    hub.publish('run', { n: 6 });
    await stream.waitFor((received) => received.events.length === 2);
    assert.equal(stream.events.map((event) => [event.id, event.event, event.data]), [['5', 'snapshot', '{"version":1}'], ['6', 'run', '{"n":6}']]);
    stream.close();
  });
});

hub('ends the stream when the snapshot fails, so the client tries again', () => withHub({ bufferSize: 1, snapshot: () => { throw new Error('disk gone'); } }, async ({ hub, url }) => {
  for (let n = 1; n <= 3; n += 1) hub.publish('run', { n });
  const stream = await connectEventStream(url, { lastEventId: 1 });
  await stream.waitFor((received) => received.ended);
  assert.is(stream.events.length, 0);
  assert.is(hub.clientCount, 0);
}));

hub('pings at the interval without an id, and clears its timer when the last client goes', async () => {
  await withHub({ pingIntervalMs: 15 }, async ({ hub, url }) => {
    assert.is(hub.pinging, false);
    const streams = [await connectEventStream(url), await connectEventStream(url)];
    for (const stream of streams) {
      await stream.waitFor((received) => received.comments.length >= 3);
      assert.ok(stream.comments.every((comment) => comment === 'ping'));
      assert.is(stream.events.length, 0);
      assert.ok(stream.text.split('\n\n').filter(Boolean).every((block) => block === ': ping'), stream.text);
    }
    assert.is(hub.pinging, true);
    streams[0]!.close();
    await until(() => hub.clientCount === 1, 2000, 'one client to go');
    const commentsBefore = streams[1]!.comments.length;
    await streams[1]!.waitFor((received) => received.comments.length >= commentsBefore + 2);
    streams[1]!.close();
    await until(() => hub.clientCount === 0, 2000, 'the last client to go');
    assert.is(hub.pinging, false, 'the timer is cleared');
  });
});

hub('drops a client whose events pile up unread past four times maxUnsentBytes, without slowing the others', () => withHub({ maxUnsentBytes: 256 * 1024 }, async ({ hub, url, port, responses }) => {
  const reading = await connectEventStream(url);
  // A raw connection that sends the request and never reads a byte of the answer.
  const stalled = connect(port, '127.0.0.1');
  stalled.on('error', () => {}); // the hub resets the connection
  await once(stalled, 'connect');
  stalled.pause();
  stalled.write('GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  await until(() => hub.clientCount === 2, 2000, 'the stalled client to attach');
  const stalledResponse = responses[1]!;

  const padding = 'x'.repeat(64 * 1024);
  let published = 0;
  while (hub.clientCount === 2 && published < 4000) {
    hub.publish('run', { index: published, padding });
    published += 1;
    await reading.waitFor((received) => received.events.length === published, 5000);
  }
  assert.is(hub.clientCount, 1, `still two clients after ${published} events`);
  assert.ok(stalledResponse.destroyed);
  assert.ok(published * padding.length > 256 * 1024);

  hub.publish('run', { index: published, padding });
  await reading.waitFor((received) => received.events.length === published + 1);
  assert.equal(payloads(reading.events).map((payload) => (payload as { index: number }).index), [...Array(published + 1).keys()]);
  reading.close();
  stalled.destroy();
}));

/** A raw stream request that reads nothing until resumed. */
async function pausedStream(port: number) {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {}); // the hub may reset the connection
  await once(socket, 'connect');
  socket.pause();
  socket.write('GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString('utf8')));
  return { socket, received: () => received };
}

function logBatch(index: number, lines = 400): { runId: string; stepId: string; attempt: number; line: string }[] {
  return Array.from({ length: lines }, (_, at) => ({ runId: 'run_1', stepId: 'flood', attempt: 1, line: `${index}:${at} ${'x'.repeat(300)}` }));
}

hub('a client that falls behind during a log flood is not dropped: it skips log events and hears how many lines it missed', () => withHub({ maxUnsentBytes: 256 * 1024, stallMs: 10_000 }, async ({ hub, url, port }) => {
  const reading = await connectEventStream(url);
  const slow = await pausedStream(port);
  await until(() => hub.clientCount === 2, 2000, 'the slow client to attach');
  for (let index = 0; index < 200; index++) {
    hub.publish('logs', logBatch(index));
    await reading.waitFor((received) => received.events.length === index + 1, 5000);
  }
  assert.is(hub.clientCount, 2, 'the slow client is still there');
  slow.socket.resume();
  await until(() => slow.received().includes('lines skipped (full log on disk)'), 5000, 'the marker of skipped lines');
  const marker = /data: (\[\{"runId":"run_1".*"skipped":(\d+)[^\n]*)/.exec(slow.received())!;
  const skipped = Number(marker[2]);
  const delivered = (slow.received().match(/"line":"\d+:\d+ /g) ?? []).length;
  assert.is(delivered + skipped, 200 * 400, 'every line is either delivered or counted as skipped');
  assert.ok(skipped > 0);
  hub.publish('logs', logBatch(200, 1));
  await until(() => slow.received().includes('"line":"200:0 '), 5000, 'live lines again after catching up');
  assert.is(reading.events.length, 201, 'the reading client got every event, unslowed');
  reading.close();
  slow.socket.destroy();
}));

hub('a client that stops reading is dropped after stallMs; the others keep receiving', () => withHub({ maxUnsentBytes: 64 * 1024, stallMs: 300 }, async ({ hub, url, port }) => {
  const reading = await connectEventStream(url);
  const stalled = await pausedStream(port);
  await until(() => hub.clientCount === 2, 2000, 'the stalled client to attach');
  // A steady flood: the kernel's socket buffers fill, then the stalled client stays behind.
  let published = 0;
  while (hub.clientCount === 2 && published < 1000) {
    hub.publish('logs', logBatch(published++));
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  assert.is(hub.clientCount, 1, 'the stalled client was dropped');
  hub.publish('run', { after: true });
  await reading.waitFor((received) => received.events.length === published + 1, 5000);
  reading.close();
  stalled.socket.destroy();
}));

hub('closeAll ends every stream and removes its listeners; clients may attach again', () => withHub({}, async ({ hub, url, responses, closeListenersBefore }) => {
  const streams = [await connectEventStream(url), await connectEventStream(url)];
  hub.publish('run', { n: 1 });
  for (const stream of streams) await stream.waitFor((received) => received.events.length === 1);
  hub.closeAll();
  assert.is(hub.clientCount, 0);
  for (const stream of streams) await stream.waitFor((received) => received.ended);
  responses.forEach((response, index) => assert.is(response.listenerCount('close'), closeListenersBefore[index]));
  hub.publish('run', { n: 2 });

  const later = await connectEventStream(url);
  hub.publish('run', { n: 3 });
  await later.waitFor((received) => received.events.length === 1);
  assert.equal(later.events.map((event) => event.id), ['3']);
  assert.equal(streams.map((stream) => stream.events.length), [1, 1]);
  later.close();
}));

hub('refuses options out of range with a RangeError', () => {
  for (const options of [{ bufferSize: -1 }, { bufferSize: 1.5 }, { maxUnsentBytes: 0 }, { pingIntervalMs: 0 }, { pingIntervalMs: Number.POSITIVE_INFINITY }, { initialId: -1 }, { replayWindowMs: -1 }, { replayWindowMs: Number.NaN }]) {
    assert.throws(() => new EventStreamHub(options), (error: unknown) => error instanceof RangeError, JSON.stringify(options));
  }
});

hub.run();
