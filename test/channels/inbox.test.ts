// The inbox: items, read marks, clearing, persistence and its bound on disk.
import { appendFileSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { InboxItem } from '../../src/core/api';
import { Inbox, inboxLimit } from '../../src/channels/inbox';
import { DataStore } from '../../src/store/data-store';
import { rejects } from '../helpers/assert';
import { makeTempDir, removeTempDir } from '../helpers/temp';

const inbox = suite<{ dir: string; store: DataStore }>('inbox');

inbox.before.each(async (context) => {
  context.dir = makeTempDir('factory-inbox');
  context.store = new DataStore(context.dir);
  await context.store.open();
});
inbox.after.each(async (context) => {
  await context.store.close();
  removeTempDir(context.dir);
});

inbox('new items are announced, listed newest first, and survive a restart', async ({ store }) => {
  const announced: InboxItem[] = [];
  const first = await Inbox.open(store, (item) => announced.push(item));
  await first.add({ kind: 'run.waiting', title: 'Approval needed: Review', runId: 'run_1' });
  await first.add({ kind: 'run.failed', title: 'Failed: Crash on save', body: 'Step `test` failed' });
  assert.equal(announced.map((item) => item.title), ['Approval needed: Review', 'Failed: Crash on save']);
  assert.equal(first.latest().map((item) => item.kind), ['run.failed', 'run.waiting']);
  assert.is(first.unreadCount(), 2);
  await first.close();
  const second = await Inbox.open(store, () => undefined);
  assert.equal(second.latest(), first.latest());
  await second.close();
});

inbox('markRead marks the given items or all, and read marks survive a restart', async ({ store }) => {
  const box = await Inbox.open(store, () => undefined);
  const a = await box.add({ kind: 'run.succeeded', title: 'A' });
  await box.add({ kind: 'run.succeeded', title: 'B' });
  await box.add({ kind: 'run.succeeded', title: 'C' });
  await box.markRead([a.id, 'inb_unknown']);
  assert.is(box.unreadCount(), 2);
  await box.close();
  const reopened = await Inbox.open(store, () => undefined);
  assert.is(reopened.unreadCount(), 2);
  await reopened.markRead();
  assert.is(reopened.unreadCount(), 0);
  await rejects(reopened.markRead('all' as never), /list of inbox item ids/);
  await reopened.close();
  assert.is((await Inbox.open(store, () => undefined)).unreadCount(), 0);
});

inbox('clear empties the inbox and its file', async ({ store, dir }) => {
  const box = await Inbox.open(store, () => undefined);
  await box.add({ kind: 'trigger.error', title: 'Trigger errors' });
  await box.clear();
  assert.equal(box.latest(), []);
  assert.is(readFileSync(join(dir, 'inbox.jsonl'), 'utf8'), '');
  if (process.platform !== 'win32') assert.is(statSync(join(dir, 'inbox.jsonl')).mode & 0o777, 0o600, 'the rewritten file is private');
  await box.add({ kind: 'run.succeeded', title: 'after clear' });
  await box.close();
  assert.equal((await Inbox.open(store, () => undefined)).latest().map((item) => item.title), ['after clear']);
});

inbox('the file stays bounded: old items are compacted away', async ({ store, dir }) => {
  const box = await Inbox.open(store, () => undefined);
  for (let index = 0; index < inboxLimit * 2 + 50; index++) await box.add({ kind: 'run.succeeded', title: `item ${index}` });
  await box.close();
  const lines = readFileSync(join(dir, 'inbox.jsonl'), 'utf8').trim().split('\n').length;
  assert.ok(lines <= inboxLimit * 2, `${lines} lines on disk`);
  const reopened = await Inbox.open(store, () => undefined);
  assert.is(reopened.latest(1)[0]!.title, `item ${inboxLimit * 2 + 49}`);
  assert.is(reopened.latest(inboxLimit + 10).length, inboxLimit);
});

inbox('a torn last line from a crash is skipped', async ({ store, dir }) => {
  const box = await Inbox.open(store, () => undefined);
  await box.add({ kind: 'run.succeeded', title: 'whole' });
  await box.close();
  appendFileSync(join(dir, 'inbox.jsonl'), '{"item":{"id":"inb_x","tit');
  const reopened = await Inbox.open(store, () => undefined);
  assert.equal(reopened.latest().map((item) => item.title), ['whole']);
});

inbox.run();
