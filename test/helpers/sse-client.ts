// A server-sent events reader for tests: connects with node:http and parses the stream the way a
// browser's EventSource does (WHATWG HTML "Interpreting an event stream"), keeping all it saw.

import { get, type IncomingHttpHeaders } from 'node:http';

/** One dispatched event: `id` is the last event id at the time (absent while none was set). */
export interface ReceivedEvent {
  id?: string;
  event: string;
  data: string;
}

/**
 * The event stream parser of the WHATWG spec: feed it text in chunks of any size (a CRLF may be
 * split across two); it calls onEvent for each dispatched event and onComment for each comment
 * line (without the colon and one following space). An unfinished event at the end is dropped.
 */
export class EventStreamParser {
  lastEventId = '';
  retry: number | undefined;
  #partial = '';
  #started = false;
  #skipLineFeed = false;
  #eventType = '';
  #data = '';
  #idBuffer = '';

  readonly #onEvent: (event: ReceivedEvent) => void;
  readonly #onComment: (comment: string) => void;

  constructor(onEvent: (event: ReceivedEvent) => void, onComment: (comment: string) => void = () => {}) {
    this.#onEvent = onEvent;
    this.#onComment = onComment;
  }

  feed(chunk: string): void {
    if (chunk === '') return;
    if (!this.#started) {
      this.#started = true;
      if (chunk.startsWith('\uFEFF')) chunk = chunk.slice(1);
    }
    let text = this.#partial + chunk;
    // A CR that ended the previous chunk was a line end; an LF right after it belongs to it.
    if (this.#skipLineFeed && text.startsWith('\n')) text = text.slice(1);
    this.#skipLineFeed = false;
    const lineEnd = /\r\n|\r|\n/g;
    let start = 0;
    for (let match = lineEnd.exec(text); match; match = lineEnd.exec(text)) {
      if (match[0] === '\r' && lineEnd.lastIndex === text.length) this.#skipLineFeed = true;
      this.#processLine(text.slice(start, match.index));
      start = lineEnd.lastIndex;
    }
    this.#partial = text.slice(start);
  }

  #processLine(line: string): void {
    if (line === '') return this.#dispatch();
    if (line.startsWith(':')) {
      const comment = line.slice(1);
      this.#onComment(comment.startsWith(' ') ? comment.slice(1) : comment);
      return;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.#eventType = value;
    else if (field === 'data') this.#data += value + '\n';
    else if (field === 'id' && !value.includes('\0')) this.#idBuffer = value;
    else if (field === 'retry' && /^\d+$/.test(value)) this.retry = Number(value);
  }

  #dispatch(): void {
    this.lastEventId = this.#idBuffer;
    if (this.#data === '') {
      this.#eventType = '';
      return;
    }
    const event: ReceivedEvent = { event: this.#eventType || 'message', data: this.#data.slice(0, -1) };
    if (this.lastEventId !== '') event.id = this.lastEventId;
    this.#eventType = '';
    this.#data = '';
    this.#onEvent(event);
  }
}

export interface EventStream {
  status: number;
  headers: IncomingHttpHeaders;
  events: ReceivedEvent[];
  comments: string[];
  /** Everything received, as text (for a response that is not a stream, its body). */
  text: string;
  /** The id a reconnecting EventSource would send as `Last-Event-ID`. */
  readonly lastEventId: string;
  /** True once the server ended the stream or the connection went. */
  readonly ended: boolean;
  /** Resolves once `predicate` holds; rejects after `timeoutMs` (default 2000) or when the stream ends first. */
  waitFor(predicate: (stream: EventStream) => boolean, timeoutMs?: number): Promise<void>;
  /** Stops reading (the server's data backs up), and starts again. */
  pause(): void;
  resume(): void;
  /** Closes the connection. */
  close(): void;
}

export interface ConnectOptions {
  headers?: Record<string, string>;
  /** Sent as the `Last-Event-ID` header, as an EventSource does when it reconnects. */
  lastEventId?: string | number;
  /** Called for each event as it is dispatched (before waiters are checked). */
  onEvent?: (event: ReceivedEvent) => void;
  /** False: keep no events, comments or text (for benchmarks that only count through onEvent). */
  record?: boolean;
}

interface Waiter {
  predicate: (stream: EventStream) => boolean;
  resolve(): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

/** Opens `url` as an event stream (on its own connection); resolves once the response headers arrive. */
export function connectEventStream(url: string, options: ConnectOptions = {}): Promise<EventStream> {
  const headers: Record<string, string> = { Accept: 'text/event-stream', ...options.headers };
  if (options.lastEventId !== undefined) headers['Last-Event-ID'] = String(options.lastEventId);
  const record = options.record ?? true;
  return new Promise((resolveConnect, rejectConnect) => {
    const request = get(url, { headers, agent: false });
    request.on('error', (error) => {
      if (!stream) rejectConnect(error);
      else finish();
    });
    let stream: EventStream | undefined;
    let ended = false;
    const waiters = new Set<Waiter>();

    function describe(): string {
      const names = stream!.events.slice(-5).map((event) => `${event.event}#${event.id ?? ''}`);
      return `${stream!.events.length} events (last: ${names.join(', ') || 'none'}), ${stream!.comments.length} comments`;
    }
    function check(): void {
      for (const waiter of waiters) {
        if (waiter.predicate(stream!)) {
          waiters.delete(waiter);
          clearTimeout(waiter.timer);
          waiter.resolve();
        } else if (ended) {
          waiters.delete(waiter);
          clearTimeout(waiter.timer);
          waiter.reject(new Error(`the stream ended first: ${describe()}`));
        }
      }
    }
    function finish(): void {
      if (ended) return;
      ended = true;
      check();
    }

    request.on('response', (response) => {
      response.setEncoding('utf8');
      const parser = new EventStreamParser(
        (event) => {
          options.onEvent?.(event);
          if (record) stream!.events.push(event);
        },
        (comment) => {
          if (record) stream!.comments.push(comment);
        },
      );
      stream = {
        status: response.statusCode ?? 0,
        headers: response.headers,
        events: [],
        comments: [],
        text: '',
        get lastEventId() {
          return parser.lastEventId;
        },
        get ended() {
          return ended;
        },
        waitFor(predicate, timeoutMs = 2000) {
          if (predicate(stream!)) return Promise.resolve();
          if (ended) return Promise.reject(new Error(`the stream has ended: ${describe()}`));
          return new Promise<void>((resolve, reject) => {
            const waiter: Waiter = {
              predicate,
              resolve,
              reject,
              timer: setTimeout(() => {
                waiters.delete(waiter);
                reject(new Error(`timed out after ${timeoutMs} ms: ${describe()}`));
              }, timeoutMs),
            };
            waiters.add(waiter);
          });
        },
        pause: () => response.pause(),
        resume: () => response.resume(),
        close() {
          request.destroy();
          finish();
        },
      };
      response.on('data', (chunk: string) => {
        if (record) stream!.text += chunk;
        parser.feed(chunk);
        check();
      });
      response.on('end', finish);
      response.on('close', finish);
      response.on('error', finish);
      resolveConnect(stream);
    });
  });
}
