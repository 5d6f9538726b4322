// Writes one attempt's log (the format in step-log-format.ts): a process's bytes as they come and
// Factory's own lines, complete lines only, one append per file per flush.

import { mkdir as mkdirWithCallback } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import type { LiveFeed } from './live-feed';
import { readBlocks, readRange } from './step-log-reader';
import { countLines, newline, record, recordBytes, type LogStream } from './step-log-format';

/** A line longer than this (in bytes) is cut: its first part ends there as a line of its own. */
const maxStoredLineBytes = 64 * 1024;
/** A block is written at most this large, so a reader never needs more at once. */
const maxBlockBytes = 1024 * 1024;
/** How long queued bytes wait for more before they are written. */
const flushDelayMs = 10;
/** Queued bytes past which a writer asks its producer to wait. */
const backpressureBytes = 8 * 1024 * 1024;
// On Node 20 a recursive mkdir through fs/promises costs several times the callback API's.
const mkdir = promisify(mkdirWithCallback);

/**
 * Appends to one attempt's log. `output` takes a process's bytes as they come (cut anywhere);
 * `line` one line of Factory's own. Complete lines are queued and written in one append per file
 * per turn of the event loop; a line without its line feed waits for the rest (cut at 64 KiB),
 * and `end` writes what is left. `output` returns a promise when the producer should wait for the
 * disk (more than 8 MiB queued). Writing after `end` reopens the files (a late note).
 */
export class StepLogWriter {
  private readonly pending = new Map<LogStream, Buffer[]>();
  /** Streams whose last line was cut at the size limit: a line feed that comes first next ends nothing. */
  private readonly cut = new Set<LogStream>();
  private queue: { bytes: Buffer[]; size: number; lines: number; ts: number; stream: LogStream }[] = [];
  private queued = 0;
  private files: Promise<{ data: FileHandle; index: FileHandle; size: number }> | undefined;
  private flushing: Promise<void> | undefined;
  private scheduled = false;
  private waiters: (() => void)[] = [];
  private failed: unknown;

  constructor(
    private readonly path: string,
    private readonly now: () => number,
    private readonly live?: LiveFeed,
    /** True once the run is deleted: nothing more is written (its folder must not come back). */
    private readonly gone: () => boolean = () => false,
    /** The end of the previous writer of the same log: its last block must land before this one's first. */
    private readonly after: Promise<unknown> = Promise.resolve(),
    /** Lines the log holds already, when known (0 for a new attempt's log): live lines are numbered then. */
    private lineCount?: number,
  ) {}

  output(chunk: Buffer, stream: 'out' | 'err'): Promise<void> | undefined {
    if (this.cut.delete(stream) && chunk[0] === newline) chunk = chunk.subarray(1);
    if (chunk.length === 0) return undefined;
    const waiting = this.pending.get(stream) ?? [];
    const last = chunk.lastIndexOf(newline);
    if (last < 0) {
      waiting.push(chunk);
      if (waiting.reduce((sum, piece) => sum + piece.length, 0) < maxStoredLineBytes) this.pending.set(stream, waiting);
      else {
        this.finishLine(stream, waiting);
        this.cut.add(stream);
      }
    } else {
      this.complete(waiting.length ? Buffer.concat([...waiting, chunk.subarray(0, last + 1)]) : chunk.subarray(0, last + 1), stream);
      if (last + 1 < chunk.length) this.pending.set(stream, [chunk.subarray(last + 1)]);
      else this.pending.delete(stream);
    }
    if (this.queued < backpressureBytes) return undefined;
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** A line without its line feed (yet) written as a line of its own. */
  private finishLine(stream: LogStream, pieces: Buffer[]): void {
    this.pending.delete(stream);
    this.complete(Buffer.concat([...pieces, Buffer.of(newline)]), stream);
  }

  /** One line (a line break in it becomes a space); `ts` defaults to now. */
  line(text: string, stream: LogStream, ts?: number): void {
    this.complete(Buffer.from(`${text.replace(/\r?\n/g, ' ')}\n`, 'utf8'), stream, ts);
  }

  /** Writes what is left (a last line without its line feed gets one) and closes the files. */
  async end(): Promise<void> {
    for (const [stream, waiting] of this.pending) this.finishLine(stream, waiting);
    await this.flush();
    const files = this.files;
    this.files = undefined;
    if (files) {
      const { data, index } = await files.catch(() => ({ data: undefined, index: undefined }));
      await Promise.all([data?.close(), index?.close()]);
    }
    if (this.failed) throw this.failed;
  }

  /** Resolves once everything queued so far is written. */
  async flush(): Promise<void> {
    while (this.queue.length > 0 || this.flushing) {
      if (!this.flushing) this.flushing = this.write().finally(() => (this.flushing = undefined));
      await this.flushing;
    }
  }

  private complete(bytes: Buffer, stream: 'out' | 'err' | 'info', ts = this.now()): void {
    if (bytes.length === 0 || this.gone()) return;
    const lines = countLines(bytes);
    const last = this.queue.at(-1);
    if (last && last.stream === stream && last.size + bytes.length <= maxBlockBytes) {
      last.bytes.push(bytes);
      last.size += bytes.length;
      last.lines += lines;
    } else {
      this.queue.push({ bytes: [bytes], size: bytes.length, lines, ts, stream });
    }
    this.live?.push(bytes, lines, ts, stream, this.lineCount === undefined ? undefined : this.lineCount + 1);
    if (this.lineCount !== undefined) this.lineCount += lines;
    this.queued += bytes.length;
    // Written once a megabyte is queued, else a little later: one append per file for many chunks.
    if (this.queued >= maxBlockBytes) void this.flush().catch(() => undefined);
    else if (!this.scheduled) {
      this.scheduled = true;
      setTimeout(() => {
        this.scheduled = false;
        void this.flush().catch(() => undefined);
      }, flushDelayMs);
    }
  }

  private openFiles() {
    this.files ??= (async () => {
      await this.after.catch(() => undefined);
      await mkdir(dirname(this.path), { recursive: true });
      const data = await open(`${this.path}.log`, 'a+', 0o600);
      const index = await open(`${this.path}.idx`, 'a+', 0o600);
      const size = (await data.stat()).size;
      if (size === 0) return { data, index, size };
      // An existing log: what a crash left behind is mended first. A torn record is cut away, and
      // bytes no record names (ended with a line feed) get a record of their own, so the next
      // block starts on a line of its own.
      const found = await readBlocks(this.path);
      const recorded = found?.recorded ?? 0;
      await index.truncate(recorded * recordBytes);
      let end = size;
      const leftover = found && found.blocks.length > recorded ? found.blocks.at(-1)! : undefined;
      if (leftover) {
        const ends = (await readRange(this.path, end - 1, 1))[0] === newline;
        if (!ends) await data.write(Buffer.of(newline));
        end += ends ? 0 : 1;
        await index.write(record({ ...leftover, bytes: end - leftover.offset }));
      }
      return { data, index, size: end };
    })();
    return this.files;
  }

  private async write(): Promise<void> {
    const blocks = this.queue;
    this.queue = [];
    const size = blocks.reduce((sum, block) => sum + block.size, 0);
    try {
      if (this.gone()) return; // the run was deleted: its folder must not come back
      const files = await this.openFiles();
      let offset = files.size;
      const records = Buffer.concat(blocks.map((block) => {
        const bytes = record({ offset, ts: block.ts, bytes: block.size, lines: block.lines, stream: block.stream });
        offset += block.size;
        return bytes;
      }));
      // The bytes first, then their records: a crash between leaves bytes no record names, which readers count anyway.
      await files.data.write(Buffer.concat(blocks.flatMap((block) => block.bytes), size));
      await files.index.write(records);
      files.size = offset;
    } catch (error) {
      this.failed ??= error;
    } finally {
      this.queued -= size;
      if (this.queued < backpressureBytes) for (const resume of this.waiters.splice(0)) resume();
    }
  }
}
