// Reads an attempt's log back (the format in step-log-format.ts): a page of lines before a
// number, the lines holding a text, the raw file for a download. Only what a page needs is read.

import { open, readFile, stat } from 'node:fs/promises';
import { countLines, newline, recordBytes, shown, splitBlock, streams, type Block, type StoredLine } from './step-log-format';

/** The blocks of a log, with the unrecorded bytes a crash left at the end as one more block; undefined when there is no such log. */
export async function readBlocks(path: string): Promise<{ blocks: Block[]; total: number; recorded: number } | undefined> {
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

export async function readRange(path: string, offset: number, length: number): Promise<Buffer> {
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
