// JSON Lines files (run logs, the inbox): one JSON value per line, appended in batches, and read
// back in a way that survives a crash in the middle of an append (DESIGN §5).

import * as nodeFileSystem from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { ValidationError, quote } from '../core/errors';

/** The file operations the appender needs; `node:fs/promises` fits it. Tests count calls here. */
export interface JsonlFileSystem {
  open(path: string, flags: string, mode: number): Promise<JsonlFileHandle>;
  mkdir(path: string, options: { recursive: true }): Promise<unknown>;
}

/** An open file: the subset of node's FileHandle used here. */
export interface JsonlFileHandle {
  stat(): Promise<{ size: number }>;
  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  /** Writes all of `data` at the end of the file. */
  appendFile(data: string): Promise<void>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

interface AppendOptions {
  /** fsync after writing, so the records survive a power loss once the promise resolves. */
  sync?: boolean;
}

interface JsonlAppenderOptions {
  /** Open files kept while idle; the least recently used is closed beyond this. Default 32. */
  maxOpenFiles?: number;
  /** Default for appends that do not say: fsync after each write. Default false. */
  sync?: boolean;
  fs?: JsonlFileSystem;
}

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
}

interface AppendTarget {
  path: string;
  handle: JsonlFileHandle | undefined;
  /** True when the open file ends in a torn line: the next write starts with a newline. */
  needsNewline: boolean;
  /** True when the open file is in synchronous mode (O_SYNC): each write is durable when it returns. */
  synchronous: boolean;
  lines: string[];
  waiters: Waiter[];
  sync: boolean;
  /** The running write loop, while there is one. */
  draining: Promise<void> | undefined;
  /** When it was last appended to, on the appender's own clock: the least recent is closed first. */
  lastUsed: number;
}

const newlineByte = 0x0a;
/** New files are private: logs, journals and the inbox hold issue text and tool output. */
const newFileMode = 0o600;

/**
 * Appends records to JSON Lines files. Appends made while a file is being written, or in the same
 * turn of the event loop, go out together in one write. Open files are reused and kept to a bounded number. Appends
 * after `close` open the files again.
 */
export class JsonlAppender {
  readonly #fileSystem: JsonlFileSystem;
  readonly #maxOpenFiles: number;
  readonly #syncByDefault: boolean;
  /** By absolute path. */
  readonly #targets = new Map<string, AppendTarget>();
  #clock = 0;

  constructor(options: JsonlAppenderOptions = {}) {
    this.#fileSystem = options.fs ?? nodeFileSystem;
    this.#maxOpenFiles = Math.max(1, options.maxOpenFiles ?? 32);
    this.#syncByDefault = options.sync ?? false;
  }

  /**
   * Appends `records` to `path`, one line each, creating the file and its folders as needed.
   * Resolves once they are written (and fsynced, with `sync`); rejects with the write's error.
   * A record JSON cannot represent (undefined, a function) throws ValidationError here and
   * nothing of this call is written.
   */
  append(path: string, records: unknown[], options: AppendOptions = {}): Promise<void> {
    let text: string;
    try {
      text = serialise(path, records);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.appendLines(path, text, options);
  }

  /** `append` for records the caller serialised: `text` is whole JSON lines, each ending in a newline. */
  appendLines(path: string, text: string, options: AppendOptions = {}): Promise<void> {
    const target = this.#target(path);
    target.lastUsed = ++this.#clock;
    if (text !== '') target.lines.push(text);
    if (options.sync ?? this.#syncByDefault) target.sync = true;
    const done = new Promise<void>((resolvePromise, rejectPromise) => {
      target.waiters.push({ resolve: resolvePromise, reject: rejectPromise });
    });
    target.draining ??= this.#drain(target);
    return done;
  }

  /** Resolves once every append made so far, and any made while waiting, has settled. */
  async flush(): Promise<void> {
    for (;;) {
      const running = [...this.#targets.values()].flatMap((target) => (target.draining ? [target.draining] : []));
      if (running.length === 0) return;
      await Promise.all(running);
    }
  }

  /**
   * Waits for the appends to `path` made so far, then closes its file, if open (before it is
   * deleted: an open descriptor would keep its space on disk). A later append opens it again.
   */
  async closeFile(path: string): Promise<void> {
    const target = this.#targets.get(path) ?? this.#targets.get(resolve(path));
    if (!target) return;
    while (target.draining) await target.draining;
    if (this.#targets.get(target.path) !== target || target.waiters.length > 0) return;
    this.#targets.delete(target.path);
    await this.#closeHandle(target);
  }

  /** Waits for pending appends, then closes every open file. */
  async close(): Promise<void> {
    await this.flush();
    await this.#closeIdleFiles(0);
  }

  /** The target for `path`; an absolute path finds it without being resolved again. */
  #target(path: string): AppendTarget {
    let target = this.#targets.get(path);
    if (target) return target;
    const absolutePath = resolve(path);
    target = this.#targets.get(absolutePath);
    if (target) return target;
    target = { path: absolutePath, handle: undefined, needsNewline: false, synchronous: false, lines: [], waiters: [], sync: false, draining: undefined, lastUsed: 0 };
    this.#targets.set(absolutePath, target);
    return target;
  }

  async #drain(target: AppendTarget): Promise<void> {
    // Let the rest of this turn of the event loop add its records to this write: every request
    // whose bytes arrived with this one reaches its append before the loop's check phase (a burst
    // of webhooks shares one synced write instead of one alone and the rest behind it).
    await new Promise((resolvePromise) => setImmediate(resolvePromise));
    while (target.waiters.length > 0) {
      const { lines, waiters, sync } = target;
      target.lines = [];
      target.waiters = [];
      target.sync = false;
      try {
        if (lines.length > 0) {
          const handle = target.handle ?? (await this.#open(target, sync));
          const text = lines.join('');
          await handle.appendFile(target.needsNewline ? '\n' + text : text);
          target.needsNewline = false;
          if (sync && !target.synchronous) await handle.sync();
        }
        for (const waiter of waiters) waiter.resolve();
      } catch (error) {
        // The file may now end in a torn line: reopen it next time, which checks for that.
        await this.#closeHandle(target);
        for (const waiter of waiters) waiter.reject(error);
      }
    }
    target.draining = undefined;
    if (!target.handle) this.#targets.delete(target.path);
    await this.#closeIdleFiles(this.#maxOpenFiles);
  }

  /**
   * Opens the target's file for appending. A file first opened for a synced append is opened in
   * synchronous mode ('as+', O_SYNC): its writes are durable as they return, one trip to the disk
   * thread instead of a write and an fsync (about 20% faster here, and the files that want it,
   * like the run journal, want it for every append).
   */
  async #open(target: AppendTarget, synchronous: boolean): Promise<JsonlFileHandle> {
    await this.#closeIdleFiles(this.#maxOpenFiles - 1);
    const flags = synchronous ? 'as+' : 'a+';
    let handle: JsonlFileHandle;
    try {
      handle = await this.#fileSystem.open(target.path, flags, newFileMode);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      await this.#fileSystem.mkdir(dirname(target.path), { recursive: true });
      handle = await this.#fileSystem.open(target.path, flags, newFileMode);
    }
    try {
      target.needsNewline = await endsInTornLine(handle);
    } catch (error) {
      await handle.close().catch(() => undefined);
      throw error;
    }
    target.handle = handle;
    target.synchronous = synchronous;
    return handle;
  }

  /** Closes least recently used idle files until at most `limit` stay open. */
  async #closeIdleFiles(limit: number): Promise<void> {
    const open = [...this.#targets.values()].filter((target) => target.handle);
    if (open.length <= limit) return;
    open.sort((left, right) => left.lastUsed - right.lastUsed);
    const closing: Promise<void>[] = [];
    for (const target of open) {
      if (open.length - closing.length <= limit) break;
      if (target.draining) continue;
      closing.push(this.#closeHandle(target));
      this.#targets.delete(target.path);
    }
    await Promise.all(closing);
  }

  async #closeHandle(target: AppendTarget): Promise<void> {
    const handle = target.handle;
    if (!handle) return;
    target.handle = undefined;
    target.needsNewline = false;
    target.synchronous = false;
    await handle.close().catch(() => undefined);
  }
}

/** The records as lines, each ending in a newline; JSON escapes any newline inside a string. */
function serialise(path: string, records: unknown[]): string {
  let text = '';
  for (const record of records) {
    const line = JSON.stringify(record);
    if (line === undefined) throw new ValidationError(`Cannot append ${quote(record)} to ${path}: it has no JSON form.`);
    text += line + '\n';
  }
  return text;
}

/** True when the file is not empty and does not end in a newline (a crash tore its last line). */
async function endsInTornLine(handle: JsonlFileHandle): Promise<boolean> {
  const { size } = await handle.stat();
  if (size === 0) return false;
  const lastByte = new Uint8Array(1);
  const { bytesRead } = await handle.read(lastByte, 0, 1, size - 1);
  return bytesRead === 1 && lastByte[0] !== newlineByte;
}

interface JsonLinesReport<T> {
  records: T[];
  /** Lines before the last that did not parse (corruption), left out of `records`. */
  skipped: number;
  /** True when the last line was torn (no final newline, or did not parse) and left out. */
  tornLastLine: boolean;
}

/**
 * Reads a JSON Lines file with a report of what it left out. A missing file has no records.
 * The last line is left out, silently, when it has no final newline (a crash may have cut it
 * anywhere, even where it still parses) or does not parse; a line before it that does not parse
 * is left out and counted in `skipped`. Blank lines are ignored. Values are not validated: `T`
 * is the caller's claim.
 */
export async function readJsonLinesReport<T>(path: string): Promise<JsonLinesReport<T>> {
  let text: string;
  try {
    text = await nodeFileSystem.readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], skipped: 0, tornLastLine: false };
    throw error;
  }
  const lines = text.split('\n');
  // After a final newline the last piece is empty; otherwise it is a torn line.
  const tail = lines.pop() ?? '';
  let tornLastLine = tail.trim() !== '';
  const records: T[] = [];
  let skipped = 0;
  let lastContentIndex = lines.length - 1;
  while (lastContentIndex >= 0 && lines[lastContentIndex]!.trim() === '') lastContentIndex -= 1;
  for (let index = 0; index <= lastContentIndex; index += 1) {
    const line = lines[index]!;
    if (line.trim() === '') continue;
    try {
      records.push(JSON.parse(line) as T);
    } catch {
      if (index === lastContentIndex && !tornLastLine) tornLastLine = true;
      else skipped += 1;
    }
  }
  return { records, skipped, tornLastLine };
}

/** The records of a JSON Lines file, as `readJsonLinesReport` reads them. */
export async function readJsonLines<T>(path: string): Promise<T[]> {
  return (await readJsonLinesReport<T>(path)).records;
}
