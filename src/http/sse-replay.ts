// What the event stream hub keeps of its events: each event framed once (`Frame`), and the latest
// frames for clients that come back (`ReplayBuffer`), bounded by count and by bytes.

import type { LogLine } from '../core/api';

/** One framed event. Its bytes are made when a client first needs them, once, and shared. */
export class Frame {
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

/** The most bytes of past events kept for clients that reconnect (big log batches go first). */
const maxBufferBytes = 8 * 1024 * 1024;

/** An id as a client sends it back: decimal digits only (anything else is treated as unknown). */
const eventIdPattern = /^\d{1,16}$/;

/** The latest frames by id (consecutive integers from `initialId + 1`): at most `size` and 8 MiB. */
export class ReplayBuffer {
  readonly #size: number;
  readonly #initialId: number;
  /** The frame with id n sits at index n % size. */
  readonly #frames: (Frame | undefined)[] = [];
  /** Bytes held, and the oldest id still held. */
  #bytes = 0;
  #oldest = 0;
  #lastId: number;

  constructor(size: number, initialId: number) {
    this.#size = size;
    this.#initialId = initialId;
    this.#lastId = initialId;
  }

  /** The id of the latest event (the initial id before the first). */
  get lastId(): number {
    return this.#lastId;
  }

  /** Keeps `frame`, the event with the next id; the oldest go to stay within the bounds. */
  keep(frame: Frame): void {
    const id = ++this.#lastId;
    if (this.#size === 0) return;
    const slot = id % this.#size;
    this.#bytes += frame.bytes - (this.#frames[slot]?.bytes ?? 0);
    this.#frames[slot] = frame;
    if (this.#oldest === 0 || id - this.#oldest >= this.#size) this.#oldest = Math.max(this.#oldest, id - this.#size + 1);
    while (this.#bytes > maxBufferBytes && this.#oldest < id) {
      const oldest = this.#oldest % this.#size;
      this.#bytes -= this.#frames[oldest]?.bytes ?? 0;
      this.#frames[oldest] = undefined;
      this.#oldest += 1;
    }
  }

  /** Spends the next id on an event nobody will be replayed, and forgets every kept frame. */
  skip(): void {
    const id = ++this.#lastId;
    if (this.#bytes > 0) this.#frames.fill(undefined);
    this.#bytes = 0;
    this.#oldest = id + 1;
  }

  /** The frames after `lastEventId` (as a client sent it), oldest first; undefined when they are not all kept. */
  after(lastEventId: string): Frame[] | undefined {
    if (!eventIdPattern.test(lastEventId)) return undefined;
    const seen = Number(lastEventId);
    const oldestKept = Math.max(this.#initialId + 1, this.#lastId - this.#size + 1, this.#oldest);
    if (seen > this.#lastId || seen < oldestKept - 1) return undefined;
    const frames: Frame[] = [];
    for (let id = seen + 1; id <= this.#lastId; id += 1) frames.push(this.#frames[id % this.#size]!);
    return frames;
  }
}
