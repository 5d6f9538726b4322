// Server-sent events for `GET /api/events` (service-api "Server-sent stream", DESIGN §4 "Event
// stream"): the hub that fans each published event out to every connected stream, replays what a
// reconnecting client missed, pings idle streams and drops clients that stop reading. Framing is
// sse-format.ts.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LogLine } from '../core/api';
import { checkEventName, stringifyEvent } from './sse-format';
import { Frame, ReplayBuffer } from './sse-replay';

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
   * The current snapshot, sent as a `snapshot` event to a client whose `Last-Event-ID` can no
   * longer be served from the buffer. Synchronous: it goes out at once under the latest id, so no
   * live event has to wait behind it.
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

const pingFrame = new Frame(stringifyEvent({ comment: 'ping' }));

interface Client {
  response: ServerResponse;
  /** Set while its unsent data is over the limit: until it drains, `logs` frames are skipped. */
  behind?: { timer: ReturnType<typeof setTimeout>; skipped: Map<string, LogLine> };
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
  readonly #maxUnsentBytes: number;
  readonly #pingIntervalMs: number;
  readonly #stallMs: number;
  readonly #snapshot: (() => unknown) | undefined;
  readonly #clients = new Set<Client>();
  readonly #replay: ReplayBuffer;
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
    this.#maxUnsentBytes = maxUnsentBytes;
    this.#pingIntervalMs = pingIntervalMs;
    this.#stallMs = options.stallMs ?? 30_000;
    this.#snapshot = options.snapshot;
    this.#replay = new ReplayBuffer(bufferSize, initialId);
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
    return this.#replay.lastId;
  }

  /**
   * Sends an event to every attached stream under the next id and keeps it for resuming clients.
   * The payload is serialised once (`undefined` as `null`). Throws a RangeError for an event name
   * holding a line break, and whatever JSON.stringify throws; neither uses up an id. With nobody
   * attached for longer than the replay window, the event is neither serialised nor kept.
   */
  publish(event: string, payload: unknown): void {
    if (event === 'navigate') return;
    if (this.#idleSince !== undefined && this.#now() - this.#idleSince > this.#replayWindowMs) {
      checkEventName(event);
      // Nobody is watching, and nobody is coming back soon: the id is spent, nothing is kept, and
      // whoever comes back is resynced with a snapshot.
      this.#replay.skip();
      return;
    }
    const frame = this.#frame(this.#replay.lastId + 1, event, payload);
    this.#replay.keep(frame);
    for (const client of this.#clients) this.#write(client, frame);
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
    const client: Client = { response, detach: () => response.off('close', onClose) };
    const onClose = () => this.#remove(client);
    response.on('close', onClose);
    this.#clients.add(client);
    this.#idleSince = undefined;
    // Unref: keep-alive comments never keep the process alive by themselves.
    this.#pingTimer ??= setInterval(() => this.#ping(), this.#pingIntervalMs).unref();

    const lastEventId = lastEventIdOf(request);
    if (lastEventId === undefined) return;
    const missed = this.#replay.after(lastEventId);
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

  /**
   * Sends the current snapshot under the latest id. A snapshot that fails or cannot be serialised
   * ends the stream (the client tries again).
   */
  #resync(client: Client): void {
    if (!this.#snapshot) return;
    let frame: Frame;
    try {
      frame = this.#frame(this.#replay.lastId, 'snapshot', this.#snapshot());
    } catch {
      this.#end(client);
      return;
    }
    this.#write(client, frame);
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
