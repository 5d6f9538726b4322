// The Inbox screen: what needs attention (finished or waiting runs, trigger and channel errors,
// stalled agents), newest first, each led by the issue it is about, filtered by kind. An approval
// that was decided says how; the engine marks it read then, so every client counts it the same. Opening an item marks it read; Mark all
// read and Clear are held back while their Undo toasts show (there is no "mark unread").
//
// View: the toolbar and one list with one delegated click listener; `update()` re-renders the list.

import type { InboxItem, Snapshot } from '../../src/core/api';
import { errorText, type ScreenFactory } from '../app';
import { h, replace, timeElement } from '../dom';
import { withUndo } from './dialog';
import { errorElement } from './error-details';
import { deleteWithUndo, isPendingDeletion } from './pending-deletions';
import { decidedBy, optionLabels } from './approval-words';
import { runTitle } from './runs';
import { listSearch } from './search-box';

const kindGlyphs: Record<InboxItem['kind'], { glyph: string; label: string; className: string }> = {
  'run.succeeded': { glyph: '✓', label: 'Run succeeded', className: 'status-succeeded' },
  'run.failed': { glyph: '✕', label: 'Run failed', className: 'status-failed' },
  'run.waiting': { glyph: '‖', label: 'Waiting for approval', className: 'status-waiting' },
  'trigger.error': { glyph: '⚠', label: 'Trigger error', className: 'status-failed' },
  'channel.error': { glyph: '⚠', label: 'Channel could not deliver', className: 'status-failed' },
  'step.stalled': { glyph: '◔', label: 'Agent step stalled', className: 'status-waiting' },
  'step.budget': { glyph: '$', label: 'Agent step near its budget', className: 'status-waiting' },
  'step.rateLimited': { glyph: '⏸', label: 'Agent step waits for its usage limit', className: 'status-waiting' },
};

/** The filters by kind: a name and the kinds it shows (none: every kind). */
const kindFilters: [name: string, kinds: InboxItem['kind'][]][] = [
  ['All', []], ['Approvals', ['run.waiting']], ['Failed', ['run.failed']], ['Succeeded', ['run.succeeded']],
  ['Problems', ['trigger.error', 'channel.error', 'step.stalled', 'step.budget', 'step.rateLimited']],
];
/** Kept while the app runs, like the Runs filters. */
let shownFilter = 'All';
/** Items marked read whose call waits for the Undo toast to end: shown as read meanwhile. */
const pendingRead = new Set<string>();

/** How an approval item was decided ("Approved: Polish first", "Rejected"); undefined while it waits. */
export function decision(item: InboxItem, snapshot: Snapshot | undefined): { text: string; approved: boolean } | undefined {
  if (item.kind !== 'run.waiting' || !item.runId) return undefined;
  const run = snapshot?.runs.find((candidate) => candidate.id === item.runId);
  // The first approval decided after the item: a run's later approvals have later items.
  const step = run?.steps.find((candidate) => candidate.approval && candidate.approval.at >= item.at);
  if (!run || !step?.approval) return run && run.status !== 'waiting' ? { text: `No longer waiting: ${run.status}`, approved: false } : undefined;
  const by = step.approval.by ? ` by ${decidedBy(step.approval.by)}` : '';
  if (!step.approval.approved) return { text: `Rejected${by}`, approved: false };
  const defined = snapshot?.pipelines.find((pipeline) => pipeline.id === run.pipelineId)?.steps.find((candidate) => candidate.id === step.id);
  const labels = optionLabels(defined?.kind === 'approval' ? defined.choices : undefined, step.approval.selected);
  return { text: `Approved${by}${labels.length ? `: ${labels.join(', ')}` : ''}`, approved: true };
}

/** Counts as unread: not marked read (nor being marked). A decided approval is marked read by the engine. */
export function isUnread(item: InboxItem): boolean {
  return !item.read && !pendingRead.has(item.id) && !isPendingDeletion(item.id);
}

/** The first lines of a body, for the list. */
function preview(body: string | undefined): string {
  if (!body) return '';
  const shown = body.split('\n').slice(0, 3).join('\n');
  return shown.length > 300 ? `${shown.slice(0, 300)}…` : shown;
}

export const inboxScreen: ScreenFactory = (context) => {
  const markAll = h('button', { type: 'button' }, 'Mark all read');
  const clear = h('button', { type: 'button', class: 'danger' }, 'Clear');
  const filterBar = h('div', { class: 'segmented', role: 'group', 'aria-label': 'Show' });
  const list = h('ul', { class: 'list inbox-list', 'aria-label': 'Inbox' });
  const element = h('section', { class: 'page inbox-page' },
    h('div', { class: 'toolbar' }, h('h1', { class: 'toolbar-title' }, 'Inbox'), filterBar,
      listSearch({ scope: list, items: '.inbox-item', noun: 'messages', placeholder: 'Search the inbox' }), h('span', { class: 'spacer' }), markAll, clear),
    list);

  function items(): InboxItem[] {
    return (context.state.snapshot?.inbox ?? []).filter((item) => !isPendingDeletion(item.id)).sort((a, b) => b.at - a.at);
  }

  /** Marks read here at once (the event confirms it later). */
  function markLocally(ids: string[]): void {
    for (const item of context.state.snapshot?.inbox ?? []) if (ids.includes(item.id)) item.read = true;
    for (const id of ids) pendingRead.delete(id);
    context.state.changed();
  }

  async function markRead(ids: string[]): Promise<void> {
    try {
      await context.api.markInboxRead(ids);
      markLocally(ids);
    } catch (error) {
      context.toast(errorText(error), 'error');
    }
  }

  markAll.addEventListener('click', () => {
    const ids = items().filter((item) => !item.read && !pendingRead.has(item.id)).map((item) => item.id);
    for (const id of ids) pendingRead.add(id);
    context.state.changed();
    withUndo(context, `Marked ${ids.length} ${ids.length === 1 ? 'item' : 'items'} read`, async () => {
      await context.api.markInboxRead(ids);
      markLocally(ids);
    }, () => {
      for (const id of ids) pendingRead.delete(id);
      context.state.changed();
    });
  });
  // Held back while its Undo toast shows; then only the items cleared go (clearInbox names them),
  // never one that arrived meanwhile.
  clear.addEventListener('click', () => {
    const ids = items().map((item) => item.id);
    deleteWithUndo(context, ids, `Cleared ${ids.length} ${ids.length === 1 ? 'item' : 'items'}`, () => context.api.clearInbox(ids), () => {
      const snapshot = context.state.snapshot;
      if (snapshot) snapshot.inbox = snapshot.inbox.filter((item) => !ids.includes(item.id));
    });
  });
  filterBar.addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest<HTMLElement>('[data-filter]');
    if (!button) return;
    shownFilter = button.dataset.filter!;
    render();
  });

  // Clicking (or pressing Enter on) an item marks it read; a link inside goes on to the run.
  list.addEventListener('click', (event) => {
    const item = (event.target as HTMLElement).closest<HTMLElement>('[data-id]');
    if (item && item.dataset.unread === 'true') void markRead([item.dataset.id!]);
  });

  function render(): void {
    const snapshot = context.state.snapshot;
    const all = items();
    const unread = all.filter((item) => isUnread(item)).length;
    markAll.disabled = unread === 0;
    clear.disabled = all.length === 0;
    const inFilter = (name: string) => {
      const kinds = kindFilters.find(([candidate]) => candidate === name)![1];
      return all.filter((item) => kinds.length === 0 || kinds.includes(item.kind));
    };
    replace(filterBar, kindFilters.map(([name]) => h('button', { type: 'button', 'data-filter': name, 'aria-pressed': String(name === shownFilter) },
      name, h('span', { class: 'meta' }, inFilter(name).length))));
    const shown = inFilter(shownFilter);
    if (shown.length === 0) {
      replace(list, h('li', { class: 'empty inbox-empty' }, all.length ? h('p', {}, `Nothing under ${shownFilter}.`) : [
        h('p', {}, 'Nothing needs your attention.'),
        h('p', { class: 'meta' }, 'Finished runs, approvals and errors show here. ', h('a', { href: '#/channels' }, 'Add a channel'), ' to be told on your phone too.')]));
      return;
    }
    replace(list, shown.map((item) => {
      const kind = kindGlyphs[item.kind] ?? { glyph: '•', label: item.kind, className: '' };
      const run = item.runId ? snapshot?.runs.find((candidate) => candidate.id === item.runId) : undefined;
      // Led by the issue: "Try Factory  Approval needed: Choose · Demo" (its title says the issue again: left out).
      const lead = run ? runTitle(run) : undefined;
      const what = lead && item.title.includes(lead) && item.title.indexOf(': ') > 0 ? item.title.slice(0, item.title.indexOf(': ')) : item.title;
      const text = lead ? [h('span', { class: 'inbox-lead' }, lead, run?.issue?.key ? h('span', { class: 'meta mono' }, ` ${run.issue.key}`) : null), h('span', { class: 'inbox-what' }, `${what} · ${run!.pipelineName}`)] : item.title;
      const title = item.runId
        ? h('a', { href: `#/runs/${encodeURIComponent(item.runId)}`, class: 'inbox-title' }, text)
        : h('button', { type: 'button', class: 'inbox-title link-button', ...(item.read ? { 'aria-disabled': 'true' } : {}) }, text);
      const decided = decision(item, snapshot);
      const unreadNow = isUnread(item);
      const body = lead ? item.body?.split('\n').slice(1).join('\n') : item.body;
      return h('li', { class: unreadNow ? 'inbox-item unread' : 'inbox-item', 'data-id': item.id, 'data-unread': String(unreadNow), 'data-kind': item.kind },
        h('span', { class: `inbox-glyph ${kind.className}`, title: kind.label, 'aria-label': kind.label, role: 'img' }, kind.glyph),
        h('div', { class: 'inbox-text' },
          h('div', { class: 'inbox-head' },
            unreadNow ? h('span', { class: 'unread-dot', title: 'Unread', 'aria-label': 'Unread', role: 'img' }) : null,
            title),
          decided ? h('p', { class: `inbox-decision status-${decided.approved ? 'succeeded' : 'rejected'}`, 'data-test': 'decision' }, `${decided.approved ? '✓' : '⊘'} ${decided.text}`) : null,
          body ? h('p', { class: 'inbox-body' }, errorElement(body, 'inbox-body-text', '', preview)) : null),
        h('span', { class: 'meta inbox-time' }, timeElement(item.at)));
    }));
  }

  render();
  return { element, update: render };
};
