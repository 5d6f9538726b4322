// The inbox: what needs a person's attention (approvals waiting, runs finished, trigger and
// channel errors). Kept in inbox.jsonl, append-only: one line per new item or read mark;
// rewritten atomically when cleared or when it grows past its bound.

import { join } from 'node:path';
import type { InboxItem } from '../core/api';
import { ValidationError, quote } from '../core/errors';
import { newId } from '../core/ids';
import type { DataStore } from '../store/data-store';
import { JsonlAppender, readJsonLines } from '../store/jsonl';

/** Items kept; older ones are dropped when the file is compacted. */
export const inboxLimit = 1000;
/** Lines the file may reach before it is compacted to the items kept. */
const compactAfterLines = 2 * inboxLimit;

type InboxRecord = { item: InboxItem } | { read: string[] | 'all'; at: number };

export type NewInboxItem = Pick<InboxItem, 'kind' | 'title'> & Partial<Pick<InboxItem, 'body' | 'runId'>>;

export class Inbox {
  private items: InboxItem[] = [];
  private linesOnDisk = 0;
  private queue: Promise<unknown> = Promise.resolve();
  /** Its own appender, so compaction can close the file's handle without touching run logs. */
  private readonly appender = new JsonlAppender({ maxOpenFiles: 1 });

  private constructor(
    private readonly store: DataStore,
    private readonly onItem: (item: InboxItem) => void,
    private readonly now: () => number,
  ) {}

  get path(): string {
    return join(this.store.dir, 'inbox.jsonl');
  }

  /** Reads inbox.jsonl (a torn last line from a crash is skipped). */
  static async open(store: DataStore, onItem: (item: InboxItem) => void, now: () => number = Date.now): Promise<Inbox> {
    const inbox = new Inbox(store, onItem, now);
    const records = await readJsonLines<InboxRecord>(inbox.path);
    const byId = new Map<string, InboxItem>();
    for (const record of records) {
      if ('item' in record && record.item && typeof record.item.id === 'string') byId.set(record.item.id, record.item);
      else if ('read' in record) {
        const ids = record.read === 'all' ? [...byId.keys()] : Array.isArray(record.read) ? record.read : [];
        for (const id of ids) {
          const item = byId.get(id);
          if (item) item.read = true;
        }
      }
    }
    inbox.items = [...byId.values()].slice(-inboxLimit);
    inbox.linesOnDisk = records.length;
    return inbox;
  }

  /** The newest `limit` items, newest first. */
  latest(limit = 100): InboxItem[] {
    return this.items.slice(-limit).reverse();
  }

  unreadCount(): number {
    return this.items.reduce((count, item) => count + (item.read ? 0 : 1), 0);
  }

  /** Adds an item, announces it (the `inbox` event) and persists it; resolves when written. */
  add(input: NewInboxItem): Promise<InboxItem> {
    const item: InboxItem = { id: newId('inb'), at: this.now(), kind: input.kind, title: input.title, read: false };
    if (input.body) item.body = input.body;
    if (input.runId) item.runId = input.runId;
    this.items.push(item);
    if (this.items.length > inboxLimit) this.items.splice(0, this.items.length - inboxLimit);
    this.onItem(item);
    return this.persist([{ item }]).then(() => item);
  }

  /** Marks the given items read, or all of them when `ids` is undefined or null. */
  markRead(ids?: unknown): Promise<void> {
    if (ids !== undefined && ids !== null && (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string'))) {
      return Promise.reject(new ValidationError(`markInboxRead takes a list of inbox item ids, or nothing for all, not ${quote(ids)}`));
    }
    const wanted = ids ? new Set(ids as string[]) : undefined;
    const changed = this.items.filter((item) => !item.read && (!wanted || wanted.has(item.id)));
    if (changed.length === 0) return Promise.resolve();
    for (const item of changed) item.read = true;
    return this.persist([{ read: wanted ? changed.map((item) => item.id) : 'all', at: this.now() }]);
  }

  /** Removes every item; the file is rewritten empty. */
  clear(): Promise<void> {
    this.items = [];
    return this.serial(() => this.rewrite());
  }

  private persist(records: InboxRecord[]): Promise<void> {
    return this.serial(async () => {
      await this.appender.append(this.path, records);
      this.linesOnDisk += records.length;
      if (this.linesOnDisk > compactAfterLines) await this.rewrite();
    });
  }

  /** Replaces the file with the items kept now. Open append handles are closed first. */
  private async rewrite(): Promise<void> {
    await this.appender.close();
    const text = this.items.map((item) => JSON.stringify({ item })).join('\n');
    await this.store.writer.write(this.path, text ? text + '\n' : '', { mode: 0o600 });
    this.linesOnDisk = this.items.length;
  }

  private serial(task: () => Promise<void>): Promise<void> {
    const next = this.queue.then(task);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Waits for every queued write, then closes the file. */
  async close(): Promise<void> {
    await this.queue;
    await this.appender.close();
  }
}
