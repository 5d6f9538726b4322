// The inbox: what needs a person's attention (approvals waiting, runs finished, trigger and
// channel errors). The items live here; the store keeps them (store/inbox-file.ts).

import type { InboxItem } from '../core/api';
import { ValidationError, quote } from '../core/errors';
import { newId } from '../core/ids';
import type { DataStore } from '../store/data-store';
import { InboxFile } from '../store/inbox-file';

/** Items kept; older ones are dropped when the file is compacted. */
export const inboxLimit = 1000;

export type NewInboxItem = Pick<InboxItem, 'kind' | 'title'> & Partial<Pick<InboxItem, 'body' | 'runId'>>;

export class Inbox {
  /** Told after items were marked read or removed (a new item goes to `onItem` instead). */
  private readonly changeListeners = new Set<() => void>();

  private constructor(
    private readonly file: InboxFile,
    private items: InboxItem[],
    private readonly onItem: (item: InboxItem) => void,
    private readonly now: () => number,
  ) {}

  static async open(store: DataStore, onItem: (item: InboxItem) => void, now: () => number = Date.now): Promise<Inbox> {
    const { file, items } = await InboxFile.open(store.dir, store.writer, inboxLimit);
    return new Inbox(file, items, onItem, now);
  }

  /** The newest `limit` items, newest first: copies, so a snapshot keeps what it said when it was made. */
  latest(limit = 100): InboxItem[] {
    return this.items.slice(-limit).reverse().map((item) => ({ ...item }));
  }

  /**
   * Subscribes to read marks and clearing, so every client can be told (new items are announced
   * through `onItem`); returns the unsubscribe function.
   */
  subscribe(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /**
   * The ids of a run's approval items (`run.waiting`) not read yet. Once the run no longer waits on
   * them (decided, or ended) the engine marks these read, so the tray, the phone and the Inbox screen agree.
   */
  unreadApprovals(runId: unknown): string[] {
    return this.items.filter((item) => item.kind === 'run.waiting' && item.runId === runId && !item.read).map((item) => item.id);
  }

  /** Adds an item, announces it (the `inbox` event) and persists it; resolves when written. */
  add(input: NewInboxItem): Promise<InboxItem> {
    const item: InboxItem = { id: newId('inb'), at: this.now(), kind: input.kind, title: input.title, read: false };
    if (input.body) item.body = input.body;
    if (input.runId) item.runId = input.runId;
    this.items.push(item);
    if (this.items.length > inboxLimit) this.items.splice(0, this.items.length - inboxLimit);
    this.onItem(item);
    return this.file.add(item, () => this.items).then(() => item);
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
    this.changed();
    return this.file.markRead(wanted ? changed.map((item) => item.id) : 'all', this.now(), () => this.items);
  }

  /**
   * Removes the given items, or every item when `ids` is undefined or null; the file is rewritten
   * with what is left. Naming the items lets a screen hold Clear back behind its Undo toast
   * without removing an item that arrived meanwhile, unseen.
   */
  clear(ids?: unknown): Promise<void> {
    if (ids !== undefined && ids !== null && (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string'))) {
      return Promise.reject(new ValidationError(`clearInbox takes a list of inbox item ids, or nothing for all, not ${quote(ids)}`));
    }
    const removed = ids ? new Set(ids as string[]) : undefined;
    this.items = removed ? this.items.filter((item) => !removed.has(item.id)) : [];
    this.changed();
    return this.file.rewrite(this.items);
  }

  /** Waits for every queued write, then closes the file. */
  close(): Promise<void> {
    return this.file.close();
  }

  private changed(): void {
    for (const listener of this.changeListeners) {
      try {
        listener();
      } catch (error) {
        console.error('An inbox subscriber failed:', error);
      }
    }
  }
}
