// Turns the bytes a child process writes into text: clean lines as they arrive (LineSplitter) and
// the last bytes of its output kept for the step's result (OutputTail). Both hold bounded memory,
// however much or however strangely the child writes.

const DEFAULT_MAX_LINE_LENGTH = 16_384;

/**
 * C0 control characters except tab (U+0009), line feed (U+000A, what lines are split on) and escape
 * (U+001B, which starts the ANSI colour sequences tools print). Carriage returns are among them, so
 * `\r\n` endings and in-line progress `\r` both disappear. NUL and the rest would break terminals
 * and make log files look binary. DEL and the C1 range (U+007F to U+009F) are left alone.
 */
const CONTROL_CHARACTERS = /[\x00-\x08\x0B-\x1A\x1C-\x1F]/g;

/** The first byte of a UTF-8 sequence is never 0b10xxxxxx; those are its continuation bytes. */
const CONTINUATION_MASK = 0b1100_0000;
const CONTINUATION_BITS = 0b1000_0000;

/**
 * Splits a byte stream into lines. `push` takes chunks as they arrive, cut anywhere (even inside a
 * multi-byte character); `onLine` is called once per line, without its line ending; `end` flushes a
 * final line that has no line feed. Guarantees:
 * - UTF-8 is decoded as a stream; invalid bytes become U+FFFD, never an exception.
 * - C0 control characters other than tab and escape are removed (see CONTROL_CHARACTERS).
 * - A line longer than `maxLineLength` UTF-16 code units is delivered in consecutive pieces of at
 *   most that length (never splitting a surrogate pair) whose concatenation is the line; memory
 *   stays near `maxLineLength` plus one chunk, even for a line of gigabytes without a line feed.
 * Throws RangeError for a `maxLineLength` that is not an integer of at least 2, and Error for a
 * `push` after `end`.
 */
export class LineSplitter {
  private readonly decoder = new TextDecoder('utf-8', { fatal: false });
  /** The start of the current line: cleaned text, at most maxLineLength code units. */
  private pending = '';
  /** Pieces of the current line were already delivered, so an empty rest is not a line of its own. */
  private continued = false;
  private ended = false;

  constructor(
    private readonly onLine: (line: string) => void,
    readonly maxLineLength: number = DEFAULT_MAX_LINE_LENGTH,
  ) {
    if (!Number.isInteger(maxLineLength) || maxLineLength < 2) {
      throw new RangeError(`maxLineLength must be an integer of at least 2, got ${String(maxLineLength)}`);
    }
  }

  push(chunk: Uint8Array): void {
    if (this.ended) throw new Error('LineSplitter.push was called after end()');
    if (chunk.length > 0) this.take(this.decoder.decode(chunk, { stream: true }));
  }

  /** Delivers the last line when it has no line feed. Calling it again does nothing. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.take(this.decoder.decode());
    if (this.pending.length > 0) this.onLine(this.pending);
    this.pending = '';
  }

  private take(decoded: string): void {
    const text = this.pending + decoded.replace(CONTROL_CHARACTERS, '');
    let start = 0;
    let lineFeed = text.indexOf('\n');
    while (lineFeed !== -1) {
      start = this.deliverLongPrefix(text, start, lineFeed);
      if (lineFeed > start || !this.continued) this.onLine(text.slice(start, lineFeed));
      this.continued = false;
      start = lineFeed + 1;
      lineFeed = text.indexOf('\n', start);
    }
    // What follows the last line feed waits for more text, once cut down to at most maxLineLength.
    start = this.deliverLongPrefix(text, start, text.length);
    this.pending = start === 0 ? text : text.slice(start);
  }

  /** Delivers pieces from text[start, end) while more than maxLineLength remain; returns where the rest starts. */
  private deliverLongPrefix(text: string, start: number, end: number): number {
    while (end - start > this.maxLineLength) {
      let cut = start + this.maxLineLength;
      const last = text.charCodeAt(cut - 1);
      if (last >= 0xd800 && last <= 0xdbff) cut -= 1; // keep a surrogate pair together
      this.onLine(text.slice(start, cut));
      this.continued = true;
      start = cut;
    }
    return start;
  }
}

/**
 * Keeps the last `limit` bytes of a byte stream in one ring of at most `limit` bytes (allocated on
 * the first push), however many bytes or chunks pass through. `text()` decodes what is kept as
 * UTF-8 (invalid bytes become U+FFFD); when older bytes were dropped, a character cut in half at
 * the front is dropped too, so the text never starts with a stray replacement character. The text
 * is the raw output: control characters are not removed. Throws RangeError for a negative or
 * non-integer `limit`.
 */
export class OutputTail {
  private ring: Buffer | undefined;
  /** Where the next byte goes; when the ring is full it is also where the oldest byte is. */
  private writeIndex = 0;
  private keptBytes = 0;
  /** Every byte pushed, kept or not. */
  totalBytes = 0;

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 0) {
      throw new RangeError(`The output limit must be a whole number of bytes, got ${String(limit)}`);
    }
  }

  /** True when more than `limit` bytes were pushed, so the oldest are gone. */
  get truncated(): boolean {
    return this.totalBytes > this.limit;
  }

  push(chunk: Uint8Array): void {
    this.totalBytes += chunk.length;
    const limit = this.limit;
    if (limit === 0 || chunk.length === 0) return;
    const ring = (this.ring ??= Buffer.allocUnsafe(limit));
    if (chunk.length >= limit) {
      ring.set(chunk.subarray(chunk.length - limit));
      this.writeIndex = 0;
      this.keptBytes = limit;
      return;
    }
    const firstPart = Math.min(chunk.length, limit - this.writeIndex);
    ring.set(chunk.subarray(0, firstPart), this.writeIndex);
    if (firstPart < chunk.length) ring.set(chunk.subarray(firstPart), 0);
    this.writeIndex = (this.writeIndex + chunk.length) % limit;
    this.keptBytes = Math.min(this.keptBytes + chunk.length, limit);
  }

  /** The kept bytes in order, oldest first. */
  bytes(): Buffer {
    const ring = this.ring;
    if (!ring) return Buffer.alloc(0);
    if (this.keptBytes < this.limit) return Buffer.from(ring.subarray(0, this.keptBytes));
    return Buffer.concat([ring.subarray(this.writeIndex), ring.subarray(0, this.writeIndex)], this.limit);
  }

  text(): string {
    let bytes = this.bytes();
    if (this.truncated) {
      let skip = 0;
      while (skip < 3 && skip < bytes.length && (bytes[skip]! & CONTINUATION_MASK) === CONTINUATION_BITS) skip += 1;
      bytes = bytes.subarray(skip);
    }
    return new TextDecoder('utf-8', { fatal: false, ignoreBOM: true }).decode(bytes);
  }
}
