// One attempt's log, as files (DESIGN §5; the format in docs/DECISIONS.md "Logs are kept as bytes"):
//   <step>.<attempt>.log   the output as it came, complete lines only: stdout, stderr and Factory's
//                          own lines, interleaved in the order they arrived
//   <step>.<attempt>.idx   one 32-byte record per block of that file: its offset and length, how
//                          many lines it holds, when it arrived and from which stream
// Lines are split only when someone reads them: a page, a search, the live feed. The writer
// costs one pass over the bytes (counting line feeds) and one append per file per flush.

import { mkdir as mkdirWithCallback } from 'node:fs';
import { open, readFile, stat, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import type { LogLine } from '../core/api';

export type LogStream = NonNullable<LogLine['stream']>;
const streams: readonly LogStream[] = ['out', 'err', 'info'];
const recordBytes = 32;
const newline = 0x0a;
/** A line longer than this (in bytes) is cut: its first part ends there as a line of its own. */
const maxStoredLineBytes = 64 * 1024;
/** A line longer than this (in characters) is shown cut, with a note; the file keeps it whole. */
export const maxShownLineLength = 16_384;
/** A block is written at most this large, so a reader never needs more at once. */
const maxBlockBytes = 1024 * 1024;
/** How long queued bytes wait for more before they are written. */
const flushDelayMs = 10;
/** Queued bytes past which a writer asks its producer to wait. */
const backpressureBytes = 8 * 1024 * 1024;
/** Control characters removed when lines are shown: C0 except tab, line feed and escape (colours). */
const controlCharacters = /[\x00-\x08\x0B-\x1A\x1C-\x1F]/g;
// On Node 20 a recursive mkdir through fs/promises costs several times the callback API's.
const mkdir = promisify(mkdirWithCallback);

export interface Block {
  offset: number;
  bytes: number;
  lines: number;
  ts: number;
  stream: LogStream;
}

/** A line read back: its number in the attempt's log (from 1), its text, time and stream. */
export interface StoredLine {
  n: number;
  line: string;
  ts: number;
  stream: LogStream;
}

function countLines(bytes: Uint8Array): number {
  let count = 0;
  for (let index = 0; index < bytes.length; index++) if (bytes[index] === newline) count++;
  return count;
}

/** Text of stored bytes as a person reads it: control characters out, a very long line cut. */
function shown(line: string): string {
  const clean = line.replace(controlCharacters, '');
  return clean.length <= maxShownLineLength ? clean : `${clean.slice(0, maxShownLineLength)} … (${clean.length - maxShownLineLength} more characters: download the log)`;
}

/** Splits one block's bytes into its lines, numbered from `first`. */
function splitBlock(bytes: Buffer, block: Pick<Block, 'ts' | 'stream'>, first: number): StoredLine[] {
  const text = bytes.toString('utf8');
  const parts = text.split('\n');
  if (parts.at(-1) === '') parts.pop();
  return parts.map((line, index) => ({ n: first + index, line: shown(line), ts: block.ts, stream: block.stream }));
}

/** A line of the live feed: numbered when its writer knows where the log began. */
export type LiveLine = Omit<StoredLine, 'n'> & { n?: number };

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

/** The blocks of a log, with the unrecorded bytes a crash left at the end as one more block; undefined when there is no such log. */
async function readBlocks(path: string): Promise<{ blocks: Block[]; total: number; recorded: number } | undefined> {
  const size = await stat(`${path}.log`).then((info) => info.size, () => undefined);
  if (size === undefined) return undefined;
  const records = await readFile(`${path}.idx`).catch(() => Buffer.alloc(0));
  const blocks: Block[] = [];
  let end = 0;
  let total = 0;
  for (let at = 0; at + recordBytes <= records.length; at += recordBytes) {
    const block: Block = {
      offset: records.readDoubleLE(at), ts: records.readDoubleLE(at + 8), bytes: records.readUInt32LE(at + 16),
      lines: records.readUInt32LE(at + 20), stream: streams[records.readUInt8(at + 24)] ?? 'out',
    };
    if (block.offset !== end || block.offset + block.bytes > size) break; // a damaged index: what follows is counted below
    blocks.push(block);
    end += block.bytes;
    total += block.lines;
  }
  const recorded = blocks.length;
  if (end < size) {
    const rest = await readRange(path, end, size - end);
    const lines = countLines(rest) + (rest.at(-1) === newline ? 0 : 1);
    blocks.push({ offset: end, bytes: size - end, lines, ts: 0, stream: 'out' });
    total += lines;
  }
  return { blocks, total, recorded };
}

/** One index record: offset, time, length, lines, stream (32 bytes, little-endian). */
function record(block: Block): Buffer {
  const bytes = Buffer.alloc(recordBytes);
  bytes.writeDoubleLE(block.offset, 0);
  bytes.writeDoubleLE(block.ts, 8);
  bytes.writeUInt32LE(block.bytes, 16);
  bytes.writeUInt32LE(block.lines, 20);
  bytes.writeUInt8(streams.indexOf(block.stream), 24);
  return bytes;
}

async function readRange(path: string, offset: number, length: number): Promise<Buffer> {
  const file = await open(`${path}.log`, 'r');
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await file.read(buffer, 0, length, offset);
    return buffer.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

export interface PageRequest {
  /** Only lines numbered below this (default: after the last). */
  before?: number;
  /** At most this many lines. */
  limit: number;
  /** At most this many bytes of lines (the earliest of the page are left out beyond it). */
  maxBytes: number;
  /** Only the lines holding this text (any letter case). */
  search?: string;
}

/**
 * A page of the log at `path` (without its extension): the last `limit` lines before `before`,
 * or with `search`, the last `limit` lines holding it; `earlier` counts the lines (or matches)
 * before the page that were left out. Undefined when the log does not exist in this format.
 * Reads only what the page needs; a search reads the file a block at a time.
 */
export async function readPage(path: string, page: PageRequest): Promise<{ lines: StoredLine[]; earlier: number; total: number } | undefined> {
  const found = await readBlocks(path);
  if (!found) return undefined;
  const { blocks, total } = found;
  const before = Math.min(page.before ?? total + 1, total + 1);
  if (page.search !== undefined) return { ...(await search(path, blocks, before, page)), total };
  const from = Math.max(1, before - page.limit);
  // The blocks holding lines [from, before): their bytes, read back from the end, at most maxBytes.
  const lines: StoredLine[] = [];
  let first = total + 1;
  let bytes = 0;
  for (let index = blocks.length - 1; index >= 0 && first > from; index--) {
    const block = blocks[index]!;
    first -= block.lines;
    if (first >= before || block.lines === 0) continue;
    const data = await readRange(path, block.offset, block.bytes);
    const inBlock = splitBlock(data, block, first).filter((line) => line.n >= from && line.n < before);
    for (let at = inBlock.length - 1; at >= 0; at--) {
      bytes += Buffer.byteLength(inBlock[at]!.line) + 1;
      if (bytes > page.maxBytes && lines.length > 0) {
        const earlier = lines.at(-1)!.n - 1;
        return { lines: lines.reverse(), earlier, total };
      }
      lines.push(inBlock[at]!);
    }
  }
  lines.reverse();
  return { lines, earlier: Math.max(0, (lines[0]?.n ?? before) - 1), total };
}

async function search(path: string, blocks: Block[], before: number, page: PageRequest): Promise<{ lines: StoredLine[]; earlier: number }> {
  const needle = new RegExp(page.search!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gi');
  const matches: StoredLine[] = [];
  let count = 0;
  let first = 1;
  for (const block of blocks) {
    if (first >= before) break;
    // One block at a time (at most 1 MiB): the event loop breathes between them. Lines are made
    // only for matches; line numbers come from counting line feeds up to each.
    const text = (await readRange(path, block.offset, block.bytes)).toString('utf8');
    let n = first;
    let counted = 0;
    for (let match = needle.exec(text); match; match = needle.exec(text)) {
      const start = text.lastIndexOf('\n', match.index) + 1;
      for (let at = text.indexOf('\n', counted); at !== -1 && at < start; at = text.indexOf('\n', at + 1)) n++, (counted = at + 1);
      if (n >= before) break;
      const end = text.indexOf('\n', match.index);
      const line = text.slice(start, end === -1 ? undefined : end);
      if (shown(line).toLowerCase().includes(page.search!.toLowerCase())) {
        count++;
        matches.push({ n, line: shown(line), ts: block.ts, stream: block.stream });
        if (matches.length > page.limit) matches.shift();
      }
      needle.lastIndex = end === -1 ? text.length : end + 1;
    }
    needle.lastIndex = 0;
    first += block.lines;
  }
  return { lines: matches, earlier: count - matches.length };
}

/** The path of the raw log (for a download), or undefined when the log is not in this format. */
export async function rawLogPath(path: string): Promise<string | undefined> {
  return stat(`${path}.log`).then(() => `${path}.log`, () => undefined);
}
