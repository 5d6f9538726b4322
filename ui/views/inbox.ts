// The Inbox screen: what needs attention (finished or waiting runs, trigger and channel errors,
// stalled agents), newest first. Opening an item marks it read; an item about a run links to it.
//
// View: the toolbar and one list with one delegated click listener; `update()` re-renders the list.

import type { InboxItem } from '../../src/core/api';
import { errorText, type ScreenFactory } from '../app';
import { h, replace, timeElement } from '../dom';
import { withBusy } from './settings-form';

const kindGlyphs: Record<InboxItem['kind'], { glyph: string; label: string; className: string }> = {
  'run.succeeded': { glyph: '✓', label: 'Run succeeded', className: 'status-succeeded' },
  'run.failed': { glyph: '✕', label: 'Run failed', className: 'status-failed' },
  'run.waiting': { glyph: '‖', label: 'Waiting for approval', className: 'status-waiting' },
  'trigger.error': { glyph: '⚠', label: 'Trigger error', className: 'status-failed' },
  'channel.error': { glyph: '⚠', label: 'Channel could not deliver', className: 'status-failed' },
  'step.stalled': { glyph: '◔', label: 'Agent step stalled', className: 'status-waiting' },
};

/** The first lines of a body, for the list. */
function preview(body: string | undefined): string {
  if (!body) return '';
  const shown = body.split('\n').slice(0, 3).join('\n');
  return shown.length > 300 ? `${shown.slice(0, 300)}…` : shown;
}

export const inboxScreen: ScreenFactory = (context) => {
  const markAll = h('button', { type: 'button' }, 'Mark all read');
  const clear = h('button', { type: 'button', class: 'danger' }, 'Clear');
  const list = h('ul', { class: 'list inbox-list', 'aria-label': 'Inbox' });
  const element = h('section', { class: 'page inbox-page' },
    h('div', { class: 'toolbar' }, h('h1', { class: 'toolbar-title' }, 'Inbox'), h('span', { class: 'spacer' }), markAll, clear),
    list);

  function items(): InboxItem[] {
    return [...(context.state.snapshot?.inbox ?? [])].sort((a, b) => b.at - a.at);
  }

  /** Marks read here at once (the event confirms it later). */
  function markLocally(ids: string[] | undefined): void {
    for (const item of context.state.snapshot?.inbox ?? []) if (!ids || ids.includes(item.id)) item.read = true;
  }

  async function markRead(ids: string[]): Promise<void> {
    try {
      await context.api.markInboxRead(ids);
      markLocally(ids);
      render();
    } catch (error) {
      context.toast(errorText(error), 'error');
    }
  }

  markAll.addEventListener('click', async () => {
    try {
      await withBusy(markAll, 'Marking…', () => context.api.markInboxRead());
      markLocally(undefined);
      render();
    } catch (error) {
      context.toast(errorText(error), 'error');
    }
  });
  clear.addEventListener('click', async () => {
    if (!confirm('Clear the inbox? Every item is removed.')) return;
    try {
      await withBusy(clear, 'Clearing…', () => context.api.clearInbox());
      if (context.state.snapshot) context.state.snapshot.inbox = [];
      render();
      context.toast('Inbox cleared');
    } catch (error) {
      context.toast(errorText(error), 'error');
    }
  });

  // Clicking (or pressing Enter on) an item marks it read; a link inside goes on to the run.
  list.addEventListener('click', (event) => {
    const item = (event.target as HTMLElement).closest<HTMLElement>('[data-id]');
    if (item && item.dataset.unread === 'true') void markRead([item.dataset.id!]);
  });

  function render(): void {
    const all = items();
    const unread = all.filter((item) => !item.read).length;
    markAll.disabled = unread === 0;
    clear.disabled = all.length === 0;
    if (all.length === 0) {
      replace(list, h('li', { class: 'empty inbox-empty' },
        h('p', {}, 'Nothing needs your attention.'),
        h('p', { class: 'meta' }, 'Finished runs, approvals and errors show here. ', h('a', { href: '#/channels' }, 'Add a channel'), ' to be told on your phone too.')));
      return;
    }
    replace(list, all.map((item) => {
      const kind = kindGlyphs[item.kind] ?? { glyph: '•', label: item.kind, className: '' };
      const title = item.runId
        ? h('a', { href: `#/runs/${encodeURIComponent(item.runId)}`, class: 'inbox-title' }, item.title)
        : h('button', { type: 'button', class: 'inbox-title link-button', ...(item.read ? { 'aria-disabled': 'true' } : {}) }, item.title);
      return h('li', { class: item.read ? 'inbox-item' : 'inbox-item unread', 'data-id': item.id, 'data-unread': String(!item.read) },
        h('span', { class: `inbox-glyph ${kind.className}`, title: kind.label, 'aria-label': kind.label, role: 'img' }, kind.glyph),
        h('div', { class: 'inbox-text' },
          h('div', { class: 'inbox-head' },
            item.read ? null : h('span', { class: 'unread-dot', title: 'Unread', 'aria-label': 'Unread', role: 'img' }),
            title),
          item.body ? h('p', { class: 'inbox-body' }, preview(item.body)) : null),
        h('span', { class: 'meta inbox-time' }, timeElement(item.at)));
    }));
  }

  render();
  return { element, update: render };
};
