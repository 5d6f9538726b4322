// The inbox: items, read marks, clearing, persistence and its bound on disk.
import { appendFileSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { InboxItem, Snapshot } from '../../src/core/api';
import { Inbox, inboxLimit } from '../../src/channels/inbox';
import { DataStore } from '../../src/store/data-store';
import { rejects } from '../helpers/assert';
import { approval, shell, startTestFactory, type TestFactory } from '../helpers/factory';
import { makeTempDir, removeTempDir, waitFor } from '../helpers/temp';

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

/** The items not read yet, as the Inbox screen counts them. */
function unread(box: Inbox): number {
  return box.latest().filter((item) => !item.read).length;
}

inbox('new items are announced, listed newest first, and survive a restart', async ({ store }) => {
  const announced: InboxItem[] = [];
  const first = await Inbox.open(store, (item) => announced.push(item));
  await first.add({ kind: 'run.waiting', title: 'Approval needed: Review', runId: 'run_1' });
  await first.add({ kind: 'run.failed', title: 'Failed: Crash on save', body: 'Step `test` failed' });
  assert.equal(announced.map((item) => item.title), ['Approval needed: Review', 'Failed: Crash on save']);
  assert.equal(first.latest().map((item) => item.kind), ['run.failed', 'run.waiting']);
  assert.is(unread(first), 2);
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
  assert.is(unread(box), 2);
  await box.close();
  const reopened = await Inbox.open(store, () => undefined);
  assert.is(unread(reopened), 2);
  await reopened.markRead();
  assert.is(unread(reopened), 0);
  await rejects(reopened.markRead('all' as never), /list of inbox item ids/);
  await reopened.close();
  assert.is(unread(await Inbox.open(store, () => undefined)), 0);
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

inbox('clear with ids removes only those: an item that came after the person looked stays', async ({ store }) => {
  const box = await Inbox.open(store, () => undefined);
  const seen = [await box.add({ kind: 'run.failed', title: 'seen 1' }), await box.add({ kind: 'run.succeeded', title: 'seen 2' })];
  await box.add({ kind: 'run.waiting', title: 'arrived during Undo', runId: 'run_9' });
  await box.clear(seen.map((item) => item.id));
  assert.equal(box.latest().map((item) => item.title), ['arrived during Undo']);
  await rejects(box.clear('all' as never), /list of inbox item ids/);
  await box.close();
  assert.equal((await Inbox.open(store, () => undefined)).latest().map((item) => item.title), ['arrived during Undo'], 'the file holds what is left');
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

inbox('unreadApprovals lists a run\'s unread approval items only; read marks and clearing are told to subscribers', async ({ store }) => {
  const box = await Inbox.open(store, () => undefined);
  let told = 0;
  const unsubscribe = box.subscribe(() => told++);
  const first = await box.add({ kind: 'run.waiting', title: 'Approval needed: A', runId: 'run_1' });
  await box.add({ kind: 'run.succeeded', title: 'Succeeded', runId: 'run_1' });
  await box.add({ kind: 'run.waiting', title: 'Approval needed: B', runId: 'run_2' });
  const second = await box.add({ kind: 'run.waiting', title: 'Approval needed: C', runId: 'run_1' });
  assert.equal(box.unreadApprovals('run_1'), [first.id, second.id]);
  assert.equal(box.unreadApprovals({ not: 'an id' }), []);
  assert.is(told, 0, 'a new item is announced through onItem, not here');
  await box.markRead([first.id]);
  assert.equal([box.unreadApprovals('run_1'), told], [[second.id], 1]);
  await box.markRead([first.id]);
  assert.is(told, 1, 'nothing changed, nobody told');
  await box.clear();
  assert.is(told, 2);
  unsubscribe();
  await box.add({ kind: 'run.waiting', title: 'D', runId: 'run_3' });
  await box.markRead();
  assert.is(told, 2, 'unsubscribed');
  await box.close();
});

inbox.run();

const decided = suite<{ factory: TestFactory }>('inbox: decided approvals');

decided.before.each(async (context) => {
  context.factory = await startTestFactory();
});
decided.after.each(async (context) => {
  await context.factory.close();
});

/** The run's approval items as every client sees them in a snapshot: [title, read]. */
async function approvalItems(factory: TestFactory, runId: string): Promise<[string, boolean][]> {
  const { inbox: items } = await factory.api.snapshot();
  return items.filter((item) => item.kind === 'run.waiting' && item.runId === runId).reverse().map((item) => [item.title, item.read]);
}

decided('a decided approval\'s item is read for every client as approveStep answers; a later approval of the run is not', async ({ factory }) => {
  const pipeline = await factory.pipeline([approval('first', 'One?'), approval('second', 'Two?'), shell('done', 'true')]);
  const snapshots = factory.record('snapshot');
  const run = await factory.api.startRun({ pipelineId: pipeline.id });
  await waitFor(async () => (await approvalItems(factory, run.id)).length === 1, 5000, 'the first approval item');
  assert.equal(await approvalItems(factory, run.id), [['Approval needed: first', false]], 'unread while it waits');
  await factory.api.approveStep(run.id, 'first', true);
  assert.equal(await approvalItems(factory, run.id), [['Approval needed: first', true]], 'read as approveStep answers');
  await waitFor(() => snapshots.some((snapshot) => snapshot.inbox.some((item) => item.runId === run.id && item.read)), 5000, 'a snapshot event that says so');
  await waitFor(async () => (await approvalItems(factory, run.id)).length === 2, 5000, 'the second approval item');
  assert.equal(await approvalItems(factory, run.id), [['Approval needed: first', true], ['Approval needed: second', false]]);
  await factory.api.approveStep(run.id, 'second', false, 'not now');
  assert.equal(await approvalItems(factory, run.id), [['Approval needed: first', true], ['Approval needed: second', true]], 'a rejection decides too');
});

decided('a refused decision leaves the item unread; a run cancelled while it waits leaves it read', async ({ factory }) => {
  const pipeline = await factory.pipeline([approval('pick', 'Which?', { mode: 'single', options: ['Red', 'Green'] })]);
  const run = await factory.api.startRun({ pipelineId: pipeline.id });
  await waitFor(async () => (await approvalItems(factory, run.id)).length === 1, 5000, 'the approval item');
  await rejects(factory.api.approveStep(run.id, 'pick', true), /needs a choice/);
  assert.equal(await approvalItems(factory, run.id), [['Approval needed: pick', false]], 'not decided: still unread');
  await factory.api.cancelRun(run.id);
  await waitFor(async () => (await approvalItems(factory, run.id))[0]![1], 5000, 'the item read once the run ended');
});

decided('a read mark made by one client reaches the others in a snapshot event', async ({ factory }) => {
  // Each snapshot as it went out (as every door sends it: serialised at once).
  const snapshots: Snapshot[] = [];
  const stop = factory.api.on('snapshot', (snapshot) => snapshots.push(JSON.parse(JSON.stringify(snapshot))));
  const pipeline = await factory.pipeline([shell('done', 'true')]);
  const run = await factory.api.startRun({ pipelineId: pipeline.id });
  const finished = async () => (await factory.api.snapshot()).inbox.find((item) => item.runId === run.id && item.kind === 'run.succeeded');
  await waitFor(async () => Boolean(await finished()), 5000, 'the run.succeeded item');
  const item = (await finished())!;
  // The snapshots the run's end asked for have gone out: the next one is the read mark's.
  await waitFor(() => snapshots.some((snapshot) => snapshot.inbox.some((candidate) => candidate.id === item.id)), 5000, 'a snapshot event with the item');
  await factory.api.markInboxRead([item.id]);
  await waitFor(() => snapshots.some((snapshot) => snapshot.inbox.some((candidate) => candidate.id === item.id && candidate.read)), 5000, 'a snapshot event with the item read');
  stop();
});

decided.run();
