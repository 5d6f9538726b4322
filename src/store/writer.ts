// Whole-file writes with one queue per path (DESIGN §5): while a file is being written, newer
// content for it waits in a single slot, so a burst of changes costs two writes, not one per change.

import { resolve } from 'node:path';
import { writeFileAtomic, type AtomicFileSystem } from './atomic';

type FileContent = string | Uint8Array;

interface FileWriteOptions {
  /** Permission bits of the file, as in `writeFileAtomic`. */
  mode?: number;
}

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
}

interface PendingWrite {
  content: FileContent | (() => FileContent);
  options: FileWriteOptions;
  waiters: Waiter[];
}

interface PathQueue {
  pending: PendingWrite | undefined;
  /** Settles (never rejects) when the queue has run dry. */
  drained: Promise<void>;
}

/**
 * Serialised, coalesced atomic writes. Every path has its own queue; paths do not wait for each
 * other. Errors reach the callers whose content was being written, never `flush`.
 */
export class FileWriter {
  readonly #fileSystem: AtomicFileSystem | undefined;
  readonly #queues = new Map<string, PathQueue>();

  /** `fs` replaces `node:fs/promises` for every write (tests inject faults with it). */
  constructor(options: { fs?: AtomicFileSystem } = {}) {
    this.#fileSystem = options.fs;
  }

  /**
   * Writes `content` to `path` atomically. Resolves once content at least as new as this call's is
   * durable; rejects with the error of the write that carried this call's content. Calls made
   * while an earlier write to the path is under way replace one another: only the latest is
   * written. A function is called only when its write starts, so a caller can serialise lazily;
   * if it throws, the callers it stood for reject with that error.
   */
  write(path: string, content: FileContent | (() => FileContent), options: FileWriteOptions = {}): Promise<void> {
    const key = resolve(path);
    return new Promise<void>((resolvePromise, rejectPromise) => {
      const waiter = { resolve: resolvePromise, reject: rejectPromise };
      let queue = this.#queues.get(key);
      if (queue) {
        if (queue.pending) {
          queue.pending.content = content;
          queue.pending.options = options;
          queue.pending.waiters.push(waiter);
        } else {
          queue.pending = { content, options, waiters: [waiter] };
        }
        return;
      }
      queue = { pending: { content, options, waiters: [waiter] }, drained: Promise.resolve() };
      this.#queues.set(key, queue);
      queue.drained = this.#drain(key, queue);
    });
  }

  /** Resolves once every write queued so far, and any queued while waiting, has settled. */
  async flush(): Promise<void> {
    while (this.#queues.size > 0) {
      await Promise.all([...this.#queues.values()].map((queue) => queue.drained));
    }
  }

  async #drain(path: string, queue: PathQueue): Promise<void> {
    // Let the rest of the current tick queue its writes, so they share the first one.
    await Promise.resolve();
    while (queue.pending) {
      const { content, options, waiters } = queue.pending;
      queue.pending = undefined;
      try {
        const data = typeof content === 'function' ? content() : content;
        await writeFileAtomic(path, data, { mode: options.mode, fs: this.#fileSystem });
        for (const waiter of waiters) waiter.resolve();
      } catch (error) {
        for (const waiter of waiters) waiter.reject(error);
      }
    }
    this.#queues.delete(path);
  }
}
