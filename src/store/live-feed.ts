// The live feed of a step's output: the newest lines since a listener last looked, bounded in
// bytes, split into lines only when taken (a flood costs a bounded amount per take).

import { newline, shown, type LogStream, type StoredLine } from './step-log-format';

/** A line of the live feed: numbered when its writer knows where the log began. */
type LiveLine = Omit<StoredLine, 'n'> & { n?: number };

/** The newest lines pushed since the last `take`, bounded in bytes; what did not fit is counted. */
export class LiveFeed {
  private chunks: { bytes: Buffer; lines: number; ts: number; stream: LogStream; first?: number }[] = [];
  private kept = 0;
  private skipped = 0;

  constructor(private readonly maxBytes: number) {}

  /** `first`: the number of its first line in the log, when the writer knows it. */
  push(bytes: Buffer, lines: number, ts: number, stream: LogStream, first?: number): void {
    this.chunks.push({ bytes, lines, ts, stream, ...(first !== undefined ? { first } : {}) });
    this.kept += bytes.length;
    while (this.kept - this.chunks[0]!.bytes.length > this.maxBytes) {
      const dropped = this.chunks.shift()!;
      this.kept -= dropped.bytes.length;
      this.skipped += dropped.lines;
    }
  }

  get pending(): boolean {
    return this.chunks.length > 0 || this.skipped > 0;
  }

  /**
   * The newest lines since the last take that fit in `budget` bytes, counting `overhead` bytes
   * more per line (what an event adds around each), oldest first, and how many older ones did not
   * fit. Only the lines kept are split: a flood costs a bounded amount per take.
   */
  take(budget = this.maxBytes, overhead = 0): { skipped: number; lines: LiveLine[] } {
    let skipped = this.skipped;
    let room = Math.min(budget, this.maxBytes);
    const kept: { text: string; ts: number; stream: LogStream; first?: number }[] = [];
    for (let index = this.chunks.length - 1; index >= 0; index--) {
      const { bytes, lines, ts, stream, first } = this.chunks[index]!;
      if (room <= 0) {
        skipped += lines;
        continue;
      }
      // Walk back over the chunk's lines (it ends with a line feed) while they fit.
      let start = bytes.length;
      let taken = 0;
      while (start > 0) {
        const previous = bytes.lastIndexOf(newline, start - 2) + 1;
        const cost = start - previous + overhead;
        if (cost > room) break;
        room -= cost;
        start = previous;
        taken++;
      }
      skipped += lines - taken;
      if (taken < lines) room = 0;
      if (start < bytes.length) kept.push({ text: bytes.toString('utf8', start, bytes.length - 1), ts, stream, ...(first !== undefined ? { first: first + lines - taken } : {}) });
    }
    this.chunks = [];
    this.kept = 0;
    this.skipped = 0;
    const result: LiveLine[] = [];
    for (let index = kept.length - 1; index >= 0; index--) {
      const { text, ts, stream, first } = kept[index]!;
      text.split('\n').forEach((line, at) => result.push({ line: shown(line), ts, stream, ...(first !== undefined ? { n: first + at } : {}) }));
    }
    return { skipped, lines: result };
  }
}
