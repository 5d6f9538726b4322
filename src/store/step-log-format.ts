// One attempt's log, as files (DESIGN §5; the format in docs/DECISIONS.md "Logs are kept as bytes"):
//   <step>.<attempt>.log   the output as it came, complete lines only: stdout, stderr and Factory's
//                          own lines, interleaved in the order they arrived
//   <step>.<attempt>.idx   one 32-byte record per block of that file: its offset and length, how
//                          many lines it holds, when it arrived and from which stream
// Lines are split only when someone reads them: a page, a search, the live feed. The writer
// costs one pass over the bytes (counting line feeds) and one append per file per flush.
//
// This file holds what the writer and the readers share: the index record, and how stored bytes
// become lines a person reads. step-log.ts writes; step-log-reader.ts reads pages and searches.

import type { LogLine } from '../core/api';

export type LogStream = NonNullable<LogLine['stream']>;
export const streams: readonly LogStream[] = ['out', 'err', 'info'];
export const recordBytes = 32;
export const newline = 0x0a;
/** A line longer than this (in characters) is shown cut, with a note; the file keeps it whole. */
export const maxShownLineLength = 16_384;
/** Control characters removed when lines are shown: C0 except tab, line feed and escape (colours). */
const controlCharacters = /[\x00-\x08\x0B-\x1A\x1C-\x1F]/g;

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

export function countLines(bytes: Uint8Array): number {
  let count = 0;
  for (let index = 0; index < bytes.length; index++) if (bytes[index] === newline) count++;
  return count;
}

/** Text of stored bytes as a person reads it: control characters out, a very long line cut. */
export function shown(line: string): string {
  const clean = line.replace(controlCharacters, '');
  return clean.length <= maxShownLineLength ? clean : `${clean.slice(0, maxShownLineLength)} … (${clean.length - maxShownLineLength} more characters: download the log)`;
}

/** Splits one block's bytes into its lines, numbered from `first`. */
export function splitBlock(bytes: Buffer, block: Pick<Block, 'ts' | 'stream'>, first: number): StoredLine[] {
  const text = bytes.toString('utf8');
  const parts = text.split('\n');
  if (parts.at(-1) === '') parts.pop();
  return parts.map((line, index) => ({ n: first + index, line: shown(line), ts: block.ts, stream: block.stream }));
}

/** One index record: offset, time, length, lines, stream (32 bytes, little-endian). */
export function record(block: Block): Buffer {
  const bytes = Buffer.alloc(recordBytes);
  bytes.writeDoubleLE(block.offset, 0);
  bytes.writeDoubleLE(block.ts, 8);
  bytes.writeUInt32LE(block.bytes, 16);
  bytes.writeUInt32LE(block.lines, 20);
  bytes.writeUInt8(streams.indexOf(block.stream), 24);
  return bytes;
}
