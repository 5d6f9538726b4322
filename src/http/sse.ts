// Server-sent events for `GET /api/events` (service-api "Server-sent stream", DESIGN §4 "Event
// stream"): a pure framing function, and the hub that fans each published event out to every
// connected stream, replays what a reconnecting client missed, pings idle streams and drops
// clients that stop reading. Framing follows the WHATWG HTML "event stream" format.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LogLine } from '../core/api';

/** One block of an event stream. Every field is optional; an empty object frames a lone blank line. */
export interface ServerSentEvent {
  /** The event's id; the client sends the last one it saw back as `Last-Event-ID` when it reconnects. */
  id?: string | number;
  /** The event type; the client's default is `message`. */
  event?: string;
  /** The payload; each line becomes its own `data:` line, which the client joins again with `\n`. */
  data?: string;
  /** Text the client ignores (`: ping` keeps idle connections open); each line becomes its own comment line. */
  comment?: string;
  /** How long the client waits before reconnecting, in milliseconds. */
  retry?: number;
}

/** The three line breaks of the event stream format (CRLF, lone CR, lone LF). */
const lineBreak = /\r\n|\r|\n/;
/** What the client would misread inside a single-line field: a line break ends the field early. */
const lineBreakCharacter = /[\r\n]/;
/** An `id:` holding NUL is ignored by the client, so it is refused here. */
const lineBreakOrNull = /[\r\n\0]/;

/** `name: value`, or `name:` alone for an empty value (the client strips one space after the colon). */
function fieldLine(name: string, value: string): string {
  return value === '' ? `${name}:` : `${name}: ${value}`;
}

/** Throws a RangeError for an event name the client would misread: one holding CR or LF. */
function checkEventName(name: string): void {
  if (lineBreakCharacter.test(name)) throw new RangeError(`Event name must not contain CR or LF, got ${JSON.stringify(name)}`);
}

/**
 * Frames one event: comment lines, `retry:`, `id:`, `event:`, then one `data:` line per line of
 * `data`, ending with a blank line. `data: ''` still writes one empty `data:` line, so the client
 * dispatches an event with empty data. Throws a RangeError naming the field when `event` holds a
 * CR or LF, `id` a CR, LF or NUL, or `retry` is not a non-negative integer: the client would
 * otherwise read a different event than the one meant.
 */
export function stringifyEvent(message: ServerSentEvent): string {
  const lines: string[] = [];
  if (message.comment !== undefined) {
    for (const line of message.comment.split(lineBreak)) lines.push(fieldLine('', line));
  }
  if (message.retry !== undefined) {
    if (!Number.isSafeInteger(message.retry) || message.retry < 0) {
      throw new RangeError(`Event retry must be a non-negative integer of milliseconds, got ${String(message.retry)}`);
    }
    lines.push(fieldLine('retry', String(message.retry)));
  }
  if (message.id !== undefined) {
    if (typeof message.id === 'number' && !Number.isFinite(message.id)) {
      throw new RangeError(`Event id must be a finite number, got ${String(message.id)}`);
    }
    const id = String(message.id);
    if (lineBreakOrNull.test(id)) throw new RangeError(`Event id must not contain CR, LF or NUL, got ${JSON.stringify(id)}`);
    lines.push(fieldLine('id', id));
  }
  if (message.event !== undefined) {
    checkEventName(message.event);
    lines.push(fieldLine('event', message.event));
  }
  if (message.data !== undefined) {
    // JSON has no raw line breaks: the usual payload is one line, kept without splitting.
    if (lineBreakCharacter.test(message.data)) for (const line of message.data.split(lineBreak)) lines.push(fieldLine('data', line));
    else lines.push(fieldLine('data', message.data));
  }
  return lines.length === 0 ? '\n' : lines.join('\n') + '\n\n';
}

export interface EventStreamOptions {
  /** How many of the latest events are kept for clients that reconnect (default 1000; 0 keeps none). */
  bufferSize?: number;
  /**
   * How much unsent data a client may have waiting in this process before it is dropped (default
   * 1 MiB), on top of the largest single event framed so far, so that one big event (a snapshot of
   * many runs) never drops a healthy client by itself.
   */
  maxUnsentBytes?: number;
  /** Milliseconds between `: ping` comments (default 20000). */
  pingIntervalMs?: number;
  /**
   * How long a client that fell behind may go without reading before it is dropped (default
   * 30000). While behind, `logs` events are not queued for it: when it catches up it gets one
   * `logs` event of marker lines saying how many lines it missed per step (the log is on disk).
   */
  stallMs?: number;
  /**
   * A fresh snapshot, sent as a `snapshot` event to a client whose `Last-Event-ID` can no longer be
   * served from the buffer. May return a promise; live events for that client wait behind it.
   */
  snapshot?: () => unknown;
  /**
   * The id before the first event. The default, `Date.now() * 1000`, starts every process above
   * any id an earlier process handed out, so a client that comes back after a restart is resynced
   * with a snapshot instead of being replayed this process's events under the old ids.
   */
  initialId?: number;
  /**
   * How long events are still kept for a client that may come back, once the last one has gone:
   * default two minutes. Past it, and before the first client attaches (nobody can come back
   * then: a client of an earlier process is resynced anyway), nothing is framed or kept, so a
   * Factory nobody watches remotely spends nothing on its events; a client returning later is
   * resynced with a snapshot. `Infinity` keeps events from the start.
   */
  replayWindowMs?: number;
  /** The clock for the replay window (milliseconds); tests move it by hand. */
  now?: () => number;
}

/** The headers of the stream: no caching, and no buffering by a proxy in front of us. */
const streamHeaders = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-store',
  'Connection': 'keep-alive',
  'X-Accel-Buffering': 'no',
};

/** The most bytes of past events kept for clients that reconnect (big log batches go first). */
const maxBufferBytes = 8 * 1024 * 1024;

/** One framed event. Its bytes are made when a client first needs them, once, and shared. */
class Frame {
  #text: string | undefined;
  #encoded: Buffer | undefined;
  /** Its length in UTF-8 bytes. */
  readonly bytes: number;

  /** `logs`: the lines it carries, so a client that skips it can be told how many it missed. */
  constructor(text: string, readonly logs?: readonly LogLine[]) {
    this.#text = text;
    this.bytes = Buffer.byteLength(text, 'utf8');
  }

  get encoded(): Buffer {
    if (!this.#encoded) {
      this.#encoded = Buffer.from(this.#text!, 'utf8');
      this.#text = undefined;
    }
    return this.#encoded;
  }
}

const pingFrame = new Frame(stringifyEvent({ comment: 'ping' }));

/** An id as a client sends it back: decimal digits only (anything else is treated as unknown). */
const eventIdPattern = /^\d{1,16}$/;

interface Client {
  response: ServerResponse;
  /** Set while its unsent data is over the limit: until it drains, `logs` frames are skipped. */
  behind?: { timer: ReturnType<typeof setTimeout>; skipped: Map<string, LogLine> };
  /** Frames held back while an asynchronous resync snapshot is being made, and their size. */
  held?: Frame[];
  heldBytes: number;
  /** Removes the listeners the hub added. */
  detach(): void;
}

/**
 * The fan-out behind `GET /api/events`. `publish` frames an event once and writes the same bytes to
 * every attached stream; it never waits for any client. Every event frame carries an `id:` (a
 * monotonic integer); pings carry none. `navigate` is desktop-only and never carried: publishing
 * it does nothing (so a door may forward every FactoryEvents name unfiltered).
 */
export class EventStreamHub {
  readonly #bufferSize: number;
  readonly #maxUnsentBytes: number;
  readonly #pingIntervalMs: number;
  readonly #stallMs: number;
  readonly #snapshot: (() => unknown) | undefined;
  readonly #initialId: number;
  readonly #clients = new Set<Client>();
  /** The latest #bufferSize frames: the frame with id n sits at index n % #bufferSize. */
  readonly #frames: (Frame | undefined)[] = [];
  /** Bytes held in #frames, and the oldest id still held: the buffer is bounded by bytes too. */
  #bufferedBytes = 0;
  #oldestBuffered = 0;
  #lastId: number;
  #largestFrame = 0;
  #pingTimer: ReturnType<typeof setInterval> | undefined;
  readonly #replayWindowMs: number;
  readonly #now: () => number;
  /** When the last client left (-Infinity before any came); undefined while some are attached. */
  #idleSince: number | undefined;

  /** Throws a RangeError for a negative or fractional buffer size, or a non-positive byte limit or interval. */
  constructor(options: EventStreamOptions = {}) {
    const { bufferSize = 1000, maxUnsentBytes = 1024 * 1024, pingIntervalMs = 20_000 } = options;
    if (!Number.isSafeInteger(bufferSize) || bufferSize < 0) throw new RangeError(`bufferSize must be a non-negative integer, got ${bufferSize}`);
    if (!(maxUnsentBytes > 0)) throw new RangeError(`maxUnsentBytes must be positive, got ${maxUnsentBytes}`);
    if (!(pingIntervalMs > 0) || !Number.isFinite(pingIntervalMs)) throw new RangeError(`pingIntervalMs must be a positive number, got ${pingIntervalMs}`);
    const initialId = options.initialId ?? Date.now() * 1000;
    if (!Number.isSafeInteger(initialId) || initialId < 0) throw new RangeError(`initialId must be a non-negative integer, got ${initialId}`);
    this.#bufferSize = bufferSize;
    this.#maxUnsentBytes = maxUnsentBytes;
    this.#pingIntervalMs = pingIntervalMs;
    this.#stallMs = options.stallMs ?? 30_000;
    this.#snapshot = options.snapshot;
    this.#initialId = initialId;
    this.#lastId = initialId;
    const { replayWindowMs = 120_000, now = () => performance.now() } = options;
    if (!(replayWindowMs >= 0)) throw new RangeError(`replayWindowMs must be a non-negative number, got ${replayWindowMs}`);
    this.#replayWindowMs = replayWindowMs;
    this.#now = now;
    this.#idleSince = -Infinity;
  }

  /** How many streams are attached. */
  get clientCount(): number {
    return this.#clients.size;
  }

  /** True while the keep-alive timer runs (only while some client is attached). */
  get pinging(): boolean {
    return this.#pingTimer !== undefined;
  }

  /** The id of the latest event published (the initial id before the first). */
  get lastId(): number {
    return this.#lastId;
  }

  /**
   * Sends an event to every attached stream under the next id and keeps it for resuming clients.
   * The payload is serialised once (`undefined` as `null`). Throws a RangeError for an event name
   * holding a line break, and whatever JSON.stringify throws; neither uses up an id. With nobody
   * attached for longer than the replay window, the event is neither serialised nor kept.
   */
  publish(event: string, payload: unknown): void {
    if (event === 'navigate') return;
    const id = this.#lastId + 1;
    if (this.#idleSince !== undefined && this.#now() - this.#idleSince > this.#replayWindowMs) {
      checkEventName(event);
      // Nobody is watching, and nobody is coming back soon: the id is spent, nothing is kept, and
      // whoever comes back is resynced with a snapshot.
      this.#lastId = id;
      this.#forgetFrames(id);
      return;
    }
    const frame = this.#frame(id, event, payload);
    this.#lastId = id;
    if (this.#bufferSize > 0) this.#keep(id, frame);
    for (const client of this.#clients) this.#write(client, frame);
  }

  /** Forgets every kept frame: ids up to `lastId` can no longer be replayed. */
  #forgetFrames(lastId: number): void {
    if (this.#bufferedBytes > 0) this.#frames.fill(undefined);
    this.#bufferedBytes = 0;
    this.#oldestBuffered = lastId + 1;
  }

  /** Keeps a frame for resuming clients: at most bufferSize frames and maxBufferBytes bytes. */
  #keep(id: number, frame: Frame): void {
    const slot = id % this.#bufferSize;
    this.#bufferedBytes += frame.bytes - (this.#frames[slot]?.bytes ?? 0);
    this.#frames[slot] = frame;
    if (this.#oldestBuffered === 0 || id - this.#oldestBuffered >= this.#bufferSize) this.#oldestBuffered = Math.max(this.#oldestBuffered, id - this.#bufferSize + 1);
    while (this.#bufferedBytes > maxBufferBytes && this.#oldestBuffered < id) {
      const oldest = this.#oldestBuffered % this.#bufferSize;
      this.#bufferedBytes -= this.#frames[oldest]?.bytes ?? 0;
      this.#frames[oldest] = undefined;
      this.#oldestBuffered += 1;
    }
  }

  /**
   * Turns a request into an event stream: writes and flushes the headers, then either replays what
   * the client missed since its `Last-Event-ID` header (or `?lastEventId=` query), or, when that
   * id is no longer in the buffer, is unknown, or comes from another process, sends a fresh
   * `snapshot` (when the option is given); then live events. A replay larger than maxUnsentBytes
   * is replaced by a snapshot too. The stream is detached when the response closes.
   */
  attach(request: IncomingMessage, response: ServerResponse): void {
    response.writeHead(200, streamHeaders);
    response.flushHeaders();
    if (response.destroyed || response.writableEnded || !response.socket || response.socket.destroyed) return;

    // Only the response's 'close' is watched: it comes when the connection goes and after end().
    // The request's 'close' may come as soon as its (empty) body has been read.
    const client: Client = { response, heldBytes: 0, detach: () => response.off('close', onClose) };
    const onClose = () => this.#remove(client);
    response.on('close', onClose);
    this.#clients.add(client);
    this.#idleSince = undefined;
    // Unref: keep-alive comments never keep the process alive by themselves.
    this.#pingTimer ??= setInterval(() => this.#ping(), this.#pingIntervalMs).unref();

    const lastEventId = lastEventIdOf(request);
    if (lastEventId === undefined) return;
    const missed = this.#framesAfter(lastEventId);
    const missedBytes = missed?.reduce((sum, frame) => sum + frame.bytes, 0) ?? 0;
    if (missed && (missedBytes <= this.#maxUnsentBytes || !this.#snapshot)) {
      for (const frame of missed) this.#write(client, frame);
    } else {
      this.#resync(client);
    }
  }

  /** Ends every stream (remote token reset, shutdown). Clients may attach again afterwards. */
  closeAll(): void {
    for (const client of this.#clients) {
      this.#remove(client);
      client.response.end();
    }
  }

  #frame(id: number, event: string, payload: unknown): Frame {
    const logs = event === 'logs' && Array.isArray(payload) ? (payload as LogLine[]) : undefined;
    const frame = new Frame(stringifyEvent({ id, event, data: JSON.stringify(payload) ?? 'null' }), logs);
    if (frame.bytes > this.#largestFrame) this.#largestFrame = frame.bytes;
    return frame;
  }

  /** The kept frames after `lastEventId`, oldest first; undefined when the buffer cannot tell. */
  #framesAfter(lastEventId: string): Frame[] | undefined {
    if (!eventIdPattern.test(lastEventId)) return undefined;
    const seen = Number(lastEventId);
    const oldestKept = Math.max(this.#initialId + 1, this.#lastId - this.#bufferSize + 1, this.#oldestBuffered);
    if (seen > this.#lastId || seen < oldestKept - 1) return undefined;
    const frames: Frame[] = [];
    for (let id = seen + 1; id <= this.#lastId; id += 1) frames.push(this.#frames[id % this.#bufferSize]!);
    return frames;
  }

  /** Sends a fresh snapshot under the latest id; live events wait behind an asynchronous one. */
  #resync(client: Client): void {
    if (!this.#snapshot) return;
    const id = this.#lastId;
    let snapshot: unknown;
    try {
      snapshot = this.#snapshot();
    } catch {
      this.#end(client);
      return;
    }
    if (!isPromiseLike(snapshot)) {
      this.#sendSnapshot(client, id, snapshot);
      return;
    }
    client.held = [];
    snapshot.then(
      (value) => {
        if (!this.#clients.has(client)) return;
        const held = client.held ?? [];
        client.held = undefined;
        client.heldBytes = 0;
        if (this.#sendSnapshot(client, id, value)) for (const frame of held) this.#write(client, frame);
      },
      () => this.#end(client),
    );
  }

  /** Writes the snapshot frame; a snapshot that cannot be serialised ends the stream (the client retries). */
  #sendSnapshot(client: Client, id: number, snapshot: unknown): boolean {
    let frame: Frame;
    try {
      frame = this.#frame(id, 'snapshot', snapshot);
    } catch {
      this.#end(client);
      return false;
    }
    this.#write(client, frame);
    return this.#clients.has(client);
  }

  #ping(): void {
    for (const client of this.#clients) this.#write(client, pingFrame);
  }

  /**
   * Writes without waiting. A client whose unsent data passes the limit falls behind: its `logs`
   * frames are skipped (counted) until it drains; one that does not drain within stallMs, or whose
   * other events pile up past four times the limit, is dropped. Nobody else waits for it.
   */
  #write(client: Client, frame: Frame): void {
    const limit = this.#maxUnsentBytes + this.#largestFrame;
    if (client.held) {
      client.held.push(frame);
      client.heldBytes += frame.bytes;
      if (client.heldBytes > limit) this.#drop(client);
      return;
    }
    if (client.behind && frame.logs) {
      for (const line of frame.logs) {
        const key = `${line.runId}/${line.stepId}/${line.attempt}`;
        const marker = client.behind.skipped.get(key) ?? { runId: line.runId, stepId: line.stepId, attempt: line.attempt, line: '', stream: 'info', skipped: 0 };
        marker.skipped! += line.skipped ?? 1;
        client.behind.skipped.set(key, marker);
      }
      return;
    }
    client.response.write(frame.encoded);
    // writableLength counts what waits in this process: in the response and in the socket.
    const unsent = client.response.writableLength;
    if (unsent > 4 * limit) this.#drop(client);
    else if (unsent > limit && !client.behind) this.#fallBehind(client);
  }

  #fallBehind(client: Client): void {
    const timer = setTimeout(() => this.#drop(client), this.#stallMs);
    timer.unref();
    client.behind = { timer, skipped: new Map() };
    client.response.once('drain', () => {
      const behind = client.behind;
      if (!behind || !this.#clients.has(client)) return;
      clearTimeout(behind.timer);
      client.behind = undefined;
      if (behind.skipped.size === 0) return;
      const markers = [...behind.skipped.values()].map((marker) => ({ ...marker, line: `… ${marker.skipped!.toLocaleString('en')} lines skipped (full log on disk)` }));
      this.#write(client, new Frame(stringifyEvent({ event: 'logs', data: JSON.stringify(markers) })));
    });
  }

  /** Resets the connection, so neither side keeps the unsent data. */
  #drop(client: Client): void {
    this.#remove(client);
    const socket = client.response.socket;
    try {
      if (socket && !socket.destroyed) socket.resetAndDestroy();
    } catch {
      // Not a TCP socket (a pipe): destroying the response below closes it all the same.
    }
    client.response.destroy();
  }

  #end(client: Client): void {
    this.#remove(client);
    client.response.end();
  }

  #remove(client: Client): void {
    if (!this.#clients.delete(client)) return;
    if (client.behind) clearTimeout(client.behind.timer);
    client.detach();
    client.held = undefined;
    if (this.#clients.size > 0) return;
    this.#idleSince = this.#now();
    if (this.#pingTimer) {
      clearInterval(this.#pingTimer);
      this.#pingTimer = undefined;
    }
  }
}

/** The `Last-Event-ID` header, else the `lastEventId` query parameter; undefined when neither is given. */
function lastEventIdOf(request: IncomingMessage): string | undefined {
  const header = request.headers['last-event-id'];
  if (typeof header === 'string' && header !== '') return header;
  let query: string | null = null;
  try {
    query = new URL(request.url ?? '/', 'http://localhost').searchParams.get('lastEventId');
  } catch {
    // An unparsable request target carries no usable id.
  }
  return query === null || query === '' ? undefined : query;
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
