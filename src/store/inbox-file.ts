// inbox.jsonl (DESIGN §5): the inbox as an append-only file, one line per new item or read mark,
// rewritten atomically when it is cleared or has grown to twice the items it keeps.

import { join } from 'node:path';
import type { InboxItem } from '../core/api';
import { JsonlAppender, readJsonLines } from './jsonl';
import type { FileWriter } from './writer';

type InboxRecord = { item: InboxItem } | { read: string[] | 'all'; at: number };

export class InboxFile {
  private linesOnDisk = 0;
  private queue: Promise<unknown> = Promise.resolve();
  /** Its own appender, so a rewrite can close the file's handle without touching run logs. */
  private readonly appender = new JsonlAppender({ maxOpenFiles: 1 });

  private constructor(private readonly path: string, private readonly writer: FileWriter, private readonly limit: number) {}

  /** Reads the file (a torn last line from a crash is skipped): the latest `limit` items, oldest first. */
  static async open(dir: string, writer: FileWriter, limit: number): Promise<{ file: InboxFile; items: InboxItem[] }> {
    const file = new InboxFile(join(dir, 'inbox.jsonl'), writer, limit);
    const records = await readJsonLines<InboxRecord>(file.path);
    const byId = new Map<string, InboxItem>();
    for (const record of records) {
      if ('item' in record && record.item && typeof record.item.id === 'string') byId.set(record.item.id, record.item);
      else if ('read' in record) {
        for (const id of record.read === 'all' ? [...byId.keys()] : Array.isArray(record.read) ? record.read : []) {
          const item = byId.get(id);
          if (item) item.read = true;
        }
      }
    }
    file.linesOnDisk = records.length;
    return { file, items: [...byId.values()].slice(-limit) };
  }

  /** Appends a new item; `kept` gives the items to keep when the file is due for a rewrite. */
  add(item: InboxItem, kept: () => readonly InboxItem[]): Promise<void> {
    return this.append({ item }, kept);
  }

  markRead(ids: string[] | 'all', at: number, kept: () => readonly InboxItem[]): Promise<void> {
    return this.append({ read: ids, at }, kept);
  }

  /** Replaces the file with these items (none: cleared). */
  rewrite(items: readonly InboxItem[]): Promise<void> {
    return this.serial(() => this.replace(items));
  }

  /** Waits for every queued write, then closes the file. */
  async close(): Promise<void> {
    await this.queue;
    await this.appender.close();
  }

  private append(record: InboxRecord, kept: () => readonly InboxItem[]): Promise<void> {
    return this.serial(async () => {
      await this.appender.append(this.path, [record]);
      this.linesOnDisk += 1;
      if (this.linesOnDisk > 2 * this.limit) await this.replace(kept());
    });
  }

  private async replace(items: readonly InboxItem[]): Promise<void> {
    await this.appender.close();
    const text = items.map((item) => JSON.stringify({ item })).join('\n');
    await this.writer.write(this.path, text ? text + '\n' : '', { mode: 0o600 });
    this.linesOnDisk = items.length;
  }

  private serial(task: () => Promise<void>): Promise<void> {
    const next = this.queue.then(task);
    this.queue = next.catch(() => undefined);
    return next;
  }
}
