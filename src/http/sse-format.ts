// The event stream format of the WHATWG HTML standard ("Server-sent events"): one event as the
// text a client reads back exactly, or a RangeError when a field would be misread.

/** One block of an event stream. Every field is optional; an empty object frames a lone blank line. */
interface ServerSentEvent {
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
export function checkEventName(name: string): void {
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
